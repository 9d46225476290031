package io.sibyl.oracle;

import io.sibyl.oracle.journal.Checkpoint;
import io.sibyl.protocol.AbortedRange;
import io.sibyl.protocol.DecisionBlockWriter;
import io.sibyl.protocol.Wire;

import java.util.List;
import java.util.function.LongSupplier;

/**
 * The status oracle's decisions (paper Algorithms 3 and 4 plus the aborted / uncommitted lists): timestamps from
 * {@link TimestampClock}, bounded write-write conflict detection, T_max, aborts kept by {@link AbortedRecords} until
 * their clean-up, and the low watermark of {@link ReadHorizon}. Every decision is also written, in order, to the
 * current decision block, which the caller journals and replicates.
 *
 * <p>Single-threaded by design: the sequencer thread owns it, so nothing here locks or allocates per request.
 */
public final class OracleState {
    private static final long[] NONE = new long[0];
    // The results of begin and commit that are not timestamps: see Decision, where each is explained.
    public static final long CONFLICT = Decision.CONFLICT.code;
    public static final long TOO_OLD = Decision.TOO_OLD.code;
    public static final long ALREADY_ABORTED = Decision.ALREADY_ABORTED.code;
    public static final long READ_CONFLICT = Decision.READ_CONFLICT.code;
    public static final long UNKNOWN = Decision.UNKNOWN.code;
    public static final long OVERLOADED = Decision.OVERLOADED.code;
    public static final long OWNER_OVERLOADED = Decision.OWNER_OVERLOADED.code;
    public static final long ABORTED_SET_FULL = Decision.ABORTED_SET_FULL.code;
    public static final long IDENTITY_OVERLOADED = Decision.IDENTITY_OVERLOADED.code;

    private final ConflictTable conflicts;
    private final RecentCommits commits;
    private final RunningTransactions running;
    /** The aborted set and the aborted ranges of earlier recoveries, until their clean-up lets them go. */
    private final AbortedRecords aborted;
    /** Floors under the low watermark for the readers of lost connections and expired transactions. */
    private final WatermarkHolds holds;
    /** transaction.max.age.ms: aborts the transactions that ran too long. */
    private final TransactionExpiry expiry;
    private final LongSupplier nanoClock;
    private final DecisionBlockWriter block = new DecisionBlockWriter();
    /** The last timestamp handed out, and the reservation journaled ahead of it. */
    private final TimestampClock clock;
    /** The low watermark and the points of the past: what reads may still reach. */
    private final ReadHorizon horizon;
    private final RunningTransactions.AbortSink recordAbort = this::recordAbort;
    /** The client behind each connection, and what it may abort or report cleaned up. */
    private final OwnerIdentities owners;

    private final DecisionCounters counts = new DecisionCounters();

    private long tMax;
    private long announcedTmax;
    /** Consumes {@link ConflictTable#prefetch}'s result so the JIT cannot drop the loads. */
    private long prefetchSink;

    /**
     * Heap bytes the fixed-size tables of an oracle with {@code config} take (conflict table, commit window, running
     * transactions); a recovery or a takeover needs them while it still holds the replayed journal.
     */
    public static long footprintBytes(OracleConfig config) {
        return ConflictTable.footprintBytes(config.conflictTableRows())
                + RecentCommits.footprintBytes(config.recentCommitsCapacity())
                + RunningTransactions.footprintBytes(config.maxRunningTransactions());
    }

    /** A fresh oracle with an empty history. */
    public OracleState(OracleConfig config) {
        this(config, System::nanoTime);
    }

    /** A fresh oracle that times {@code reader.grace.ms} on {@code nanoClock} (models drive time themselves). */
    public OracleState(OracleConfig config, LongSupplier nanoClock) {
        this(config, 0, 0, NONE, NONE, NONE, List.of(), 0, nanoClock);
    }

