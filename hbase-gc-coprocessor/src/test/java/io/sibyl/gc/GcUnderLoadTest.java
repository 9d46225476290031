package io.sibyl.gc;

import io.sibyl.client.SnapshotExpiredException;
import io.sibyl.client.TTable;
import io.sibyl.client.Transaction;
import io.sibyl.client.TransactionManager;
import io.sibyl.client.oracle.OracleClient;
import io.sibyl.client.oracle.RowIds;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.CoprocessorDescriptorBuilder;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.regionserver.HRegion;
import org.apache.hadoop.hbase.regionserver.HStore;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The collector under a live transactional workload: transfers (with rollbacks after their writes reached HBase, and
 * writers abandoned without clean-up), audits, and long readers that re-read their snapshot for seconds, while the
 * table is flushed, minor- and major-compacted, split and merged again, all with the collector loaded. Two families:
 * balances, and a memo that is present (the balance) when the balance is even and deleted (a tombstone) when odd,
 * so every snapshot has a checkable invariant across families and tombstones are collected as they come and go.
 */
@ExtendWith(GcCluster.class)
class GcUnderLoadTest {
    private static final byte[] BALANCE = Bytes.toBytes("a");
    private static final byte[] MEMO = Bytes.toBytes("b");
    private static final byte[] Q = Bytes.toBytes("v");
    private static final int ACCOUNTS = 16;
    private static final long OPENING = 1000;
    private static final long RUN_NANOS = TimeUnit.SECONDS.toNanos(12);
    /** The client's reserved delete value (io.sibyl.client.Tombstones.VALUE), for writers abandoned mid-delete. */
    private static final byte[] TOMBSTONE = "\0sibyl:tombstone:v1\0\0\0\0\0".getBytes(StandardCharsets.ISO_8859_1);

    private static byte[] row(int account) {
        return Bytes.toBytes(String.format("acct-%02d", account));
    }

