package io.sibyl.oracle;

import io.sibyl.protocol.DecisionBlockWriter;
import io.sibyl.protocol.Wire;

/**
 * The status oracle's decisions (paper Algorithms 3 and 4 plus the aborted / uncommitted lists): timestamps,
 * bounded write-write conflict detection, T_max, the low watermark and the clean-up protocol. Every decision is
 * also written, in order, to the current decision block, which the caller journals and replicates.
 *
 * <p>Single-threaded by design: the sequencer thread owns it, so nothing here locks or allocates per request.
 */
public final class OracleState {
    /** Result of {@link #commit} when the write set conflicts with a transaction that committed after it started. */
    public static final long CONFLICT = -Wire.ABORT_CONFLICT;
    /** Result of {@link #commit} when T_max passed the transaction (its conflicts can no longer be checked). */
    public static final long TOO_OLD = -Wire.ABORT_TOO_OLD;
    /** Result of {@link #commit} when the transaction was already aborted (by its client or on disconnect). */
    public static final long ALREADY_ABORTED = -Wire.ABORT_ALREADY_ABORTED;
    /** Result of {@link #commit} when the start timestamp is of no transaction the oracle knows. */
    public static final long UNKNOWN = -100;
    /** Result of {@link #begin} when the running-transaction limit is reached. */
    public static final long OVERLOADED = -101;

    private final ConflictTable conflicts;
    private final RecentCommits commits;
    private final RunningTransactions running;
    private final AbortedTransactions aborted = new AbortedTransactions();
    private final DecisionBlockWriter block = new DecisionBlockWriter();
    private final long reservationBlock;
    private final RunningTransactions.TimestampSink recordAbort = this::recordAbort;
    private final RunningTransactions.TimestampSink recordForget = block::forget;

    private long clock;
    private long reservedUpTo;
    private long tMax;
    private long announcedTmax;
    private long commitCount;
    /** Consumes {@link ConflictTable#prefetch}'s result so the JIT cannot drop the loads. */
    private long prefetchSink;
    private long abortCount;

    public OracleState(OracleConfig config) {
        this(config, 0, 0);
    }

    /** Starts after recovery: every timestamp handed out will exceed {@code lastTimestamp}. */
    public OracleState(OracleConfig config, long lastTimestamp, long recoveredTmax) {
        conflicts = new ConflictTable(config.conflictTableRows());
        commits = new RecentCommits(config.recentCommitsCapacity());
        running = new RunningTransactions(config.maxRunningTransactions());
        reservationBlock = config.timestampReservationBlock();
        clock = lastTimestamp;
        reservedUpTo = lastTimestamp;
        tMax = recoveredTmax;
        announcedTmax = recoveredTmax;
        block.start(clock);
    }

    private long nextTimestamp() {
        long ts = ++clock;
        if (ts > reservedUpTo) {
            reservedUpTo = ts + reservationBlock;
            if (reservedUpTo >= DecisionBlockWriter.MAX_TIMESTAMP) {
                throw new IllegalStateException("timestamp space exhausted");
            }
            block.reserve(reservedUpTo);
        }
        return ts;
    }

    /**
     * Hands out a start timestamp and registers the transaction as running on behalf of {@code owner}. Returns
     * {@link #OVERLOADED} when {@code max.running.transactions} are running: evicting one would silently break its
     * snapshot, so the new transaction is refused instead.
     */
    public long begin(int owner) {
        if (running.isFull()) {
            return OVERLOADED;
        }
        long ts = nextTimestamp();
        running.add(ts, owner);
        return ts;
    }

    /**
     * Algorithm 3: commits {@code count} rows of {@code rowIds} for the transaction started at {@code startTs}.
     * Returns the commit timestamp, or one of the negative codes above.
     */
    public long commit(long startTs, long[] rowIds, int count) {
        int state = running.finish(startTs);
        if (state != RunningTransactions.RUNNING) {
            if (state == RunningTransactions.ABORTED_BY_TMAX) {
                return TOO_OLD;
            }
            long previous = commits.commitTsOf(startTs);
            if (previous != 0) {
                return previous; // a retried commit: answer what was decided
            }
            // Not running, not aborted, commit timestamp not remembered: it may have committed before T_max, so
            // "too old" could be a lie; the client must ask with a commit query.
            return aborted.contains(startTs) ? ALREADY_ABORTED : UNKNOWN;
        }
        if (startTs < tMax) {
            recordAbort(startTs);
            return TOO_OLD;
        }
        prefetchSink += conflicts.prefetch(rowIds, count);
        for (int i = 0; i < count; i++) {
            if (conflicts.lastCommit(rowIds[i]) > startTs) {
                recordAbort(startTs);
                return CONFLICT;
            }
        }
        if (count == 0) {
            return startTs; // wrote nothing: nothing to order, nothing for readers to resolve
        }
        long commitTs = nextTimestamp();
        for (int i = 0; i < count; i++) {
            conflicts.record(rowIds[i], commitTs);
        }
        if (commits.isFull()) {
            tMax = Math.max(tMax, commits.oldestCommitTs());
            commits.trimTo(tMax);
        }
        tMax = Math.max(tMax, conflicts.tMax());
        commits.add(startTs, commitTs);
        block.commit(startTs, commitTs);
        commitCount++;
        return commitTs;
    }

