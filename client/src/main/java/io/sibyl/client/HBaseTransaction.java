package io.sibyl.client;

import io.sibyl.client.oracle.HistoryPoint;
import io.sibyl.client.oracle.LocalSnapshots;
import io.sibyl.client.oracle.OracleClient;

import java.io.IOException;
import java.util.concurrent.atomic.AtomicReference;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Function;

/**
 * The {@link Transaction} a {@link TransactionManager} begins: its {@link TransactionPhase}, which changes in one
 * place ({@link #transition}), its {@link WriteBuffer} and its {@link SnapshotView}. The manager's commit and
 * rollback protocols move it through its phases; {@link TTable} reads and writes through it.
 */
final class HBaseTransaction implements Transaction {
    private final TransactionManager manager;
    private final TransactionKind kind;
    private final long startTs;
    private final AtomicReference<TransactionPhase> phase = new AtomicReference<>(TransactionPhase.OPEN);
    /** Written before the move to {@link TransactionPhase#COMMITTED}, which publishes it. */
    private volatile long commitTs;
    private final SnapshotView snapshot;
    private final WriteBuffer writes;
    /**
     * Held by the one write operation (put, delete, batch, increment, checkAndMutate, ...) under way; re-entrant, as
     * a batch runs puts. Write operations of one transaction shared by threads run one at a time, as on one HBase
     * row: an increment's read and write are not split by another write (two increments lost one), and a commit
     * takes it to wait for the operation under way.
     */
    private final ReentrantLock writeLock = new ReentrantLock();
    /** Reads to certify (serializable) and range granules written; guarded by itself. */
    private final ReadCertification certification;

    HBaseTransaction(TransactionManager manager, TransactionKind kind, OracleClient begunOn, long startTs,
                     long beginSentNanos) {
        this(manager, kind, begunOn, startTs, beginSentNanos, IsolationLevel.SNAPSHOT);
    }

    HBaseTransaction(TransactionManager manager, TransactionKind kind, OracleClient begunOn, long startTs,
                     long beginSentNanos, IsolationLevel isolation) {
        this.certification = new ReadCertification(isolation);
        this.manager = manager;
        this.kind = kind;
        this.startTs = startTs;
        this.snapshot = new SnapshotView(this, begunOn, manager.connection(), manager.settings().oracleTimeoutMillis(),
                beginSentNanos);
        this.writes = new WriteBuffer(this, snapshot, manager.settings().writeBufferBytes());
    }

    /** A read-only transaction whose snapshot {@code lease} took from the replica of {@code begunOn}. */
    static HBaseTransaction fromReplica(TransactionManager manager, OracleClient begunOn, LocalSnapshots.Lease lease) {
        return new HBaseTransaction(manager, TransactionKind.READ_ONLY, lease.snapshotTs(),
                tx -> SnapshotView.fromReplica(tx, begunOn, manager.connection(),
                        manager.settings().oracleTimeoutMillis(), lease));
    }

    /**
     * A transaction that reads the state at {@code point}'s bound, which {@code begunOn} answered to a history query
     * sent at {@code sentNanos}, registered with its replica as {@code pastReaderToken}; its start timestamp is the
     * bound, the newest version it may read.
     */
    static HBaseTransaction past(TransactionManager manager, OracleClient begunOn, HistoryPoint point,
                                 long pastReaderToken, long sentNanos) {
        return new HBaseTransaction(manager, TransactionKind.PAST, point.bound(),
                tx -> SnapshotView.past(tx, begunOn, manager.connection(), manager.settings().oracleTimeoutMillis(),
                        point, pastReaderToken, sentNanos));
    }

    /**
     * A transaction that reads one row's latest committed state ({@link TTable#getLatest}). Its start timestamp is
     * the largest HBase can read below, so that every version is fetched.
     */
    static HBaseTransaction latestRow(TransactionManager manager, OracleClient begunOn) {
        return new HBaseTransaction(manager, TransactionKind.LATEST_ROW, Long.MAX_VALUE - 1,
                tx -> SnapshotView.latest(tx, begunOn, manager.connection(),
                        manager.settings().oracleTimeoutMillis()));
    }