    @Test
    void transfersAuditsAndLongReadersStayExactWhileTheTableIsFlushedCompactedSplitAndMerged() throws Exception {
        GcCluster cluster = GcCluster.get();
        TableName name = TableName.valueOf("underload");
        try (Admin admin = cluster.connection().getAdmin()) {
            admin.createTable(TableDescriptorBuilder.newBuilder(name)
                    .setColumnFamily(TTable.familyDescriptor(BALANCE))
                    .setColumnFamily(TTable.familyDescriptor(MEMO))
                    .setCoprocessor(CoprocessorDescriptorBuilder.of(SibylGcCoprocessor.class.getName()))
                    .build());
        }
        Configuration writeThroughConf = new Configuration(cluster.configuration());
        writeThroughConf.set(TransactionManager.ORACLE_ADDRESS, "127.0.0.1:" + cluster.oraclePort());
        writeThroughConf.set(TransactionManager.WRITE_BUFFER_BYTES, "0"); // rollbacks then have versions to delete
        writeThroughConf.set(TransactionManager.READ_VERSIONS, "1"); // reads walk back through versions
        for (Map.Entry<String, String> e : Map.of(TransactionManager.RETRY_ATTEMPTS, "200",
                TransactionManager.RETRY_BACKOFF_MS, "2", TransactionManager.RETRY_BACKOFF_MAX_MS, "50").entrySet()) {
            writeThroughConf.set(e.getKey(), e.getValue());
        }
        Configuration bufferedConf = new Configuration(writeThroughConf);
        bufferedConf.unset(TransactionManager.WRITE_BUFFER_BYTES);
        bufferedConf.unset(TransactionManager.READ_VERSIONS);
        try (TransactionManager buffered = TransactionManager.create(bufferedConf);
             TransactionManager writeThrough = TransactionManager.create(writeThroughConf);
             OracleClient raw = OracleClient.connect("127.0.0.1", cluster.oraclePort());
             TTable table = new TTable(cluster.connection(), name)) {
            buffered.run(tx -> {
                for (int a = 0; a < ACCOUNTS; a++) {
                    setBalance(table, tx, a, OPENING);
                }
                return null;
            });

            AtomicLongArray delta = new AtomicLongArray(ACCOUNTS);
            AtomicBoolean stop = new AtomicBoolean();
            ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
            AtomicInteger transfers = new AtomicInteger();
            AtomicInteger rollbacks = new AtomicInteger();
            AtomicInteger abandoned = new AtomicInteger();
            AtomicInteger audits = new AtomicInteger();
            AtomicInteger longReads = new AtomicInteger();
            AtomicInteger expired = new AtomicInteger();
            List<Thread> threads = new ArrayList<>();
            for (int w = 0; w < 3; w++) {
                TransactionManager tm = w == 0 ? buffered : writeThrough;
                threads.add(worker("transfer-" + w, stop, failures, () -> {
                    ThreadLocalRandom rnd = ThreadLocalRandom.current();
                    if (rnd.nextInt(15) == 0) {
                        abandonWrite(raw, cluster, name, rnd.nextInt(ACCOUNTS), rnd.nextBoolean());
                        abandoned.incrementAndGet();
                        return;
                    }
                    int from = rnd.nextInt(ACCOUNTS);
                    int to = (from + 1 + rnd.nextInt(ACCOUNTS - 1)) % ACCOUNTS;
                    long amount = 1 + rnd.nextInt(9);
                    boolean giveUp = rnd.nextInt(8) == 0;
                    boolean done = tm.run(tx -> {
                        long f = balance(table, tx, from);
                        long t = balance(table, tx, to);
                        setBalance(table, tx, from, f - amount);
                        setBalance(table, tx, to, t + amount);
                        if (giveUp) {
                            tm.rollback(tx);
                            return false;
                        }
                        return true;
                    });
                    if (done) {
                        delta.addAndGet(from, -amount);
                        delta.addAndGet(to, amount);
                        transfers.incrementAndGet();
                    } else {
                        rollbacks.incrementAndGet();
                    }
                }));
            }
            threads.add(worker("auditor", stop, failures, () -> {
                TreeMap<String, String> seen = buffered.run(tx -> readAll(table, tx));
                checkInvariant(seen);
                audits.incrementAndGet();
            }));
            for (int r = 0; r < 2; r++) {
                TransactionManager tm = r == 0 ? buffered : writeThrough;
                threads.add(worker("long-reader-" + r, stop, failures, () -> {
                    Transaction tx = tm.begin();
                    try {
                        TreeMap<String, String> first = readAll(table, tx);
                        checkInvariant(first);
                        for (int k = 0; k < 8 && !stop.get(); k++) {
                            Thread.sleep(250);
                            assertEquals(first, readAll(table, tx), "snapshot " + tx.getStartTimestamp()
                                    + " changed after " + (k + 1) + " re-reads");
                            longReads.incrementAndGet();
                        }
                        tm.commit(tx);
                    } catch (UncheckedIOException e) {
                        if (!(e.getCause() instanceof SnapshotExpiredException)) {
                            throw e;
                        }
                        expired.incrementAndGet(); // a stalled JVM missed heartbeats: not what is tested here
                        tm.rollback(tx);
                    }
                }));
            }
            long t0 = System.nanoTime();
            threads.forEach(Thread::start);
            int round = 0;
            boolean split = false;
            boolean merged = false;
            try (Admin admin = cluster.connection().getAdmin()) {
                // The split and the merge happen however slow the machine is; the run ends after both.
                while ((System.nanoTime() - t0 < RUN_NANOS || !merged) && failures.isEmpty()
                        && System.nanoTime() - t0 < 6 * RUN_NANOS) {
                    round++;
                    admin.flush(name);
                    if (round % 4 == 0) {
                        cluster.majorCompact(name);
                    } else {
                        admin.compact(name); // minor: HBase picks some of the files
                    }
                    if (!split && System.nanoTime() - t0 > RUN_NANOS / 4) {
                        admin.split(name, row(ACCOUNTS / 2));
                        split = awaitRegions(admin, name, 2);
                        System.out.printf("split at %.1f s, after %d transfers%n", (System.nanoTime() - t0) / 1e9,
                                transfers.get());
                    } else if (split && !merged && System.nanoTime() - t0 > RUN_NANOS * 2 / 3) {
                        merged = mergeAll(admin, cluster, name);
                        System.out.printf("merged at %.1f s, after %d transfers%n", (System.nanoTime() - t0) / 1e9,
                                transfers.get());
                    }
                    Thread.sleep(200);
                }
            } finally {
                stop.set(true);
                for (Thread th : threads) {
                    th.join(60_000);
                }
            }
            if (!failures.isEmpty()) {
                AssertionError e = new AssertionError("workload failed: " + failures.peek(), failures.peek());
                failures.stream().skip(1).limit(5).forEach(e::addSuppressed);
                throw e;
            }
            System.out.printf("under load: %d transfers, %d rollbacks, %d abandoned, %d audits, %d long re-reads,"
                    + " %d expired snapshots, %d maintenance rounds, split %s, merged %s%n", transfers.get(),
                    rollbacks.get(), abandoned.get(), audits.get(), longReads.get(), expired.get(), round, split,
                    merged);
            assertTrue(split && merged, "the table was split and merged back under load");
            assertTrue(transfers.get() > 0 && audits.get() > 0 && longReads.get() > 0, "every role made progress");

            TreeMap<String, String> end = buffered.run(tx -> readAll(table, tx));
            checkInvariant(end);
            for (int a = 0; a < ACCOUNTS; a++) {
                assertEquals(Long.toString(OPENING + delta.get(a)), end.get(Bytes.toString(row(a))).split("/")[0],
                        "account " + a + ": opening balance plus exactly the committed transfers");
            }

            // Quiet now: once T_max passes every writer, a major compaction leaves one version of each balance and
            // at most one memo (none where the last committed write is a tombstone), so collection really ran.
            pushTmax(raw);
            List<String> left = new ArrayList<>();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            do {
                cluster.flush(name);
                cluster.majorCompact(name);
                left = surplusVersions(cluster, name, end);
            } while (!left.isEmpty() && System.nanoTime() < deadline);
            assertEquals(List.of(), left, "versions no snapshot can read are gone");
        }
    }