    /**
     * An oracle that continues a journal it recovered (see {@code RecoveredState#newOracleState}):
     * <ul>
     *   <li>the clock restarts at {@code lastTimestamp}: every timestamp it hands out exceeds every timestamp ever
     *       handed out (the first begin journals a new reservation);</li>
     *   <li>T_max is {@code recoveredTmax}, raised past the oldest commits if there are more than
     *       {@code recent.commits.capacity} of them (as when the window fills while running);</li>
     *   <li>the commits above T_max ({@code commitStarts} / {@code commitTimestamps}, ascending by commit timestamp)
     *       answer commit queries and retried commits; the aborted set is {@code abortedTs};</li>
     *   <li>the transactions that were running at the crash, which left no record, are aborted: this oracle adds the
     *       {@link AbortedRange} {@code (max(recoveredTmax, end of the newest earlier range), lastTimestamp]} less its
     *       commits, and writes it as an ABORT_RANGE record in its first block. {@code earlierRanges} are those of
     *       earlier recoveries (from the journal); the newest {@link AbortedRange#MAX_KEPT} are kept.</li>
     * </ul>
     * The conflict table starts empty: every transaction that can still commit starts above {@code lastTimestamp},
     * after every recovered commit, so no recovered commit can conflict with it.
     */
    public OracleState(OracleConfig config, long lastTimestamp, long recoveredTmax, long[] commitStarts,
                       long[] commitTimestamps, long[] abortedTs, List<AbortedRange> earlierRanges) {
        this(config, lastTimestamp, recoveredTmax, commitStarts, commitTimestamps, abortedTs, earlierRanges,
                config.readerGraceMillis(), System::nanoTime);
    }

    /**
     * As {@link #OracleState(OracleConfig, long, long, long[], long[], long[], List)}, holding the low watermark at 0
     * for {@code recoveryHoldMillis} instead of this oracle's own {@code reader.grace.ms}: the clients of the oracles
     * before it read for half of <em>their</em> grace period, which may have been longer.
     */
    public OracleState(OracleConfig config, long lastTimestamp, long recoveredTmax, long[] commitStarts,
                       long[] commitTimestamps, long[] abortedTs, List<AbortedRange> earlierRanges,
                       long recoveryHoldMillis) {
        this(config, lastTimestamp, recoveredTmax, commitStarts, commitTimestamps, abortedTs, earlierRanges,
                recoveryHoldMillis, System::nanoTime);
    }

    private OracleState(OracleConfig config, long lastTimestamp, long recoveredTmax, long[] commitStarts,
                        long[] commitTimestamps, long[] abortedTs, List<AbortedRange> earlierRanges,
                        long recoveryHoldMillis, LongSupplier nanoClock) {
        if (commitStarts.length != commitTimestamps.length) {
            throw new IllegalArgumentException(commitStarts.length + " start timestamps for "
                    + commitTimestamps.length + " commit timestamps");
        }
        if (recoveredTmax > lastTimestamp || lastTimestamp >= DecisionBlockWriter.MAX_TIMESTAMP) {
            throw new IllegalArgumentException("recovered T_max " + recoveredTmax + " above the last timestamp "
                    + lastTimestamp + " (or the last timestamp is out of range)");
        }
        conflicts = new ConflictTable(config.conflictTableRows());
        commits = new RecentCommits(config.recentCommitsCapacity());
        running = new RunningTransactions(config.maxRunningTransactions(), config.runningTransactionsPerConnection(),
                config.runningTransactionsPerIdentity());
        this.nanoClock = nanoClock;
        holds = new WatermarkHolds(config.readerGraceMillis());
        expiry = new TransactionExpiry(config.transactionMaxAgeMillis(), nanoClock);
        clock = new TimestampClock(lastTimestamp, config.timestampReservationBlock(), block);
        horizon = new ReadHorizon(config, recoveryHoldMillis, clock, running, holds, nanoClock);
        tMax = recoveredTmax;
        announcedTmax = recoveredTmax;
        block.start(clock.last());
        AbortedTransactions abortedSet = new AbortedTransactions();
        aborted = new AbortedRecords(abortedSet, abortedTs, new InDoubtRanges(recoveredTmax, lastTimestamp,
                earlierRanges, commitStarts, block), config.maxAbortedTransactions(), block);
        owners = new OwnerIdentities(running, abortedSet);
        tMax = commits.recover(commitStarts, commitTimestamps, recoveredTmax, lastTimestamp);
    }