    private HBaseTransaction(TransactionManager manager, TransactionKind kind, long startTs,
                             Function<HBaseTransaction, SnapshotView> view) {
        this.certification = new ReadCertification(IsolationLevel.SNAPSHOT);
        this.manager = manager;
        this.kind = kind;
        this.startTs = startTs;
        this.snapshot = view.apply(this);
        this.writes = new WriteBuffer(this, snapshot, manager.settings().writeBufferBytes());
    }

    /**
     * The transaction behind {@code tx}, which must be one a manager began.
     *
     * @throws NullPointerException if {@code tx} is null
     * @throws IllegalArgumentException if another class implemented {@link Transaction}
     */
    static HBaseTransaction of(Transaction tx) {
        if (tx == null) {
            throw new NullPointerException("transaction is null: begin one with TransactionManager.begin()");
        }
        if (tx instanceof HBaseTransaction own) {
            return own;
        }
        throw new IllegalArgumentException(tx + " was not begun by a TransactionManager: begin one with"
                + " TransactionManager.begin()");
    }

    @Override
    public long getStartTimestamp() {
        return startTs;
    }

    @Override
    public long getCommitTimestamp() {
        return commitTs;
    }

    @Override
    public Status getStatus() {
        return phase.get().status();
    }

    @Override
    public boolean isReadOnly() {
        return writes.isEmpty();
    }

    @Override
    public IsolationLevel getIsolationLevel() {
        return certification.isSerializable() ? IsolationLevel.SERIALIZABLE : IsolationLevel.SNAPSHOT;
    }

    /** A row of {@code table} was read (certified at commit when serializable). */
    void rowRead(byte[] table, byte[] row) {
        synchronized (certification) {
            certification.rowRead(table, row);
        }
    }

    /** A range of {@code table} was scanned (certified at commit when serializable). */
    void rangeScanned(byte[] table, byte[] start, byte[] stop, boolean reversed) {
        synchronized (certification) {
            certification.rangeScanned(table, start, stop, reversed);
        }
    }

    /** A row of {@code table} was written: its range granules are recorded with the commit. */
    void rowWritten(byte[] table, byte[] row) {
        synchronized (certification) {
            certification.rowWritten(table, row);
        }
    }

    /** The rows and granules read, to certify at commit (empty unless serializable). */
    long[] readsToCertify() {
        synchronized (certification) {
            return certification.reads();
        }
    }

    /** The range granules written, recorded with the commit. */
    long[] granulesWritten() {
        synchronized (certification) {
            return certification.granulesWritten();
        }
    }

    @Override
    public String toString() {
        Status status = getStatus();
        return "Transaction{startTs=" + startTs + ", status=" + status
                + (status == Status.COMMITTED ? ", commitTs=" + commitTs : "") + "}";
    }

    TransactionManager manager() {
        return manager;
    }

    TransactionKind kind() {
        return kind;
    }

    /** The oracle connection this transaction began on (closed after a failover). */
    OracleClient begunOn() {
        return snapshot.begunOn();
    }

    SnapshotView snapshot() {
        return snapshot;
    }

    WriteBuffer writes() {
        return writes;
    }

    // ---- phase --------------------------------------------------------------------------------------------------

    TransactionPhase phase() {
        return phase.get();
    }

    /**
     * The one place the phase changes: from {@code from} to {@code to}, if the phase still is {@code from}.
     *
     * @throws IllegalStateException if the move is not one {@link TransactionPhase#canMoveTo} allows: a bug here,
     *                               not a misuse by the application (those are refused before any move)
     */
    private boolean transition(TransactionPhase from, TransactionPhase to) {
        if (!from.canMoveTo(to)) {
            throw new IllegalStateException("transaction " + startTs + ": illegal phase change from " + from + " to "
                    + to);
        }
        return phase.compareAndSet(from, to);
    }

