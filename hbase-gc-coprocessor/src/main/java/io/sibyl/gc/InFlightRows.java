package io.sibyl.gc;

import org.apache.hadoop.hbase.util.Bytes;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.NavigableMap;
import java.util.concurrent.ConcurrentSkipListMap;

/**
 * The rows of one region with a fast-path write between its ticket request and the moment HBase makes it visible.
 * A read of such a row waits until the write is visible: a transaction may have begun after the oracle handed out the
 * ticket, so its snapshot includes the write, and it must not read the row without it first (docs/architecture.md,
 * Fast paths). Reads of rows with nothing in flight, the common case, pay one map lookup.
 */
final class InFlightRows {
    /** Row to the number of writes in flight there (one, unless a batch carries the same row twice). */
    private final ConcurrentSkipListMap<byte[], Integer> rows = new ConcurrentSkipListMap<>(Bytes.BYTES_COMPARATOR);

    synchronized void add(byte[] row) {
        rows.merge(row, 1, Integer::sum);
    }

    synchronized void remove(byte[] row) {
        rows.computeIfPresent(row, (k, n) -> n == 1 ? null : n - 1);
        notifyAll();
    }

    /** Waits until no write is in flight on {@code row}. */
    void awaitRow(byte[] row, long timeoutMillis) throws IOException {
        if (rows.isEmpty() || !rows.containsKey(row)) {
            return;
        }
        await(row, row, timeoutMillis);
    }

    /**
     * Waits until no write is in flight on a row a scan from {@code start} to {@code stop} may read (empty: that end
     * of the table; either order, both ends included, since waiting for a row the scan would not read is harmless).
     */
    void awaitRange(byte[] start, byte[] stop, long timeoutMillis) throws IOException {
        if (rows.isEmpty()) {
            return;
        }
        byte[] low = start;
        byte[] high = stop;
        if (low.length > 0 && high.length > 0 && Bytes.compareTo(low, high) > 0) {
            low = stop;
            high = start;
        }
        await(low, high, timeoutMillis);
    }

    private synchronized void await(byte[] low, byte[] high, long timeoutMillis) throws IOException {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        while (!within(low, high).isEmpty()) {
            long left = (deadline - System.nanoTime()) / 1_000_000L;
            if (left <= 0) {
                throw new IOException("a single-row transaction committing in this region server did not finish"
                        + " within " + timeoutMillis + " ms; the read was not served, retry it");
            }
            try {
                wait(left);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("interrupted while waiting for a single-row transaction");
            }
        }
    }

    private NavigableMap<byte[], Integer> within(byte[] low, byte[] high) {
        if (low.length == 0 && high.length == 0) {
            return rows;
        }
        if (low.length == 0) {
            return rows.headMap(high, true);
        }
        if (high.length == 0) {
            return rows.tailMap(low, true);
        }
        return rows.subMap(low, true, high, true);
    }
}