    /**
     * Hands out a start timestamp and registers the transaction as running on behalf of {@code owner}. Returns
     * {@link #OWNER_OVERLOADED} when {@code owner} holds its quota of them, and {@link #OVERLOADED} when
     * {@code max.running.transactions} are running: evicting one would silently break its snapshot, so the new
     * transaction is refused instead. The owner's quota is checked first: a client that leaks transactions is told
     * so, rather than that the oracle is full.
     */
    public long begin(int owner) {
        if (running.ownerAtLimit(owner)) {
            counts.refusedBegins++;
            return OWNER_OVERLOADED;
        }
        if (running.identityAtLimit(owner)) {
            counts.refusedBegins++;
            return IDENTITY_OVERLOADED;
        }
        if (running.isFull()) {
            counts.refusedBegins++;
            return OVERLOADED;
        }
        if (aborted.isFull()) {
            counts.refusedBegins++;
            return ABORTED_SET_FULL;
        }
        long ts = clock.next();
        running.add(ts, owner);
        counts.begins++;
        return ts;
    }

    /**
     * Algorithm 3: commits {@code count} rows of {@code rowIds} for the transaction started at {@code startTs}.
     * Returns the commit timestamp, or one of the negative codes above.
     */
    public long commit(long startTs, long[] rowIds, int count) {
        return commit(startTs, rowIds, count, 0, 0);
    }

    /**
     * Algorithm 3 with certified reads (write-snapshot isolation, Yabandeh and Gomez Ferro, EuroSys 2012): the first
     * {@code writes} ids of {@code ids} are the rows written (checked for write-write conflicts and recorded), the
     * next {@code reads} the rows and range granules read (a commit to one of them after {@code startTs} aborts with
     * {@link #READ_CONFLICT}), and the last {@code granules} the range granules written (recorded only, so that a
     * later reader of the range sees this commit). With no reads and no granules it is {@link #commit(long, long[],
     * int)}.
     */
    public long commit(long startTs, long[] ids, int writes, int reads, int granules) {
        long[] rowIds = ids;
        int count = writes;
        if (count > 0) {
            horizon.beforeCommit();
        }
        int state = running.finish(startTs);
        if (state != RunningTransactions.RUNNING) {
            if (state == RunningTransactions.ABORTED_BY_TMAX) {
                return TOO_OLD;
            }
            if (state == RunningTransactions.ABORTED_ELSEWHERE) {
                return ALREADY_ABORTED;
            }
            long previous = commits.commitTsOf(startTs);
            if (previous != 0) {
                return previous; // a retried commit: answer what was decided
            }
            // Not running, not aborted, commit timestamp not remembered: it may have committed before T_max, so
            // "too old" could be a lie; the client must ask with a commit query. A transaction that was running when
            // an earlier oracle stopped is aborted.
            return aborted.contains(startTs) || aborted.isInDoubt(startTs) ? ALREADY_ABORTED : UNKNOWN;
        }
        int owner = running.lastFinishedOwner();
        if (startTs < tMax) {
            recordAbort(startTs, owner);
            counts.tooOldAborts++;
            return TOO_OLD;
        }
        prefetchSink += conflicts.prefetch(rowIds, count + reads);
        for (int i = 0; i < count; i++) {
            if (conflicts.lastCommit(rowIds[i]) > startTs) {
                recordAbort(startTs, owner);
                counts.conflictAborts++;
                return CONFLICT;
            }
        }
        for (int i = count; i < count + reads; i++) {
            if (conflicts.lastCommit(rowIds[i]) > startTs) {
                recordAbort(startTs, owner);
                counts.conflictAborts++;
                return READ_CONFLICT;
            }
        }
        if (count == 0) {
            return startTs; // wrote nothing: nothing to order, nothing for readers to resolve
        }
        long commitTs = clock.next();
        for (int i = 0; i < count; i++) {
            conflicts.record(rowIds[i], commitTs);
        }
        for (int i = count + reads; i < count + reads + granules; i++) {
            conflicts.record(rowIds[i], commitTs);
        }
        if (commits.isFull()) {
            tMax = Math.max(tMax, commits.oldestCommitTs());
            commits.trimTo(tMax);
        }
        tMax = Math.max(tMax, conflicts.tMax());
        commits.add(startTs, commitTs);
        block.commit(startTs, commitTs);
        counts.commits++;
        horizon.afterCommit(startTs, commitTs);
        return commitTs;
    }