    /**
     * Claims the right to commit or roll back ({@code to} is {@link TransactionPhase#COMMITTING} or
     * {@link TransactionPhase#ROLLING_BACK}); false if another commit or rollback holds it, or one finished it.
     */
    boolean claim(TransactionPhase to) {
        while (true) {
            TransactionPhase now = phase.get();
            if (!now.isClaimable()) {
                return false;
            }
            if (transition(now, to)) {
                return true;
            }
        }
    }

    /**
     * Moves on as the claim holder, the only thread that moves the phase once it is claimed.
     *
     * @throws IllegalStateException if the move is illegal from the current phase
     */
    void moveTo(TransactionPhase to) {
        TransactionPhase now = phase.get();
        if (!transition(now, to)) {
            throw new IllegalStateException("transaction " + startTs + ": phase " + now + " changed under its claim"
                    + " holder, which was moving it to " + to);
        }
    }

    /**
     * A commit, finish or abort of this transaction is about to be sent: from the oracle's answer on, the replica may
     * trim commits this snapshot needs and the oracle may forget aborts whose versions it fetched (no running
     * transaction is older than their clean-up any more), while this transaction is finished only later (a rollback
     * first deletes its versions). Reads resolved from then on are refused by {@link #checkResolvedInTime}. Moved
     * before the request leaves, on the thread that then hands it to the connection's I/O thread, which applies the
     * oracle's later metadata: a read that sees that metadata sees this phase.
     */
    void endingAtOracle() {
        TransactionPhase now = phase.get();
        if (now.atOracle() != now) {
            moveTo(now.atOracle());
        }
    }

    /** Reaches {@code outcome}: leaves its manager's running transactions, then its phase says so. */
    void end(TransactionPhase outcome) {
        manager.forget(this);
        moveTo(outcome);
    }

    /** Reaches {@link TransactionPhase#COMMITTED} at {@code ts}. */
    void endCommitted(long ts) {
        commitTs = ts;
        end(TransactionPhase.COMMITTED);
    }

    /**
     * Gives the claim back after a commit or rollback that stopped without an outcome (an unexpected error), so
     * that the transaction can be committed or rolled back again; does nothing once it has an outcome.
     */
    void releaseClaim() {
        TransactionPhase now = phase.get();
        if (now.isClaimed()) {
            moveTo(TransactionPhase.UNFINISHED);
        }
    }

    /** True while a commit or rollback holds the claim (or after one finished the transaction). */
    boolean isBeingFinished() {
        return !phase.get().isClaimable();
    }

    boolean isInDoubt() {
        return phase.get() == TransactionPhase.IN_DOUBT;
    }

    boolean wasRolledBackByClose() {
        return phase.get() == TransactionPhase.ROLLED_BACK_BY_CLOSE;
    }

    // ---- checks -------------------------------------------------------------------------------------------------

    /** Throws a clear exception unless the transaction can still read and write. */
    void checkRunning() {
        checkNotFinished();
        Exception failed = writes.failure();
        if (failed != null) {
            throw new IllegalStateException("transaction " + startTs + " can only roll back: some of its writes may"
                    + " be missing (" + failed + "); roll it back (commit does so too, and TransactionManager.run"
                    + " retries) and run it again", failed);
        }
    }

    /** Throws a clear exception if the transaction is committed, rolled back or in doubt, or the manager closed. */
    void checkNotFinished() {
        String finishedAs = phase.get().finishedAs();
        if (finishedAs != null) {
            throw new IllegalStateException("transaction " + startTs + " is " + finishedAs
                    + ": reads, writes and commits need a running transaction; begin a new one");
        }
        manager.checkOpen();
    }

