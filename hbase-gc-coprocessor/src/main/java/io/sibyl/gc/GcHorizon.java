package io.sibyl.gc;

import io.sibyl.client.oracle.CommitReplica;
import io.sibyl.client.oracle.HistoryPoint;
import io.sibyl.protocol.AbortedRange;
import io.sibyl.protocol.Timestamps;

import java.util.List;
import java.util.function.LongSupplier;

/**
 * What one flush or compaction knows about writers: the oracle connection's replica and a low watermark the oracle
 * reported (every running or later transaction starts at or above it). It sorts a version, by its writer's start
 * timestamp, into what the collector may do with it; anything it cannot prove is {@link Verdict#KEEP}.
 */
final class GcHorizon {
    /** What a version's writer allows. */
    enum Verdict {
        /** Unknown, running, or committed at or after the watermark: keep it, and it hides nothing older. */
        KEEP,
        /** Aborted, and not running at the oracle any more (below the watermark): nobody reads it. */
        DROP,
        /** Committed before the watermark, commit known for sure: every snapshot reads it or something newer. */
        SHADOWS,
        /**
         * Below T_max, not aborted, no commit timestamp held: committed, either after the connection began (the
         * replica then dropped the commit only once T_max reached it) or before (so below T_init); both bounds are
         * below the watermark. Unless it is an aborted writer the oracle forgot after its client deleted its
         * versions, whose version a delete marker in another file or in the memstore still hides: so it shadows only
         * if HBase still returns it.
         */
        SHADOWS_IF_LIVE
    }

    private final CommitReplica replica;
    private final long lowWatermark;
    /**
     * Every commit the replica dropped had its commit timestamp at or below this, or below a watermark the oracle
     * reported (the collector registers its watermark as a reader of the replica: {@code OracleLink.hold}). Read
     * after the replica, each time: a registration that ends raises it first.
     */
    private final LongSupplier droppedAtOrBelow;
    /**
     * The replica's ranges when this flush or compaction began. A range the oracle forgets meanwhile (FORGET_RANGE,
     * after the sweeper deleted its in-doubt versions) is still applied here: its in-doubt writers are dropped, which
     * is what the sweep did anyway.
     */
    private final List<AbortedRange> ranges;

    /**
     * The oldest point of the past the oracle keeps for reads of the past, when it is below the low watermark; null
     * otherwise. Versions are then judged by what that point's snapshot sees: what it sees, every later snapshot
     * sees too (or something newer).
     */
    private final HistoryPoint history;

    GcHorizon(CommitReplica replica, long lowWatermark, LongSupplier droppedAtOrBelow) {
        this(replica, lowWatermark, droppedAtOrBelow, null);
    }

    private GcHorizon(CommitReplica replica, long lowWatermark, LongSupplier droppedAtOrBelow, HistoryPoint history) {
        this.replica = replica;
        this.lowWatermark = lowWatermark;
        this.droppedAtOrBelow = droppedAtOrBelow;
        this.ranges = replica.abortedRanges();
        this.history = history;
    }

    /**
     * This horizon, also keeping what reads of the past at {@code oldest} (the oldest point the oracle keeps, asked
     * on this horizon's connection after the replica's state) and later read; {@code null}: no reads of the past.
     */
    GcHorizon keeping(HistoryPoint oldest) {
        if (oldest == null || oldest.snapshotTs() >= lowWatermark) {
            return this; // every point is at or above the watermark: what the watermark keeps, they read
        }
        return new GcHorizon(replica, lowWatermark, droppedAtOrBelow, oldest);
    }

    /** The replica this horizon reads (tests look at what it holds). */
    CommitReplica replica() {
        return replica;
    }

    long lowWatermark() {
        return lowWatermark;
    }

    Verdict judge(long writerTs) {
        if (history != null) {
            return judgeAtPoint(writerTs);
        }
        if (Timestamps.isSelfCommitted(writerTs)) {
            return writerTs < lowWatermark ? Verdict.SHADOWS : Verdict.KEEP; // committed at its own version
        }
        // T_max first: a replica that has T_max above a writer has applied the writer's COMMIT or ABORT (the oracle
        // aborts a running writer before announcing a T_max past it), so "not committed, not aborted" below it
        // means committed long ago or forgotten after clean-up, never "running" or "not heard of yet".
        long tMaxBefore = replica.tMax();
        long commitTs = replica.commitTimestampOf(writerTs);
        if (commitTs != 0) {
            return commitTs < lowWatermark ? Verdict.SHADOWS : Verdict.KEEP;
        }
        if (replica.isAborted(writerTs)) {
            return dropIfNotRunning(writerTs);
        }
        for (AbortedRange r : ranges) {
            if (r.covers(writerTs)) {
                if (r.isCommitted(writerTs)) {
                    return r.to() < lowWatermark ? Verdict.SHADOWS : Verdict.KEEP; // committed at or before `to`
                }
                return r.committedKnown() ? dropIfNotRunning(writerTs) : Verdict.KEEP;
            }
        }
        // A commit the replica dropped was below a watermark, or at or below droppedAtOrBelow (before the collector
        // held the replica at its watermark), or, read T_max again, at or below the T_max of the moment it was
        // trimmed. Any watermark will do: every transaction running then or later reads the commit. A commit before
        // T_init never reached this replica and may lie above T_max (a conflict-table eviction can raise T_max past a
        // start whose commit is later), so T_init must be at or below the watermark too.
        if (writerTs < tMaxBefore && (droppedAtOrBelow.getAsLong() < lowWatermark || replica.tMax() < lowWatermark)
                && replica.tInit() <= lowWatermark) {
            return Verdict.SHADOWS_IF_LIVE;
        }
        return Verdict.KEEP;
    }

    /**
     * Judges by what the snapshot at the oldest point of the past sees: it is below the watermark, so a version it
     * sees every running and later snapshot sees too, or a newer one. The point lists the writers running then, so a
     * writer below its clock not in the list had finished: committed unless it aborted, and an aborted one the
     * oracle forgot was deleted first (so it shadows only if HBase still returns it). No commit timestamp is needed.
     */
    private Verdict judgeAtPoint(long writerTs) {
        long pointTs = history.snapshotTs();
        if (Timestamps.isSelfCommitted(writerTs)) {
            return writerTs < pointTs ? Verdict.SHADOWS : Verdict.KEEP;
        }
        long commitTs = replica.commitTimestampOf(writerTs);
        if (commitTs != 0) {
            return commitTs <= pointTs ? Verdict.SHADOWS : Verdict.KEEP;
        }
        if (replica.isAborted(writerTs)) {
            return dropIfNotRunning(writerTs);
        }
        for (AbortedRange r : ranges) {
            if (r.covers(writerTs)) {
                if (r.isCommitted(writerTs)) {
                    return r.to() <= pointTs ? Verdict.SHADOWS : Verdict.KEEP;
                }
                return r.committedKnown() ? dropIfNotRunning(writerTs) : Verdict.KEEP;
            }
        }
        return history.judge(writerTs) == HistoryPoint.Judgement.UNLESS_ABORTED ? Verdict.SHADOWS_IF_LIVE
                : Verdict.KEEP;
    }

    /**
     * An aborted writer still counted as running at the oracle (T_max aborted it, its client has not finished it) may
     * still read its own writes; below the watermark it is not.
     */
    private Verdict dropIfNotRunning(long writerTs) {
        return writerTs < lowWatermark ? Verdict.DROP : Verdict.KEEP;
    }
}
