package io.sibyl.bench.ttable;

import io.sibyl.client.TTable;
import io.sibyl.client.Transaction;
import io.sibyl.client.TransactionManager;
import org.HdrHistogram.Histogram;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.util.Bytes;

import java.io.PrintStream;
import java.util.Locale;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * Measures how stale read-only transactions begun from the replica are: one client commits a counter every few
 * milliseconds, another (that only reads) begins read-only transactions in a loop and notes, for each committed
 * value, how long after its commit was acknowledged the first snapshot that includes it began. Also counts
 * snapshots older than the client's bound (sibyl.client.readonly.max.staleness.ms), which must be none.
 */
final class StalenessProbe {
    private static final byte[] ROW = Bytes.toBytes("staleness-probe");
    private static final int MAX_COMMITS = 1 << 20;

    private StalenessProbe() {
    }

    static void run(Connection connection, int oraclePort, TableName table, byte[] family, double seconds,
                    PrintStream out) throws Exception {
        byte[] q = Bytes.toBytes("v");
        try (TransactionManager writer = TransactionManager.create(connection, "127.0.0.1", oraclePort);
             TransactionManager reader = TransactionManager.create(connection, "127.0.0.1", oraclePort);
             TTable t = new TTable(connection, table)) {
            long boundNanos = connection.getConfiguration().getLong(TransactionManager.READ_ONLY_MAX_STALENESS_MS,
                    100) * 1_000_000L;
            AtomicLongArray ackNanos = new AtomicLongArray(MAX_COMMITS);
            AtomicBoolean stop = new AtomicBoolean();
            Thread commits = new Thread(() -> {
                try {
                    for (int v = 1; v < MAX_COMMITS && !stop.get(); v++) {
                        Transaction tx = writer.begin();
                        t.put(tx, new Put(ROW).addColumn(family, q, Bytes.toBytes((long) v)));
                        writer.commit(tx);
                        ackNanos.set(v, System.nanoTime());
                        Thread.sleep(ThreadLocalRandom.current().nextInt(1, 20));
                    }
                } catch (Exception e) {
                    throw new IllegalStateException("the probe's writer failed", e);
                }
            }, "staleness-writer");
            commits.setDaemon(true);
            commits.start();
            Histogram visibleAfter = Variant.newHistogram();
            long reads = 0;
            long staler = 0;
            long lastSeen = 0;
            long end = System.nanoTime() + (long) (seconds * 1e9);
            while (System.nanoTime() < end) {
                long begun = System.nanoTime();
                Transaction tx = reader.beginReadOnly();
                byte[] value = t.get(tx, new Get(ROW).addColumn(family, q)).getValue(family, q);
                reader.commit(tx);
                reads++;
                long seen = value == null ? 0 : Bytes.toLong(value);
                for (long v = lastSeen + 1; v <= seen; v++) {
                    long ack = ackNanos.get((int) v);
                    visibleAfter.recordValue(ack == 0 ? 0 : Math.max(0, begun - ack)); // 0: seen before the ack
                }
                lastSeen = Math.max(lastSeen, seen);
                // A value acknowledged more than the bound before this begin must be in its snapshot.
                long newer = seen + 1;
                long ack = newer < MAX_COMMITS ? ackNanos.get((int) newer) : 0;
                if (ack != 0 && ack < begun - boundNanos) {
                    staler++;
                }
            }
            stop.set(true);
            commits.join(10_000);
            out.printf(Locale.ROOT, "staleness of read-only transactions from the replica (bound %d ms, a client"
                            + " that only reads): %d commits seen, visible to a new snapshot after p50 %.1f ms,"
                            + " p99 %.1f ms, max %.1f ms; %d read-only transactions, %d staler than the bound%n",
                    boundNanos / 1_000_000L, visibleAfter.getTotalCount(), visibleAfter.getValueAtPercentile(50) / 1e6,
                    visibleAfter.getValueAtPercentile(99) / 1e6, visibleAfter.getMaxValue() / 1e6, reads, staler);
            out.printf(Locale.ROOT, "RESULT op=staleness bound_ms=%d commits=%d p50_ms=%.1f p99_ms=%.1f max_ms=%.1f"
                            + " reads=%d staler_than_bound=%d%n", boundNanos / 1_000_000L, visibleAfter.getTotalCount(),
                    visibleAfter.getValueAtPercentile(50) / 1e6, visibleAfter.getValueAtPercentile(99) / 1e6,
                    visibleAfter.getMaxValue() / 1e6, reads, staler);
        }
    }
}