    private interface Step {
        void run() throws Exception;
    }

    private static Thread worker(String name, AtomicBoolean stop, ConcurrentLinkedQueue<Throwable> failures,
                                 Step step) {
        Thread t = new Thread(() -> {
            try {
                while (!stop.get()) {
                    step.run();
                }
            } catch (Throwable e) {
                failures.add(new AssertionError(name + ": " + e, e));
            }
        }, name);
        t.setDaemon(true);
        return t;
    }

    private static long balance(TTable table, Transaction tx, int account) {
        try {
            byte[] v = table.get(tx, new Get(row(account)).addColumn(BALANCE, Q)).getValue(BALANCE, Q);
            if (v == null) {
                throw new AssertionError("account " + account + " has no balance in snapshot " + tx.getStartTimestamp());
            }
            return Long.parseLong(Bytes.toString(v));
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The balance, and the memo: the balance again if it is even, deleted if it is odd. */
    private static void setBalance(TTable table, Transaction tx, int account, long balance) {
        try {
            byte[] text = Bytes.toBytes(Long.toString(balance));
            table.put(tx, new Put(row(account)).addColumn(BALANCE, Q, text));
            if (balance % 2 == 0) {
                table.put(tx, new Put(row(account)).addColumn(MEMO, Q, text));
            } else {
                table.delete(tx, new Delete(row(account)).addColumn(MEMO, Q));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** Row to "balance/memo" ("-" for no memo), as the snapshot shows them, through a scan across every region. */
    private static TreeMap<String, String> readAll(TTable table, Transaction tx) {
        TreeMap<String, String> seen = new TreeMap<>();
        try (ResultScanner s = table.getScanner(tx, new Scan())) {
            for (Result r : s) {
                byte[] b = r.getValue(BALANCE, Q);
                byte[] m = r.getValue(MEMO, Q);
                seen.put(Bytes.toString(r.getRow()), (b == null ? "none" : Bytes.toString(b)) + "/"
                        + (m == null ? "-" : Bytes.toString(m)));
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
        return seen;
    }

    private static void checkInvariant(TreeMap<String, String> seen) {
        assertEquals(ACCOUNTS, seen.size(), "every account is there: " + seen);
        long total = 0;
        for (Map.Entry<String, String> e : seen.entrySet()) {
            String[] parts = e.getValue().split("/");
            long balance = Long.parseLong(parts[0]);
            total += balance;
            assertEquals(balance % 2 == 0 ? parts[0] : "-", parts[1], e.getKey() + ": memo matches balance " + seen);
        }
        assertEquals(ACCOUNTS * OPENING, total, "total of " + seen);
    }

    /** A writer that put a version straight into HBase and whose client died: the oracle aborts it, nobody cleans. */
    private static void abandonWrite(OracleClient raw, GcCluster cluster, TableName name, int account,
                                     boolean tombstone) throws Exception {
        long ts = raw.begin().get(10, TimeUnit.SECONDS);
        try (Table t = cluster.connection().getTable(name)) {
            t.put(new Put(row(account)).addColumn(BALANCE, Q, ts, Bytes.toBytes("-999999"))
                    .addColumn(MEMO, Q, ts, tombstone ? TOMBSTONE : Bytes.toBytes("junk")));
        }
        raw.abort(ts).get(10, TimeUnit.SECONDS);
    }

    private static boolean awaitRegions(Admin admin, TableName name, int count) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (admin.getRegions(name).size() != count) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(name + " did not get " + count + " regions: " + admin.getRegions(name));
            }
            Thread.sleep(100);
        }
        return true;
    }

    /**
     * Merges the split table back. A daughter is mergeable only once no file of it, current or compacted away, refers
     * to its parent: compact, then archive the compacted files now (HBase's chore does it every two minutes).
     */
    private static boolean mergeAll(Admin admin, GcCluster cluster, TableName name) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            cluster.majorCompact(name);
            for (HRegion r : cluster.util().getMiniHBaseCluster().getRegions(name)) {
                for (HStore s : r.getStores()) {
                    s.closeAndArchiveCompactedFiles(); // skips a file a scanner still reads: then try again
                }
            }
            byte[][] names = admin.getRegions(name).stream().map(RegionInfo::getEncodedNameAsBytes)
                    .toArray(byte[][]::new);
            try {
                admin.mergeRegionsAsync(names, false).get(60, TimeUnit.SECONDS);
                return awaitRegions(admin, name, 1);
            } catch (Exception e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(200);
            }
        }
    }

    /** Enough commits elsewhere that T_max passes every writer so far (the oracle's commit window is tiny). */
    private static void pushTmax(OracleClient raw) throws Exception {
        for (int i = 0; i < 2 * GcCluster.COMMIT_WINDOW; i++) {
            long ts = raw.begin().get(10, TimeUnit.SECONDS);
            raw.commit(ts, new long[] {RowIds.of("elsewhere", Bytes.toBytes(i))}).get(10, TimeUnit.SECONDS);
        }
    }

    /** Columns holding more versions than the last committed state needs. */
    private static List<String> surplusVersions(GcCluster cluster, TableName name, TreeMap<String, String> end)
            throws IOException {
        List<String> surplus = new ArrayList<>();
        for (int a = 0; a < ACCOUNTS; a++) {
            byte[] row = row(a);
            int balances = cluster.versions(name, row, BALANCE, Q).size();
            int memos = cluster.versions(name, row, MEMO, Q).size();
            int memosNeeded = end.get(Bytes.toString(row)).endsWith("/-") ? 0 : 1;
            if (balances != 1 || memos != memosNeeded) {
                surplus.add(Bytes.toString(row) + ": " + balances + " balances, " + memos + " memos");
            }
        }
        return surplus;
    }
}
