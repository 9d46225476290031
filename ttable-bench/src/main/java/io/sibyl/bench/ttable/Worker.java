package io.sibyl.bench.ttable;

import io.sibyl.client.RollbackException;
import io.sibyl.client.Transaction;
import io.sibyl.client.TransactionManager;
import org.HdrHistogram.Histogram;
import org.apache.hadoop.hbase.client.Table;

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.util.SplittableRandom;

/** The state of one client thread: its random source, its raw HBase tables, an open transaction if any. */
final class Worker {
    final SplittableRandom random;
    final byte[] value;
    /** Raw tables, opened once per thread (the cheapest way to use plain HBase). */
    final Table rawRead;
    final Table rawWrite;
    /** The transaction of the amortized-read variants, kept across operations until it did R reads. */
    Transaction openTx;
    int openTxReads;

    Histogram histogram = Variant.newHistogram();
    long units;
    long ops;
    long aborts;
    long errors;
    /** CPU time of this thread in the last round: the client-side work done in the calling thread. */
    long cpuNanos;
    Throwable firstError;

    private static final ThreadMXBean THREADS = ManagementFactory.getThreadMXBean();

    Worker(int index, long seed, int valueSize, Table rawRead, Table rawWrite) {
        this.random = new SplittableRandom(seed * 1_000_003L + index);
        this.value = new byte[valueSize];
        for (int i = 0; i < valueSize; i++) {
            value[i] = (byte) ('a' + random.nextInt(26));
        }
        this.rawRead = rawRead;
        this.rawWrite = rawWrite;
    }

    /** Runs {@code op} until {@code deadline} (System.nanoTime), recording each operation's latency. */
    void runUntil(Variant.Op op, long deadline, TransactionManager tm) {
        histogram.reset();
        long cpu0 = THREADS.getCurrentThreadCpuTime();
        units = 0;
        ops = 0;
        aborts = 0;
        errors = 0;
        do {
            long t0 = System.nanoTime();
            int done;
            try {
                done = op.run(this);
            } catch (RollbackException e) {
                aborts++;
                done = 0;
            } catch (Exception | AssertionError e) {
                errors++;
                if (firstError == null) {
                    firstError = e;
                }
                done = 0;
            }
            long t1 = System.nanoTime();
            histogram.recordValue(Math.min(t1 - t0, histogram.getHighestTrackableValue()));
            units += done;
            ops++;
        } while (System.nanoTime() < deadline);
        cpuNanos = THREADS.getCurrentThreadCpuTime() - cpu0;
        if (openTx != null) { // end of the round: the amortized-read transaction ends with it
            try {
                tm.commit(openTx);
            } catch (RollbackException | RuntimeException e) {
                errors++;
            }
            openTx = null;
            openTxReads = 0;
        }
    }
}
