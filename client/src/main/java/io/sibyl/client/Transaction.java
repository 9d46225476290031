package io.sibyl.client;

import io.sibyl.client.oracle.OracleClient;
import io.sibyl.client.oracle.OracleException;
import io.sibyl.client.oracle.RowIds;
import io.sibyl.client.oracle.Visibility;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.OperationTimeoutExceededException;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.RetriesExhaustedWithDetailsException;
import org.apache.hadoop.hbase.ipc.CallTimeoutException;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.nio.channels.ClosedByInterruptException;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A snapshot-isolation transaction, begun by {@link TransactionManager#begin()}. It reads the snapshot of its start
 * timestamp plus its own writes, and writes versions tagged with its start timestamp. A transaction is meant to be
 * used by one thread at a time; the manager may roll it back from another thread when it is closed. If threads share
 * it anyway, its write operations run one at a time, and a commit waits for the one under way and refuses later
 * ones, so no write is lost, half committed or dropped.
 */
public final class Transaction {
    /** Lifecycle of a transaction. */
    public enum Status {
        RUNNING,
        COMMITTED,
        ROLLED_BACK
    }

    private final TransactionManager manager;
    /** The connection the transaction began on: its replica holds this snapshot, even after a failover. */
    private final OracleClient begunOn;
    private final long startTs;
    private volatile Status status = Status.RUNNING;
    private volatile long commitTs;
    /** Why the transaction can no longer be used, when it was finished in an unusual way. */
    private volatile String finishedHow;
    /** Rolled back by its manager's close, not by the application. */
    private volatile boolean rolledBackByClose;
    /** Its commit was sent and no oracle could tell the outcome: it may have committed. */
    private volatile boolean inDoubt;
    /** The first failure to send buffered writes to HBase: from then on the transaction can only roll back. */
    private volatile Exception writeFailure;
    /** Held by the one commit or rollback under way, so that a concurrent one (e.g. the manager's close) waits out. */
    private final AtomicBoolean finishing = new AtomicBoolean();
    // Guarded by this:
    private final Map<TableName, TableWrites> writes = new LinkedHashMap<>();
    private final Set<Long> rowIds = new HashSet<>();
    /** Reads to certify (serializable) and range granules written. */
    private final ReadCertification certification;
    private long bufferedBytes;
    /**
     * A batch of writes is sent only with at least this long left in the read window (less if the window is shorter
     * than ten times this): HBase could hardly finish it in less, and would then give up with part of it written.
     */
    static final long MIN_WRITE_MILLIS = 100;
    /** At least this long between sending a batch HBase timed out on and sending it again. */
    private static final long RESEND_PAUSE_NANOS = 100_000_000L;
    /** When the start timestamp arrived: protection ends for good after a silence of the oracle since then. */
    private final long begunAtNanos;
    /**
     * When the oracle's transaction.max.age.ms runs out for this transaction (counted from before the begin was sent,
     * so never after the oracle's own count ends), if {@link #hasMaxAge}: no read or write after that.
     */
    private final long expiresAtNanos;
    private final boolean hasMaxAge;
    /**
     * A batch of this transaction's writes failed or timed out in HBase: some of it may still be applied by a region
     * server later, even after it was resent and acknowledged.
     */
    private volatile boolean lateWritesPossible;
    /** Set by a rollback before it decides what to undo: no write may reach HBase after that. */
    private boolean writesClosed;
    /**
     * Set by a commit before it sends the buffered writes and the write set: no write operation may start after
     * that, so every write that returned normally is in what the commit sends, and none can join afterwards.
     */
    private boolean committing;
    /**
     * Held by the one write operation (put, delete, batch, increment, checkAndMutate, ...) under way; re-entrant, as
     * a batch runs puts. Write operations of one transaction shared by threads run one at a time, as on one HBase
     * row: an increment's read and write are not split by another write (two increments lost one), and a commit
     * takes it to wait for the operation under way.
     */
    private final ReentrantLock writeLock = new ReentrantLock();
    /** Set before a commit, finish or abort of this transaction is sent to the oracle ({@link #endingAtOracle}). */
    private volatile boolean endingAtOracle;
    /** Answers of the oracle for writers the local replica could not judge (they never change for this snapshot). */
    private final Map<Long, Boolean> askedOracle = new ConcurrentHashMap<>();

    Transaction(TransactionManager manager, OracleClient begunOn, long startTs, long beginSentNanos) {
        this(manager, begunOn, startTs, beginSentNanos, IsolationLevel.SNAPSHOT);
    }

    Transaction(TransactionManager manager, OracleClient begunOn, long startTs, long beginSentNanos,
                IsolationLevel isolation) {
        this.certification = new ReadCertification(isolation);
        this.manager = manager;
        this.begunOn = begunOn;
        this.startTs = startTs;
        this.begunAtNanos = System.nanoTime();
        long maxAge = begunOn.transactionMaxAgeNanos();
        this.hasMaxAge = maxAge != 0;
        this.expiresAtNanos = beginSentNanos + maxAge; // System.nanoTime may be negative: no 0 sentinel
    }

    /** The start timestamp T_s: the snapshot this transaction reads, and the version of every cell it writes. */
    public long getStartTimestamp() {
        return startTs;
    }

    /**
     * The commit timestamp T_c once {@link Status#COMMITTED}, else 0. A read-only transaction commits at its start
     * timestamp (it serializes at its snapshot). Also 0 for a commit that was in flight across a lost oracle
     * connection and that the oracle then reported committed without a timestamp (it had passed T_max).
     */
    public long getCommitTimestamp() {
        return commitTs;
    }

    /** {@code RUNNING} until the transaction commits or is rolled back. */
    public Status getStatus() {
        return status;
    }

    /** True while the transaction has written nothing (puts and deletes, buffered or sent). */
    public synchronized boolean isReadOnly() {
        return rowIds.isEmpty();
    }

    @Override
    public String toString() {
        return "Transaction{startTs=" + startTs + ", status=" + status
                + (status == Status.COMMITTED ? ", commitTs=" + commitTs : "") + "}";
    }

    TransactionManager manager() {
        return manager;
    }

    /** The oracle connection this transaction began on (closed after a failover). */
    OracleClient begunOn() {
        return begunOn;
    }

    /** Throws a clear exception unless the transaction can still read and write. */
    void checkRunning() {
        checkNotFinished();
        Exception failed = writeFailure;
        if (failed != null) {
            throw new IllegalStateException("transaction " + startTs + " can only roll back: some of its writes may"
                    + " be missing (" + failed + "); roll it back (commit does so too, and TransactionManager.run"
                    + " retries) and run it again", failed);
        }
    }

    /** Throws a clear exception if the transaction is committed, rolled back or in doubt, or the manager closed. */
    void checkNotFinished() {
        Status s = status;
        String how = finishedHow;
        if (s != Status.RUNNING || how != null) {
            String what = how != null ? how : (s == Status.COMMITTED ? "already committed" : "already rolled back");
            throw new IllegalStateException("transaction " + startTs + " is " + what
                    + ": reads, writes and commits need a running transaction; begin a new one");
        }
        manager.checkOpen();
    }

    /**
     * Makes the transaction roll-back-only because an operation that must apply whole (a {@code mutateRow}, a
     * {@code checkAndMutate}'s action, a batch) failed after part of it joined the transaction.
     */
    void failPartlyApplied(String what, Exception cause) {
        if (writeFailure == null) {
            writeFailure = new IOException(what + ": " + cause, cause);
        }
    }

    /** The failure that made the transaction roll-back-only, or null. */
    Exception writeFailure() {
        return writeFailure;
    }

    boolean isInDoubt() {
        return inDoubt;
    }

    /** Claims the right to commit or roll back; false if another commit or rollback holds it. */
    boolean claimFinish() {
        return finishing.compareAndSet(false, true);
    }

    /** True while a commit or rollback holds the claim (or after one finished the transaction). */
    boolean isBeingFinished() {
        return finishing.get();
    }

    /** Gives the claim back when the transaction is still running and usable after a failed attempt. */
    void releaseFinishIfRunning() {
        if (status == Status.RUNNING && !inDoubt) {
            finishing.set(false);
        }
    }

    /**
     * Throws unless what was just fetched from HBase was read while garbage collection still spared this snapshot:
     * after the oracle connection is lost, only for a while ({@link OracleClient#snapshotsProtected()}).
     */
    void checkSnapshotReadable() throws SnapshotExpiredException {
        if (!begunOn.snapshotsProtected(begunAtNanos)) {
            throw new SnapshotExpiredException(this, begunOn.millisSinceHeard(), begunOn.readWindowMillis());
        }
        if (nanosToMaxAge() <= 0) {
            throw SnapshotExpiredException.tooOld(this, begunOn.transactionMaxAgeNanos() / 1_000_000L);
        }
    }

    /**
     * Throws unless what a read just resolved is still this snapshot: the transaction is not finished, no commit,
     * finish or abort of it was sent meanwhile ({@link #endingAtOracle}, e.g. by another thread), and the oracle's
     * max age did not run out (from then on the replica may let go of commit timestamps this snapshot needs,
     * {@link io.sibyl.client.oracle.CommitReplica#expireReadersAfter}).
     */
    void checkResolvedInTime() throws SnapshotExpiredException {
        checkNotFinished();
        if (endingAtOracle) {
            throw new IllegalStateException("transaction " + startTs + " is being committed or rolled back (by"
                    + " another thread): a read that ran meanwhile may no longer see exactly its snapshot, so it is"
                    + " refused; reads need a running transaction");
        }
        if (nanosToMaxAge() <= 0) {
            throw SnapshotExpiredException.tooOld(this, begunOn.transactionMaxAgeNanos() / 1_000_000L);
        }
    }

    /** Nanoseconds until the oracle's max age ends this transaction ({@link Long#MAX_VALUE}: no max age). */
    long nanosToMaxAge() {
        return hasMaxAge ? expiresAtNanos - System.nanoTime() : Long.MAX_VALUE;
    }

    /** True if some write batch failed or timed out in HBase, so that part of it may land late. */
    boolean mayHaveLateWrites() {
        return lateWritesPossible;
    }

    /** True if the transaction outlived the oracle's transaction.max.age.ms (the oracle aborts it). */
    boolean outlivedMaxAge() {
        return nanosToMaxAge() <= 0;
    }

    // ---- visibility ---------------------------------------------------------------------------------------------

    /** Is the version written by the transaction that started at {@code writerTs} in this snapshot? */
    boolean sees(long writerTs) throws IOException {
        if (writerTs == startTs) {
            return true;
        }
        if (writerTs > startTs) {
            return false;
        }
        Visibility v = begunOn.replica().inSnapshot(writerTs, startTs);
        if (v != Visibility.ASK_ORACLE) {
            return v == Visibility.VISIBLE;
        }
        Boolean known = askedOracle.get(writerTs);
        if (known != null) {
            return known;
        }
        boolean answer;
        try {
            answer = askOracle(writerTs).get(manager.settings().oracleTimeoutMillis(), TimeUnit.MILLISECONDS);
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
                    + manager.settings().oracleTimeoutMillis() + " ms");
        }
        askedOracle.put(writerTs, answer);
        return answer;
    }

    /**
     * Asks the oracle about a writer older than the connection this transaction began on. After a failover that
     * connection is gone and the question goes to the current oracle, which knows every decision from the journal;
     * its frozen replica still holds every commit before this snapshot that it learnt after it connected, so a
     * writer it does not know committed, if at all, either before it connected (visible) or after this snapshot
     * began, which the commit timestamp in the answer tells apart.
     */
    private CompletableFuture<Boolean> askOracle(long writerTs) {
        if (begunOn.isOpen()) {
            // Lost while asking: ask the oracle that took over instead.
            return begunOn.inSnapshot(writerTs, startTs).exceptionallyCompose(e -> begunOn.isOpen()
                    ? CompletableFuture.failedFuture(e) : askCurrentOracle(writerTs));
        }
        return askCurrentOracle(writerTs);
    }

    private CompletableFuture<Boolean> askCurrentOracle(long writerTs) {
        return manager.connection().current().query(writerTs).thenApply(status -> switch (status.state()) {
            case COMMITTED -> status.commitTimestamp() < startTs;
            // Committed at or below the current oracle's T_max, which kept rising after this connection was lost:
            // the commit may have come before this snapshot or after it, and nothing left can tell.
            case COMMITTED_LONG_AGO -> throw new CompletionException(new SnapshotExpiredException(this,
                    "version " + writerTs + " committed, but the oracle no longer knows when, and this transaction's"
                            + " oracle connection was lost before it could learn whether that was before its"
                            + " snapshot"));
            default -> false;
        });
    }

    // ---- writes -------------------------------------------------------------------------------------------------

    synchronized TableWrites writesFor(TTable table) {
        return writes.computeIfAbsent(table.getName(), n -> table.newWrites());
    }

    /** Buffers one cell (value or tombstone); the caller then calls {@link #flushIfFull()}. */
    synchronized void buffer(TableWrites w, byte[] row, byte[] family, byte[] qualifier, byte[] value) {
        checkRunning();
        checkWritesOpen();
        bufferedBytes += w.buffer(row, family, qualifier, value);
        rowIds.add(RowIds.of(w.name.getName(), row));
        certification.rowWritten(w.name.getName(), row);
    }

    /** Records a row as written even if no cell changes (a delete of a row with nothing visible still conflicts). */
    synchronized void touchRow(TableWrites w, byte[] row) {
        checkRunning();
        checkWritesOpen();
        rowIds.add(RowIds.of(w.name.getName(), row));
        certification.rowWritten(w.name.getName(), row);
    }

    /** The isolation level it was begun with. */
    public IsolationLevel getIsolationLevel() {
        return certification.isSerializable() ? IsolationLevel.SERIALIZABLE : IsolationLevel.SNAPSHOT;
    }

    /** A row of {@code table} was read (certified at commit when serializable). */
    synchronized void rowRead(byte[] table, byte[] row) {
        certification.rowRead(table, row);
    }

    /** A range of {@code table} was scanned (certified at commit when serializable). */
    synchronized void rangeScanned(byte[] table, byte[] start, byte[] stop, boolean reversed) {
        certification.rangeScanned(table, start, stop, reversed);
    }

    /** The rows and granules read, to certify at commit (empty unless serializable). */
    synchronized long[] readsToCertify() {
        return certification.reads();
    }

    /** The range granules written, recorded with the commit. */
    synchronized long[] granulesWritten() {
        return certification.granulesWritten();
    }

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
            synchronized (this) {
                checkRunning();
                checkWritesOpen();
                if (committing) {
                    throw new IllegalStateException("transaction " + startTs + " is being committed (by another"
                            + " thread): it takes no more writes; a write is part of a commit only if it returned"
                            + " before commit was called");
                }
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
     * A commit begins: waits for the write operation under way on another thread (uninterruptibly, as the commit's
     * reply is) and refuses later ones, so that what the commit then flushes and sends as the write set is
     * everything this transaction will ever write.
     */
    void closeForCommit() {
        writeLock.lock();
        try {
            synchronized (this) {
                committing = true;
            }
        } finally {
            writeLock.unlock();
        }
    }

    synchronized void flushIfFull() throws IOException {
        if (bufferedBytes > manager.settings().writeBufferBytes()) {
            flush();
        }
    }

    /**
     * Sends every buffered write to HBase. A failure makes the transaction roll-back-only: the buffer is gone and
     * HBase may hold some of the batch, so neither reads of its own writes nor a commit could be right any more.
     */
    synchronized void flush() throws IOException {
        if (bufferedBytes > 0) {
            checkWritesOpen();
        }
        try {
            for (TableWrites w : writes.values()) {
                if (w.buffered.isEmpty()) {
                    continue;
                }
                writeTimeoutCap(); // nothing is drained if the window is over already
                sendWithinReadWindow(w, w.drain(startTs));
            }
        } catch (IOException | RuntimeException e) {
            Exception failure = e;
            if (keepInterrupt(e)) {
                // HBase reports an interrupted batch as a bare InterruptedIOException, or as "Failed 1 action:
                // InterruptedIOException": say what happened and what it means for the transaction.
                failure = (Exception) new InterruptedIOException("interrupted while sending the writes of transaction "
                        + startTs + " to HBase: some may have been written, so it can only roll back").initCause(e);
            }
            if (writeFailure == null) {
                writeFailure = failure;
            }
            if (failure instanceof IOException io) {
                throw io;
            }
            throw (RuntimeException) failure;
        } finally {
            bufferedBytes = 0;
        }
    }

    /**
     * Sends one table's batch, giving HBase no longer than the time left in the read window ({@link #writeTimeoutCap},
     * measured again just before each attempt). When HBase timed out at that cap and the window is not over (the
     * oracle was heard meanwhile: HBase was just slow, e.g. a region moving), the batch is sent again with the new
     * time left, for as long as HBase's own operation timeout allows in all: the same versions and values again, so
     * a part that landed before is only written over. When the window is over, the write fails with
     * {@link SnapshotExpiredException}, HBase's timeout as its cause.
     */
    private void sendWithinReadWindow(TableWrites w, List<Put> puts) throws IOException {
        long began = System.nanoTime();
        int cap = writeTimeoutCap();
        while (true) {
            long total = w.configuredOperationTimeoutMillis();
            if (cap != TableWrites.NO_CAP && total > 0) {
                cap = (int) Math.max(1, Math.min(cap, total - (System.nanoTime() - began) / 1_000_000L));
            }
            long sentAt = System.nanoTime();
            try {
                w.send(puts, cap);
                return;
            } catch (RuntimeException e) {
                lateWritesPossible = true; // part of the batch may have been dispatched
                throw e;
            } catch (IOException e) {
                lateWritesPossible = true;
                if (cap == TableWrites.NO_CAP || !timedOut(e) || Thread.currentThread().isInterrupted()
                        || (total > 0 && (System.nanoTime() - began) / 1_000_000L >= total)) {
                    throw e; // not for the cap: an error HBase does not retry, or its own limits
                }
                try {
                    cap = writeTimeoutCap();
                } catch (SnapshotExpiredException expired) {
                    expired.initCause(e);
                    throw expired;
                }
                long pauseNanos = RESEND_PAUSE_NANOS - (System.nanoTime() - sentAt);
                if (pauseNanos > 0) { // HBase gave up at once (its next pause would not fit): not in a tight loop
                    try {
                        TimeUnit.NANOSECONDS.sleep(pauseNanos);
                    } catch (InterruptedException ie) {
                        Thread.currentThread().interrupt();
                        throw new InterruptedIOException("interrupted while sending the writes of transaction "
                                + startTs + " again");
                    }
                    cap = writeTimeoutCap();
                }
            }
        }
    }

    /** Did HBase give up on a write for its timeouts (for every action of a batch), rather than for an error? */
    private static boolean timedOut(Throwable e) {
        if (e instanceof RetriesExhaustedWithDetailsException batch) {
            if (batch.getNumExceptions() == 0) {
                return false;
            }
            for (int i = 0; i < batch.getNumExceptions(); i++) {
                if (!timedOut(batch.getCause(i))) {
                    return false;
                }
            }
            return true;
        }
        return e instanceof SocketTimeoutException || e instanceof OperationTimeoutExceededException
                || e instanceof CallTimeoutException;
    }

    /**
     * How long HBase may take over a batch of this transaction's writes sent now, retries included, in milliseconds:
     * the time left in its read window ({@link OracleClient#nanosLeftInReadWindow}), or {@link TableWrites#NO_CAP}
     * while there is no window (before the oracle's HELLO). Writes are cut off like reads, before each table's batch,
     * and a batch is not sent, nor retried by HBase, past the cut-off: a dead client's versions must all be in HBase
     * before the oracle's hold on its transactions ends, or a clean-up of aborted versions could miss them (docs/gc.md,
     * "Aborted transactions of dead clients"). With less than a small floor left the write fails without being sent.
     */
    private int writeTimeoutCap() throws SnapshotExpiredException {
        long toMaxAge = nanosToMaxAge();
        if (toMaxAge < MIN_WRITE_MILLIS * 1_000_000L) {
            throw SnapshotExpiredException.tooOld(this, begunOn.transactionMaxAgeNanos() / 1_000_000L);
        }
        long leftNanos = Math.min(begunOn.nanosLeftInReadWindow(begunAtNanos), toMaxAge);
        if (leftNanos == Long.MAX_VALUE) {
            return TableWrites.NO_CAP;
        }
        long windowMillis = begunOn.readWindowMillis();
        long floorMillis = Math.max(1, Math.min(MIN_WRITE_MILLIS, windowMillis / 10));
        long leftMillis = leftNanos / 1_000_000L;
        if (leftMillis < floorMillis) {
            throw SnapshotExpiredException.forWrite(this, begunOn.millisSinceHeard(), windowMillis, floorMillis);
        }
        return (int) Math.min(Integer.MAX_VALUE, leftMillis);
    }

    /** The buffered cells of one row of one table (a copy), or null. */
    synchronized NavigableMap<byte[], NavigableMap<byte[], byte[]>> bufferedRow(TableName table, byte[] row) {
        TableWrites w = writes.get(table);
        return w == null ? null : w.copyOfRow(row);
    }

    /** The buffered rows of one table (a copy), or null if there are none. */
    synchronized NavigableMap<byte[], NavigableMap<byte[], NavigableMap<byte[], byte[]>>> bufferedRows(
            TableName table) {
        TableWrites w = writes.get(table);
        if (w == null || w.buffered.isEmpty()) {
            return null;
        }
        NavigableMap<byte[], NavigableMap<byte[], NavigableMap<byte[], byte[]>>> copy =
                new java.util.TreeMap<>(org.apache.hadoop.hbase.util.Bytes.BYTES_COMPARATOR);
        w.buffered.forEach((row, cells) -> copy.put(row, TableWrites.copyRow(cells)));
        return copy;
    }

    synchronized long[] writeSet() {
        long[] out = new long[rowIds.size()];
        int i = 0;
        for (long id : rowIds) {
            out[i++] = id;
        }
        return out;
    }

    /**
     * A rollback begins: from now on no write reaches HBase (a put or flush from another thread fails), so what it
     * sees sent here is all there will ever be. Returns whether some writes were sent.
     */
    synchronized boolean closeForWrites() {
        writesClosed = true;
        return hasSentWrites();
    }

    private void checkWritesOpen() {
        if (writesClosed) {
            throw new IllegalStateException("transaction " + startTs + " is being rolled back (by another thread, or"
                    + " by a closing TransactionManager): it takes no more writes");
        }
    }

    synchronized boolean hasSentWrites() {
        for (TableWrites w : writes.values()) {
            if (w.hasSent()) {
                return true;
            }
        }
        return false;
    }

    /** Deletes every version this transaction sent to HBase not deleted yet; returns the first failure, or null. */
    synchronized IOException deleteSentVersions() {
        IOException failure = null;
        for (TableWrites w : writes.values()) {
            w.buffered.clear();
            try {
                w.deleteSent(startTs); // forgets what it deleted: a later attempt retries only the rest
            } catch (IOException | RuntimeException e) {
                if (failure == null) {
                    failure = new IOException("deleting its versions in " + w.name + " failed: " + e, e);
                }
            }
        }
        bufferedBytes = 0;
        return failure;
    }

    // ---- state changes (called by the manager) ------------------------------------------------------------------

    void markCommitted(long ts) {
        commitTs = ts;
        status = Status.COMMITTED;
    }

    void markRolledBack(String how) {
        if (how != null) {
            finishedHow = how;
        }
        status = Status.ROLLED_BACK;
    }

    /** Rolled back by its manager's close (not by the application): see {@link TransactionManager#run}. */
    void markRolledBackByClose() {
        rolledBackByClose = true;
        markRolledBack("rolled back because its TransactionManager was closed");
    }

    boolean wasRolledBackByClose() {
        return rolledBackByClose;
    }

    void markInDoubt() {
        finishedHow = "in doubt (its commit outcome is unknown)";
        inDoubt = true;
    }

    /**
     * A commit, finish or abort of this transaction is about to be sent: from the oracle's answer on, the replica may
     * trim commits this snapshot needs and the oracle may forget aborts whose versions it fetched (no running
     * transaction is older than their clean-up any more), while this transaction is marked finished only later (a
     * rollback first deletes its versions). Reads resolved from then on are refused by
     * {@link #checkResolvedInTime}. Set before the request leaves, on the thread that then hands it to the
     * connection's I/O thread, which applies the oracle's later metadata: a read that sees that metadata sees this.
     */
    void endingAtOracle() {
        endingAtOracle = true;
    }

    /**
     * HBase's client turns an interrupt of the calling thread into an {@link InterruptedIOException} (alone, or in a
     * {@link RetriesExhaustedWithDetailsException} for a batch) and clears the thread's interrupt flag on the way.
     * Sets the flag again if {@code e} says the call was interrupted, so that the application, its executor and
     * {@code run} still see the interrupt; returns whether it did.
     */
    static boolean keepInterrupt(Throwable e) {
        if (interrupted(e, 0)) {
            Thread.currentThread().interrupt();
            return true;
        }
        return false;
    }

    private static boolean interrupted(Throwable e, int depth) {
        if (e == null || depth > 8) {
            return false;
        }
        if (e instanceof InterruptedException || e instanceof ClosedByInterruptException
                || (e instanceof InterruptedIOException && !(e instanceof SocketTimeoutException))) {
            return true;
        }
        if (e instanceof RetriesExhaustedWithDetailsException batch) {
            for (int i = 0; i < batch.getNumExceptions(); i++) {
                if (interrupted(batch.getCause(i), depth + 1)) {
                    return true;
                }
            }
        }
        return e.getCause() != e && interrupted(e.getCause(), depth + 1);
    }

    static String describe(OracleException e) {
        return e.getMessage() == null ? e.toString() : e.getMessage();
    }
}