    /**
     * A region server's single-row commit ({@link io.sibyl.protocol.Wire#TICKET}): the first {@code count} ids are
     * recorded as committed at a fresh timestamp, which is returned. A transaction that started before it and wrote one
     * of them, or read one (serializable), then aborts at its commit; one that starts after it sees the write, whose
     * version is just above the ticket. Nothing else is kept: the write is judged by its version alone.
     */
    public long ticket(long[] ids, int count) {
        horizon.beforeCommit();
        long ticket = clock.next();
        for (int i = 0; i < count; i++) {
            conflicts.record(ids[i], ticket);
        }
        tMax = Math.max(tMax, conflicts.tMax());
        counts.tickets++;
        horizon.afterTicket(ticket);
        return ticket;
    }

    /**
     * True if {@code startTs} is running (or aborted by T_max and not yet finished) on behalf of another owner (the
     * connection that began it) than {@code owner}: only its own connection may commit or finish it (docs/protocol.md).
     */
    public boolean begunByAnother(long startTs, int owner) {
        return running.ownedByAnother(startTs, owner);
    }

    /** The client gives up {@code startTs}. Returns false if it was not running (already finished or unknown). */
    public boolean abort(long startTs) {
        int state = running.finish(startTs);
        if (state == RunningTransactions.RUNNING) {
            recordAbort(startTs, running.lastFinishedOwner());
            return true;
        }
        return state == RunningTransactions.ABORTED_BY_TMAX || state == RunningTransactions.ABORTED_ELSEWHERE;
    }

    /**
     * Another connection than the one that began {@code startTs} aborts it (a client does so for a transaction begun
     * on a connection it lost, which the oracle may not have noticed yet). The abort is decided at once, but the
     * transaction stays among the running ones, like one T_max aborted, so that the low watermark keeps protecting
     * its owner's snapshot until the owner finishes it or its connection is lost: its owner may still be reading, and
     * finishing it here would let the garbage collector remove versions those reads need. A transaction already
     * aborted is left as it is. Returns true if it was aborted now.
     */
    public boolean abortForOwner(long startTs) {
        int owner = running.ownerOf(startTs);
        if (running.abortHeld(startTs)) {
            recordAbort(startTs, owner);
            return true;
        }
        return false;
    }

    /** A transaction that wrote nothing finished; it leaves the running set without any record. */
    public void finish(long startTs) {
        int state = running.finish(startTs);
        if (state == RunningTransactions.ABORTED_BY_TMAX || state == RunningTransactions.ABORTED_ELSEWHERE
                || (state == RunningTransactions.NOT_FOUND && aborted.contains(startTs))) {
            // It wrote nothing, so there is nothing to clean up: start the forgetting clock now. (NOT_FOUND yet
            // aborted: transaction.max.age.ms aborted it and let it go; its client finishes it only now.)
            aborted.cleanedUp(startTs, clock.last());
        }
    }

    /**
     * A connection of {@code owner} opened for the client {@code identity}: the token its connections share, so that
     * it may abort and report the clean-up of its transactions from any of them ({@link #owners}). Its running
     * transactions are also counted with those of the other owners of {@code limitKey} (positive; 0: not counted)
     * under {@code max.running.transactions.per.identity}. Called before the owner's first request.
     */
    public void connect(int owner, long identity, long limitKey) {
        owners.connect(owner, identity, limitKey);
    }

    /** The client behind each connection: who may abort, or report the clean-up of, a transaction it did not begin. */
    OwnerIdentities owners() {
        return owners;
    }

    /** The client removed every version {@code startTs} wrote. Returns false if it is not an aborted transaction. */
    public boolean cleanedUp(long startTs) {
        return aborted.cleanedUp(startTs, clock.last());
    }

    /**
     * The versions the in-doubt transactions of the aborted range {@code (from, to]} left in the data store were
     * deleted. The range is forgotten (a FORGET_RANGE record) once every transaction that started before this report
     * has finished, since such a reader may still hold one of those versions. Returns false if no range is exactly
     * {@code (from, to]} (unknown, forgotten already) or its report is pending already.
     */
    public boolean rangeCleanedUp(long from, long to) {
        return aborted.rangeCleanedUp(from, to, clock.last());
    }

