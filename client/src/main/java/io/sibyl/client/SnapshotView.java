package io.sibyl.client;

import io.sibyl.client.oracle.CommitReplica;
import io.sibyl.client.oracle.HistoryPoint;
import io.sibyl.client.oracle.LocalSnapshots;
import io.sibyl.client.oracle.OracleClient;
import io.sibyl.client.oracle.OracleConnection;
import io.sibyl.client.oracle.OracleException;
import io.sibyl.client.oracle.TransactionStatus;
import io.sibyl.client.oracle.Visibility;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * One transaction's snapshot: which versions it sees (the replica of the connection it began on, and the oracle for
 * writers the replica cannot judge), and for how long what HBase returns can still be trusted to hold them (the read
 * window after the oracle was last heard, the oracle's transaction.max.age.ms). Three kinds of snapshot
 * ({@link Mode}): at a start timestamp from the oracle, at a timestamp taken from the replica, and "now" for one row.
 */
final class SnapshotView {
    /** Which versions a snapshot sees. */
    enum Mode {
        /** Committed before the start timestamp the oracle gave, plus the transaction's own (version = start). */
        AT_START,
        /** Committed at or below a timestamp taken from the replica ({@link LocalSnapshots}); nothing of its own. */
        FROM_REPLICA,
        /**
         * Committed at all, as far as the replica or else the oracle knows when asked: a row's latest state. A writer
         * the oracle had to be asked about may have committed while the read ran, after the read fetched a version it
         * then overwrote (a transaction may write a cell twice): {@link #sawCommitDuringRead} tells the reader to read
         * again.
         */
        LATEST,
        /**
         * The state at a timestamp of the past ({@link TransactionManager#beginAt}), as a {@link HistoryPoint} of the
         * oracle gives it; nothing of its own.
         */
        PAST
    }


    /**
     * A batch of writes is sent only with at least this long left in the read window (less if the window is shorter
     * than ten times this): HBase could hardly finish it in less, and would then give up with part of it written.
     */
    static final long MIN_WRITE_MILLIS = 100;

    private final Transaction tx;
    /** The connection the transaction began on: its replica holds this snapshot, even after a failover. */
    private final OracleClient begunOn;
    /** Where the oracle that serves now is found, for questions after {@link #begunOn} was lost. */
    private final OracleConnection oracle;
    private final long startTs;
    private final Mode mode;
    /** Versions of writers committed below this are visible ({@link Mode#LATEST}: unused). */
    private final long readerTs;
    /** What holds a {@link Mode#FROM_REPLICA} snapshot at the oracle; null for the other modes. */
    private final LocalSnapshots.Lease lease;
    /** {@link Mode#PAST}: where it reads; null for the other modes. */
    private final HistoryPoint point;
    /** {@link Mode#PAST}: its registration with the replica ({@link CommitReplica#pastReaderBegins}). */
    private final long pastReaderToken;
    /** The age at which the transaction ends (nanoseconds; 0: none). */
    private final long maxAgeNanos;
    private final long oracleTimeoutMillis;
    /** {@link Mode#LATEST}: the replica's T_max and highest decided timestamp before the read fetched anything. */
    private final long tMaxBefore;
    private final long decidedBefore;
    /** {@link Mode#LATEST}: a version was taken whose writer was not known to have committed before the read. */
    private volatile boolean committedDuringRead;
    /** When the start timestamp arrived: protection ends for good after a silence of the oracle since then. */
    private final long begunAtNanos;
    /**
     * When the oracle's transaction.max.age.ms runs out for this transaction (counted from before the begin was sent,
     * so never after the oracle's own count ends), if {@link #hasMaxAge}: no read or write after that.
     */
    private final long expiresAtNanos;
    private final boolean hasMaxAge;
    /** Answers of the oracle for writers the local replica could not judge (they never change for this snapshot). */
    private final Map<Long, Boolean> askedOracle = new ConcurrentHashMap<>();

    /** A snapshot at the start timestamp of {@code tx}, which the oracle gave in reply to a begin sent then. */
    SnapshotView(Transaction tx, OracleClient begunOn, OracleConnection oracle, long oracleTimeoutMillis,
                 long beginSentNanos) {
        this(tx, begunOn, oracle, oracleTimeoutMillis, beginSentNanos, Mode.AT_START, tx.getStartTimestamp(), null,
                null, 0);
    }

    /**
     * The state at {@code point}'s bound, which the oracle answered on {@code begunOn} to a history query sent at
     * {@code sentNanos}; the caller registered a read of the past with its replica as {@code pastReaderToken}.
     */
    static SnapshotView past(Transaction tx, OracleClient begunOn, OracleConnection oracle, long oracleTimeoutMillis,
                             HistoryPoint point, long pastReaderToken, long sentNanos) {
        return new SnapshotView(tx, begunOn, oracle, oracleTimeoutMillis, sentNanos, Mode.PAST, point.bound() + 1,
                null, point, pastReaderToken);
    }

    /** The snapshot {@code lease} took from the replica of {@code begunOn} (the start timestamp of {@code tx}). */
    static SnapshotView fromReplica(Transaction tx, OracleClient begunOn, OracleConnection oracle,
                                    long oracleTimeoutMillis, LocalSnapshots.Lease lease) {
        return new SnapshotView(tx, begunOn, oracle, oracleTimeoutMillis, lease.heldSinceNanos(), Mode.FROM_REPLICA,
                lease.snapshotTs() + 1, lease, null, 0);
    }

    /** The latest committed state, for one row read now. */
    static SnapshotView latest(Transaction tx, OracleClient begunOn, OracleConnection oracle,
                               long oracleTimeoutMillis) {
        return new SnapshotView(tx, begunOn, oracle, oracleTimeoutMillis, System.nanoTime(), Mode.LATEST,
                Long.MAX_VALUE, null, null, 0);
    }

    private SnapshotView(Transaction tx, OracleClient begunOn, OracleConnection oracle, long oracleTimeoutMillis,
                         long beginSentNanos, Mode mode, long readerTs, LocalSnapshots.Lease lease,
                         HistoryPoint point, long pastReaderToken) {
        this.tx = tx;
        this.begunOn = begunOn;
        this.oracle = oracle;
        this.startTs = tx.getStartTimestamp();
        this.mode = mode;
        this.readerTs = readerTs;
        this.lease = lease;
        this.point = point;
        this.pastReaderToken = pastReaderToken;
        this.oracleTimeoutMillis = oracleTimeoutMillis;
        this.tMaxBefore = begunOn.replica().tMax();
        this.decidedBefore = begunOn.replica().highestTimestampApplied();
        this.begunAtNanos = System.nanoTime();
        long maxAge = begunOn.transactionMaxAgeNanos();
        if (mode == Mode.PAST && maxAge == 0) {
            maxAge = CommitReplica.PAST_READ_MAX_NANOS; // the oracle keeps the point as long
        }
        this.maxAgeNanos = maxAge;
        this.hasMaxAge = maxAge != 0;
        this.expiresAtNanos = beginSentNanos + maxAge; // System.nanoTime may be negative: no 0 sentinel
    }

    /** The oracle connection the transaction began on (closed after a failover). */
    OracleClient begunOn() {
        return begunOn;
    }

    /**
     * The snapshot is no longer read: a transaction begun at the oracle sends a one-way finish, one taken from the
     * replica lets its anchor go, a latest read has nothing to end.
     */
    void finish() {
        switch (mode) {
            case AT_START -> begunOn.finish(startTs);
            case FROM_REPLICA -> lease.release();
            case PAST -> begunOn.replica().pastReaderEnds(pastReaderToken);
            case LATEST -> {
            }
        }
    }

    /** Is the version written by the transaction that started at {@code writerTs} in this snapshot? */
    boolean sees(long writerTs) throws IOException {
        Visibility v;
        switch (mode) {
            case AT_START -> {
                if (writerTs == startTs) {
                    return true; // its own
                }
                if (writerTs > startTs) {
                    return false;
                }
                v = begunOn.replica().inSnapshot(writerTs, startTs);
            }
            case FROM_REPLICA -> {
                if (writerTs >= readerTs) {
                    return false; // started after the snapshot, so commits after it
                }
                v = begunOn.replica().inSnapshot(writerTs, readerTs);
            }
            case PAST -> {
                switch (point.judge(writerTs)) {
                    case VISIBLE -> {
                        return true;
                    }
                    case INVISIBLE -> {
                        return false;
                    }
                    default -> v = begunOn.replica().pastVisibility(writerTs); // finished before the point
                }
            }
            default -> v = begunOn.replica().committedBefore(writerTs, tMaxBefore, decidedBefore);
        }
        if (v != Visibility.ASK_ORACLE) {
            return v == Visibility.VISIBLE;
        }
        Boolean known = askedOracle.get(writerTs);
        if (known != null) {
            return known;
        }
        boolean answer;
        try {
            // The connection most likely to answer reads here (the reply may come on another after a failover).
            OracleClient reading = begunOn.isOpen() ? begunOn : oracle.lastConnected();
            answer = reading.await(askOracle(writerTs), TimeUnit.MILLISECONDS.toNanos(oracleTimeoutMillis));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while asking the oracle about version " + writerTs);
        } catch (ExecutionException | OracleException e) {
            Throwable cause = e instanceof ExecutionException ? e.getCause() : e;
            if (cause instanceof SnapshotExpiredException expired) {
                throw expired;
            }
            throw new IOException("cannot tell whether version " + writerTs + " is in the snapshot of transaction "
                    + startTs + ": " + cause.getMessage(), cause);
        } catch (TimeoutException e) {
            throw new IOException("the oracle did not answer a commit query for version " + writerTs + " within "
                    + oracleTimeoutMillis + " ms");
        }
        askedOracle.put(writerTs, answer);
        if (answer && mode == Mode.LATEST) {
            committedDuringRead = true;
        }
        return answer;
    }

    /**
     * {@link Mode#LATEST}: true if the read took a version whose writer the oracle had to confirm (it may have
     * committed during the read, after overwriting what was fetched): the row must be read again, when that writer is
     * known to have committed before the new read began.
     */
    boolean sawCommitDuringRead() {
        return committedDuringRead;
    }

    /**
     * Asks the oracle about a writer older than the connection this transaction began on. After a failover that
     * connection is gone and the question goes to the current oracle, which knows every decision from the journal;
     * its frozen replica still holds every commit before this snapshot that it learnt after it connected, so a
     * writer it does not know committed, if at all, either before it connected (visible) or after this snapshot
     * began, which the commit timestamp in the answer tells apart.
     */
    private CompletableFuture<Boolean> askOracle(long writerTs) {
        if (mode == Mode.PAST) {
            // It finished before the point: if it committed at all, it committed before it.
            OracleClient asked = begunOn.isOpen() ? begunOn : oracle.current();
            return asked.query(writerTs).thenApply(TransactionStatus::isCommitted);
        }
        if (mode == Mode.LATEST) {
            // Committed by now (perhaps since the read began: then no other writer of the row committed between the
            // fetch and that commit, since they would conflict, so the row's state just after it is what was read).
            OracleClient asked = begunOn.isOpen() ? begunOn : oracle.current();
            return asked.query(writerTs).thenApply(status -> {
                if (status.isCommitted()) {
                    asked.replica().rememberCommittedBeforeInit(writerTs);
                    return true;
                }
                return false;
            });
        }
        if (begunOn.isOpen()) {
            // Lost while asking: ask the oracle that took over instead.
            return begunOn.inSnapshot(writerTs, readerTs).exceptionallyCompose(e -> begunOn.isOpen()
                    ? CompletableFuture.failedFuture(e) : askCurrentOracle(writerTs));
        }
        return askCurrentOracle(writerTs);
    }

    private CompletableFuture<Boolean> askCurrentOracle(long writerTs) {
        return oracle.current().query(writerTs).thenApply(status -> switch (status.state()) {
            case COMMITTED -> status.commitTimestamp() < readerTs;
            // Committed at or below the current oracle's T_max, which kept rising after this connection was lost:
            // the commit may have come before this snapshot or after it, and nothing left can tell.
            case COMMITTED_LONG_AGO -> throw new CompletionException(new SnapshotExpiredException(tx,
                    "version " + writerTs + " committed, but the oracle no longer knows when, and this transaction's"
                            + " oracle connection was lost before it could learn whether that was before its"
                            + " snapshot"));
            default -> false;
        });
    }

    /**
     * Throws unless what was just fetched from HBase was read while garbage collection still spared this snapshot:
     * after the oracle connection is lost, only for a while ({@link OracleClient#snapshotsProtected()}).
     */
    void checkReadable() throws SnapshotExpiredException {
        if (!begunOn.snapshotsProtected(begunAtNanos)) {
            throw new SnapshotExpiredException(tx, begunOn.millisSinceHeard(), begunOn.readWindowMillis());
        }
        checkYoungEnough();
    }

    /** Throws once the oracle's max age ended this transaction (the oracle aborts it then). */
    void checkYoungEnough() throws SnapshotExpiredException {
        if (outlivedMaxAge()) {
            throw tooOld();
        }
    }

    /** True if the transaction outlived the oracle's transaction.max.age.ms (the oracle aborts it). */
    boolean outlivedMaxAge() {
        return nanosToMaxAge() <= 0;
    }

    /** Nanoseconds until the oracle's max age ends this transaction ({@link Long#MAX_VALUE}: no max age). */
    private long nanosToMaxAge() {
        return hasMaxAge ? expiresAtNanos - System.nanoTime() : Long.MAX_VALUE;
    }

    private SnapshotExpiredException tooOld() {
        return SnapshotExpiredException.tooOld(tx, maxAgeNanos / 1_000_000L);
    }

    /**
     * How long HBase may take over a batch of this transaction's writes sent now, retries included, in milliseconds:
     * the time left in its read window ({@link OracleClient#nanosLeftInReadWindow}), or {@link TableWrites#NO_CAP}
     * while there is no window (before the oracle's HELLO). Writes are cut off like reads, before each table's batch,
     * and a batch is not sent, nor retried by HBase, past the cut-off: a dead client's versions must all be in HBase
     * before the oracle's hold on its transactions ends, or a clean-up of aborted versions could miss them (docs/gc.md,
     * "Aborted transactions of dead clients"). With less than a small floor left the write fails without being sent.
     */
    int writeTimeoutCap() throws SnapshotExpiredException {
        long toMaxAge = nanosToMaxAge();
        if (toMaxAge < MIN_WRITE_MILLIS * 1_000_000L) {
            throw tooOld();
        }
        long leftNanos = Math.min(begunOn.nanosLeftInReadWindow(begunAtNanos), toMaxAge);
        if (leftNanos == Long.MAX_VALUE) {
            return TableWrites.NO_CAP;
        }
        long windowMillis = begunOn.readWindowMillis();
        long floorMillis = Math.max(1, Math.min(MIN_WRITE_MILLIS, windowMillis / 10));
        long leftMillis = leftNanos / 1_000_000L;
        if (leftMillis < floorMillis) {
            throw SnapshotExpiredException.forWrite(tx, begunOn.millisSinceHeard(), windowMillis, floorMillis);
        }
        return (int) Math.min(Integer.MAX_VALUE, leftMillis);
    }
}