    /** Throws unless buffered writes may still be added and sent to HBase ({@link TransactionPhase#sendsWrites}). */
    void checkSendsWrites() {
        TransactionPhase now = phase.get();
        if (!now.sendsWrites()) {
            throw writesRefused(now);
        }
    }

    private IllegalStateException writesRefused(TransactionPhase now) {
        if (now.isRollingBack()) {
            return new IllegalStateException("transaction " + startTs + " is being rolled back (by another thread, or"
                    + " by a closing TransactionManager): it takes no more writes");
        }
        if (now == TransactionPhase.UNFINISHED) {
            return new IllegalStateException("transaction " + startTs + " stopped being committed or rolled back on"
                    + " an unexpected error: it takes no more writes; commit or roll it back again");
        }
        return new IllegalStateException("transaction " + startTs + " is being committed (by another thread): it takes"
                + " no more writes; a write is part of a commit only if it returned before commit was called");
    }

    /**
     * Throws unless what a read just resolved is still this snapshot: the transaction is not finished, no commit,
     * finish or abort of it was sent meanwhile ({@link #endingAtOracle}, e.g. by another thread), and the oracle's
     * max age did not run out (from then on the replica may let go of commit timestamps this snapshot needs,
     * {@link io.sibyl.client.oracle.CommitReplica#expireReadersAfter}).
     */
    void checkResolvedInTime() throws SnapshotExpiredException {
        checkNotFinished();
        if (!phase.get().resolvesReads()) {
            throw new IllegalStateException("transaction " + startTs + " is being committed or rolled back (by"
                    + " another thread): a read that ran meanwhile may no longer see exactly its snapshot, so it is"
                    + " refused; reads need a running transaction");
        }
        snapshot.checkYoungEnough();
    }

    /** True if some write batch failed or timed out in HBase, so that part of it may land late. */
    boolean mayHaveLateWrites() {
        return writes.mayHaveLateWrites();
    }

    // ---- write operations ---------------------------------------------------------------------------------------

    /**
     * A write operation begins on this thread (see {@link TTable}); ends with {@link #endWrite()}. Operations on one
     * transaction run one at a time; each is applied whole or refused before it starts: a commit waits for the
     * operation under way (which may then finish) and refuses later ones, so a commit racing writes on other threads
     * never commits part of a put or batch, nor drops one that returned normally.
     */
    void beginWrite() {
        writeLock.lock();
        if (writeLock.getHoldCount() > 1) {
            return; // nested in an operation that passed the checks
        }
        try {
            if (kind == TransactionKind.PAST) {
                throw new IllegalStateException("transaction " + startTs + " reads the past (beginAt): it takes no"
                        + " writes; begin a transaction with begin() to write");
            }
            if (!kind.writes()) {
                throw new IllegalStateException("transaction " + startTs + " was begun with beginReadOnly(): its"
                        + " snapshot comes from the local replica and it takes no writes; begin it with begin() to"
                        + " write");
            }
            checkRunning();
            TransactionPhase now = phase.get();
            if (now != TransactionPhase.OPEN) {
                throw writesRefused(now);
            }
        } catch (RuntimeException e) {
            writeLock.unlock();
            throw e;
        }
    }

    void endWrite() {
        writeLock.unlock();
    }

    /**
     * Called by a commit that holds the claim, before it sends the buffer: waits for the write operation under way on
     * another thread (uninterruptibly, as the commit's reply is); later ones were refused from the claim on, so what
     * the commit then flushes and sends as the write set is everything this transaction will ever write.
     */
    void awaitWriteUnderWay() {
        writeLock.lock();
        writeLock.unlock();
    }

    /** Sends every buffered write to HBase ({@link WriteBuffer#flush}). */
    void flush() throws IOException {
        writes.flush();
    }

    /** Deletes every version this transaction sent to HBase not deleted yet; returns the first failure, or null. */
    IOException deleteSentVersions() {
        return writes.deleteSent();
    }
}