    /**
     * Every transaction of a client that went away is aborted. Its client may not know yet and go on reading, so
     * the oldest of them holds the low watermark down for {@code reader.grace.ms}.
     */
    public void disconnect(int owner) {
        long abortsBefore = counts.aborts;
        long oldest = running.finishAllOf(owner, recordAbort);
        owners.disconnect(owner);
        running.forgetOwner(owner);
        counts.disconnectAborts += counts.aborts - abortsBefore;
        if (oldest != Long.MAX_VALUE) {
            holds.hold(oldest, nanoClock.getAsLong());
        }
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
        AbortedRange r = aborted.rangeOf(ts);
        if (r != null) {
            // Committed before the crash and forgotten here: its commit timestamp is at or below T_max (the commit
            // window only drops what T_max passed).
            return r.isCommitted(ts) ? Wire.STATUS_COMMITTED_LONG_AGO : Wire.STATUS_ABORTED;
        }
        return ts < tMax ? Wire.STATUS_COMMITTED_LONG_AGO : Wire.STATUS_UNKNOWN;
    }

    /** Commit timestamp of {@code ts} if the oracle still remembers it, else 0. */
    public long commitTimestampOf(long ts) {
        return commits.commitTsOf(ts);
    }

    private void recordAbort(long ts, int owner) {
        if (aborted.add(ts, owners.identityOf(owner))) {
            counts.aborts++;
        }
    }

    /**
     * Closes the current block: aborts what T_max passed, forgets cleaned-up aborts no reader can need, announces
     * T_max, and returns the encoded block (or null if nothing was decided). The next block starts at once.
     */
    public byte[] sealBlock() {
        long abortsBeforeExpiry = counts.aborts;
        expiry.expire(clock.last(), running, recordAbort, holds);
        counts.expiredAborts += counts.aborts - abortsBeforeExpiry;
        if (tMax > announcedTmax) {
            long abortsBefore = counts.aborts;
            running.abortStartedBefore(tMax, recordAbort);
            counts.tooOldAborts += counts.aborts - abortsBefore;
            commits.trimTo(tMax);
            block.tMax(tMax);
            announcedTmax = tMax;
        }
        long watermark = lowWatermark();
        aborted.forgetReportedBefore(watermark);
        if (block.isEmpty()) {
            return null;
        }
        byte[] sealed = block.seal();
        block.start(clock.last());
        return sealed;
    }

    /**
     * The journal-only state as of the last sealed block (call right after {@link #sealBlock}, before the next
     * decision): T_max as announced, the clock, the highest timestamp reserved, the aborted set and the aborted
     * ranges with their commits. Copies the aborted set (usually small); the journal asks for one per ledger.
     */
    public Checkpoint checkpoint() {
        return new Checkpoint(announcedTmax, clock.last(), clock.reservedUpTo(), aborted.sortedTimestamps(),
                aborted.ranges());
    }

    /**
     * A clean stop: raises T_max to the highest timestamp that may have been handed out (the reservation), so that the
     * next block aborts every running transaction explicitly and announces that nothing at or below that timestamp is
     * still undecided. The oracle that recovers this journal then finds no in-doubt range (its T_max equals the last
     * timestamp), so a planned restart or handover leaves nothing to sweep but the transactions aborted here.
     */
    public void stopCleanly() {
        tMax = Math.max(tMax, clock.reservedUpTo());
    }

    /** Records in the block being built; callers seal when it grows large. */
    public int pendingRecords() {
        return block.records();
    }

    /** The low watermark: no running or future transaction reads below it ({@link ReadHorizon#lowWatermark}). */
    public long lowWatermark() {
        return horizon.lowWatermark();
    }

    /** The low watermark and the points of the past, for reads of the past and the collector. */
    ReadHorizon readHorizon() {
        return horizon;
    }

    /** Last timestamp handed out. */
    public long clock() {
        return clock.last();
    }

    public long tMax() {
        return tMax;
    }

    /** The aborted transactions and ranges kept, their limit and the HELLO's images of them, read-only. */
    public AbortedView aborted() {
        return aborted;
    }

    /** The running transactions' counts, limits and list, read-only (status, metrics, refused BEGINs). */
    public RunningView running() {
        return running;
    }

    public int recentCommitCount() {
        return commits.size();
    }

    /** What this state decided so far, by kind. */
    DecisionCounters counts() {
        return counts;
    }

    /**
     * The counters and sizes of this state, with the server's {@code connections} (open, and refused at
     * max.connections) and journal's blocks.
     */
    OracleStats stats(int connections, long refusedConnections, long journalBlocks) {
        return counts.snapshot(running.live(), aborted.size(), aborted.rangeCount(), commits.size(), clock.last(), tMax,
                lowWatermark(), connections, refusedConnections, journalBlocks);
    }
}
