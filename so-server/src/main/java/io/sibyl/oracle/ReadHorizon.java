package io.sibyl.oracle;

import io.sibyl.protocol.Timestamps;

import java.util.function.LongSupplier;

/**
 * How far back reads may still reach, which is what the garbage collector must keep readable: the low watermark (the
 * oldest snapshot a running transaction, or a reader the oracle lost, may read) and the points of the past kept for
 * reads of the past ({@code history.*}). It decides nothing; the sequencer thread owns it with {@link OracleState}.
 */
final class ReadHorizon {
    private final TimestampClock clock;
    private final RunningTransactions running;
    /** Floors for readers the oracle can no longer see; {@link OracleState} adds one when it loses a reader. */
    private final WatermarkHolds holds;
    private final LongSupplier nanoClock;
    /** Points of the past for reads of the past; disabled by default. */
    private final HistoryPoints history;
    /** Until then (nanoClock) the low watermark is 0, after a recovery; Long.MIN_VALUE for a fresh oracle. */
    private long recoveryHoldEndsNanos;

    /**
     * The horizon of an oracle whose clock starts at {@code clock.last()} (above 0: it recovered a journal, and holds
     * the watermark at 0 for {@code recoveryHoldMillis} or {@code reader.grace.ms}, whichever is longer).
     */
    ReadHorizon(OracleConfig config, long recoveryHoldMillis, TimestampClock clock, RunningTransactions running,
                WatermarkHolds holds, LongSupplier nanoClock) {
        this.clock = clock;
        this.running = running;
        this.holds = holds;
        this.nanoClock = nanoClock;
        // A read of the past lasts at most transaction.max.age.ms (an hour without one): its point is kept as long.
        history = new HistoryPoints(config.history(), config.transactionMaxAgeMillis() > 0
                ? config.transactionMaxAgeMillis() : 3_600_000L, System.currentTimeMillis());
        // Clients of the oracles before this one may still be reading snapshots that no oracle counts any more.
        recoveryHoldEndsNanos = clock.last() > 0
                ? nanoClock.getAsLong() + Math.max(recoveryHoldMillis, config.readerGraceMillis()) * 1_000_000L
                : Long.MIN_VALUE;
        if (history.enabled()) {
            history.start(clock.last(), nanoClock.getAsLong());
        }
    }

    /**
     * Oldest start timestamp any running transaction reads from (transactions T_max aborted count until they finish),
     * or the next timestamp when none runs: every running or future transaction starts at or above it, so it never
     * falls. A version shadowed by one committed below it can be dropped (docs/gc.md). For {@code reader.grace.ms}
     * after a connection is lost, its transactions still count; after a recovery, nothing can be dropped for as
     * long, since the readers of the oracles before are unknown ({@link WatermarkHolds}).
     */
    long lowWatermark() {
        long now = nanoClock.getAsLong();
        if (recoveryHoldEndsNanos != Long.MIN_VALUE) {
            if (now - recoveryHoldEndsNanos < 0) {
                return 0;
            }
            recoveryHoldEndsNanos = Long.MIN_VALUE;
        }
        return Math.min(running.oldest(clock.last() + 1), holds.floor(now, Long.MAX_VALUE));
    }

    /**
     * Before a commit or ticket decides: records a point of the past if one is due. The committer still runs, so the
     * point counts it as running, as every snapshot taken before its commit timestamp must.
     */
    void beforeCommit() {
        if (history.enabled()) {
            history.beforeCommit(clock.last(), running, nanoClock.getAsLong(), System.currentTimeMillis());
        }
    }

    /** The transaction that started at {@code startTs} committed at {@code commitTs}: reads of the past log it. */
    void afterCommit(long startTs, long commitTs) {
        if (history.enabled()) {
            history.afterCommit(startTs, commitTs, System.currentTimeMillis());
        }
    }

    /** A fast-path write took {@code ticket}: reads of the past log its version. */
    void afterTicket(long ticket) {
        if (history.enabled()) {
            // The write's version is ticket + 1: a snapshot at the ticket does not read it yet.
            history.afterTicket(Timestamps.selfCommittedVersion(ticket), System.currentTimeMillis());
        }
    }

    /**
     * Where a read of the past at timestamp {@code ts} reads ({@link HistoryPoints#atTimestamp}); a refusal says why
     * it cannot, and how to fix it.
     */
    HistoryPoints.Answer historyAtTimestamp(long ts) {
        return history.atTimestamp(ts, clock.last(), running, nanoClock.getAsLong(), System.currentTimeMillis());
    }

    /** Where a read of the past at wall-clock time {@code millis} reads ({@link HistoryPoints#atTime}). */
    HistoryPoints.Answer historyAtTime(long millis) {
        return history.atTime(millis, clock.last(), running, nanoClock.getAsLong(), System.currentTimeMillis());
    }

    /** The oldest point of the past kept, which garbage collection must keep readable; null if none. */
    HistoryPoints.Point oldestHistoryPoint() {
        return history.enabled() ? history.oldestKept(nanoClock.getAsLong()) : null;
    }

    /** Points of the past kept, and their heap bytes (metrics). */
    long[] historyFigures() {
        return new long[] {history.size(), history.bytes()};
    }
}