    /** The client gives up {@code startTs}. Returns false if it was not running (already finished or unknown). */
    public boolean abort(long startTs) {
        int state = running.finish(startTs);
        if (state == RunningTransactions.RUNNING) {
            recordAbort(startTs);
            return true;
        }
        return state == RunningTransactions.ABORTED_BY_TMAX;
    }

    /** A transaction that wrote nothing finished; it leaves the running set without any record. */
    public void finish(long startTs) {
        if (running.finish(startTs) == RunningTransactions.ABORTED_BY_TMAX) {
            // It wrote nothing, so there is nothing to clean up: start the forgetting clock now.
            aborted.cleanedUp(startTs, clock);
        }
    }

    /** The client removed every version {@code startTs} wrote. Returns false if it is not an aborted transaction. */
    public boolean cleanedUp(long startTs) {
        return aborted.cleanedUp(startTs, clock);
    }

    /** Every transaction of a client that went away is aborted. */
    public void disconnect(int owner) {
        running.finishAllOf(owner, recordAbort);
    }

    /** Status of the transaction that started at {@code ts}, as a {@code Wire.STATUS_*} code. */
    public byte status(long ts) {
        if (commits.commitTsOf(ts) != 0) {
            return Wire.STATUS_COMMITTED;
        }
        if (aborted.contains(ts)) {
            return Wire.STATUS_ABORTED;
        }
        if (running.stateOf(ts) == RunningTransactions.RUNNING) {
            return Wire.STATUS_RUNNING;
        }
        return ts < tMax ? Wire.STATUS_COMMITTED_LONG_AGO : Wire.STATUS_UNKNOWN;
    }

    /** Commit timestamp of {@code ts} if the oracle still remembers it, else 0. */
    public long commitTimestampOf(long ts) {
        return commits.commitTsOf(ts);
    }

    private void recordAbort(long ts) {
        if (aborted.add(ts)) {
            block.abort(ts);
            abortCount++;
        }
    }

    /**
     * Closes the current block: aborts what T_max passed, forgets cleaned-up aborts no reader can need, announces
     * T_max, and returns the encoded block (or null if nothing was decided). The next block starts at once.
     */
    public byte[] sealBlock() {
        if (tMax > announcedTmax) {
            running.abortStartedBefore(tMax, recordAbort);
            commits.trimTo(tMax);
            block.tMax(tMax);
            announcedTmax = tMax;
        }
        aborted.forgetReportedBefore(lowWatermark(), recordForget);
        if (block.isEmpty()) {
            return null;
        }
        byte[] sealed = block.seal();
        block.start(clock);
        return sealed;
    }

    /** Records in the block being built; callers seal when it grows large. */
    public int pendingRecords() {
        return block.records();
    }

    /** Oldest start timestamp any running transaction reads from; versions below it that are shadowed can be dropped. */
    public long lowWatermark() {
        return running.oldest(clock + 1);
    }

    /** Last timestamp handed out. */
    public long clock() {
        return clock;
    }

    public long tMax() {
        return tMax;
    }

    /** Calls {@code sink} with every aborted transaction (for a new connection's handshake). */
    public void forEachAborted(RunningTransactions.TimestampSink sink) {
        aborted.forEach(sink);
    }

    public int abortedCount() {
        return aborted.size();
    }

    /** Transactions started and not finished. */
    public int runningCount() {
        return running.live();
    }

    public int maxRunning() {
        return running.capacity();
    }

    public int recentCommitCount() {
        return commits.size();
    }

    public long commits() {
        return commitCount;
    }

    public long aborts() {
        return abortCount;
    }
}
