package io.sibyl.client;

import io.sibyl.client.oracle.RowIds;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.OperationTimeoutExceededException;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.RetriesExhaustedWithDetailsException;
import org.apache.hadoop.hbase.ipc.CallTimeoutException;
import org.apache.hadoop.hbase.util.Bytes;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;

/**
 * One transaction's writes: the cells buffered per table, the write set (row ids of every row written), and what
 * was sent to HBase, which a rollback deletes. Its monitor is held while a batch is sent, so a rollback that closed
 * the transaction for writes and then looks at what was sent sees everything that will ever be sent.
 */
final class WriteBuffer {
    /** At least this long between sending a batch HBase timed out on and sending it again. */
    private static final long RESEND_PAUSE_NANOS = 100_000_000L;

    private final HBaseTransaction tx;
    private final SnapshotView snapshot;
    private final long startTs;
    private final long flushAtBytes;
    // Guarded by this:
    private final Map<TableName, TableWrites> writes = new LinkedHashMap<>();
    private final Set<Long> rowIds = new HashSet<>();
    private long bufferedBytes;
    /** The first failure to send buffered writes to HBase: from then on the transaction can only roll back. */
    private volatile Exception failure;
    /**
     * A batch of this transaction's writes failed or timed out in HBase: some of it may still be applied by a region
     * server later, even after it was resent and acknowledged.
     */
    private volatile boolean lateWritesPossible;

    WriteBuffer(HBaseTransaction tx, SnapshotView snapshot, long flushAtBytes) {
        this.tx = tx;
        this.snapshot = snapshot;
        this.startTs = tx.getStartTimestamp();
        this.flushAtBytes = flushAtBytes;
    }

    synchronized TableWrites forTable(TTable table) {
        return writes.computeIfAbsent(table.getName(), n -> table.newWrites());
    }

    /** Buffers one cell (value or tombstone); the caller then calls {@link #flushIfFull()}. */
    synchronized void buffer(TableWrites w, byte[] row, byte[] family, byte[] qualifier, byte[] value) {
        tx.checkRunning();
        tx.checkSendsWrites();
        bufferedBytes += w.buffer(row, family, qualifier, value);
        rowIds.add(RowIds.of(w.name.getName(), row));
        tx.rowWritten(w.name.getName(), row);
    }

    /** Records a row as written even if no cell changes (a delete of a row with nothing visible still conflicts). */
    synchronized void touchRow(TableWrites w, byte[] row) {
        tx.checkRunning();
        tx.checkSendsWrites();
        rowIds.add(RowIds.of(w.name.getName(), row));
        tx.rowWritten(w.name.getName(), row);
    }

    /** True while nothing was written (puts and deletes, buffered or sent). */
    synchronized boolean isEmpty() {
        return rowIds.isEmpty();
    }

    /** The row ids of every row written, across tables: what the commit asks the oracle to check. */
    synchronized long[] writeSet() {
        long[] out = new long[rowIds.size()];
        int i = 0;
        for (long id : rowIds) {
            out[i++] = id;
        }
        return out;
    }

    /**
     * Makes the transaction roll-back-only because an operation that must apply whole (a {@code mutateRow}, a
     * {@code checkAndMutate}'s action, a batch) failed after part of it joined the transaction.
     */
    void failPartlyApplied(String what, Exception cause) {
        if (failure == null) {
            failure = new IOException(what + ": " + cause, cause);
        }
    }

    /** The failure that made the transaction roll-back-only, or null. */
    Exception failure() {
        return failure;
    }

    /** True if some write batch failed or timed out in HBase, so that part of it may land late. */
    boolean mayHaveLateWrites() {
        return lateWritesPossible;
    }

    synchronized void flushIfFull() throws IOException {
        if (bufferedBytes > flushAtBytes) {
            flush();
        }
    }

    /**
     * Sends every buffered write to HBase. A failure makes the transaction roll-back-only: the buffer is gone and
     * HBase may hold some of the batch, so neither reads of its own writes nor a commit could be right any more.
     */
    synchronized void flush() throws IOException {
        if (bufferedBytes > 0) {
            tx.checkSendsWrites();
        }
        try {
            for (TableWrites w : writes.values()) {
                if (w.buffered.isEmpty()) {
                    continue;
                }
                snapshot.writeTimeoutCap(); // nothing is drained if the window is over already
                sendWithinReadWindow(w, w.drain(startTs));
            }
        } catch (IOException | RuntimeException e) {
            Exception failed = e;
            if (Interrupts.keepInterrupt(e)) {
                // HBase reports an interrupted batch as a bare InterruptedIOException, or as "Failed 1 action:
                // InterruptedIOException": say what happened and what it means for the transaction.
                failed = (Exception) new InterruptedIOException("interrupted while sending the writes of transaction "
                        + startTs + " to HBase: some may have been written, so it can only roll back").initCause(e);
            }
            if (failure == null) {
                failure = failed;
            }
            if (failed instanceof IOException io) {
                throw io;
            }
            throw (RuntimeException) failed;
        } finally {
            bufferedBytes = 0;
        }
    }

    /**
     * Sends one table's batch, giving HBase no longer than the time left in the read window
     * ({@link SnapshotView#writeTimeoutCap}, measured again just before each attempt). When HBase timed out at that
     * cap and the window is not over (the oracle was heard meanwhile: HBase was just slow, e.g. a region moving), the
     * batch is sent again with the new time left, for as long as HBase's own operation timeout allows in all: the
     * same versions and values again, so a part that landed before is only written over. When the window is over,
     * the write fails with {@link SnapshotExpiredException}, HBase's timeout as its cause.
     */
    private void sendWithinReadWindow(TableWrites w, List<Put> puts) throws IOException {
        long began = System.nanoTime();
        int cap = snapshot.writeTimeoutCap();
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
                    cap = snapshot.writeTimeoutCap();
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
                    cap = snapshot.writeTimeoutCap();
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
                new TreeMap<>(Bytes.BYTES_COMPARATOR);
        w.buffered.forEach((row, cells) -> copy.put(row, TableWrites.copyRow(cells)));
        return copy;
    }

    /**
     * True if some writes reached HBase (or may have). Called by a rollback after it closed the transaction for
     * writes: it waits out a batch being sent, and nothing is sent after it.
     */
    synchronized boolean hasSent() {
        for (TableWrites w : writes.values()) {
            if (w.hasSent()) {
                return true;
            }
        }
        return false;
    }

    /** Deletes every version this transaction sent to HBase not deleted yet; returns the first failure, or null. */
    synchronized IOException deleteSent() {
        IOException failed = null;
        for (TableWrites w : writes.values()) {
            w.buffered.clear();
            try {
                w.deleteSent(startTs); // forgets what it deleted: a later attempt retries only the rest
            } catch (IOException | RuntimeException e) {
                if (failed == null) {
                    failed = new IOException("deleting its versions in " + w.name + " failed: " + e, e);
                }
            }
        }
        bufferedBytes = 0;
        return failed;
    }
}
