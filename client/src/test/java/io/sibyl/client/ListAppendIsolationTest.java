package io.sibyl.client;

import io.sibyl.client.SiHistory.Outcome;
import io.sibyl.client.SiHistory.Recorder;
import io.sibyl.client.SiHistory.Tx;
import io.sibyl.client.oracle.JournaledOracle;
import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import io.sibyl.oracle.ha.LeaderZnode;
import io.sibyl.oracle.journal.BookKeeperCluster;
import io.sibyl.oracle.journal.JournalSettings;
import io.sibyl.protocol.LeaderRecord;
import org.apache.hadoop.hbase.MiniHBaseCluster;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Append;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hadoop.hbase.util.JVMClusterUtil.RegionServerThread;
import org.apache.zookeeper.ZooKeeper;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Elle-style list-append workload on real components: threads of two clients (one buffering writes, one sending
 * them at once) run short random transactions that read whole lists, append unique elements (read the list, write it
 * back one longer) and scan key ranges, over a few hot keys in three regions. Every attempt is recorded with what it
 * read and how it ended, and {@link SiHistoryChecker} then proves the history is snapshot isolation: one version
 * order per key, no aborted or intermediate reads, one snapshot per transaction, no lost update, no dependency cycle
 * SI forbids, and real-time order (a transaction begun after a commit returned sees it). The same check runs without
 * faults and across oracle takeovers on the BookKeeper journal.
 */
@ExtendWith(MiniCluster.class)
@Timeout(value = 240, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ListAppendIsolationTest {
    /**
     * Rows, and keys in use at a time. Keys are retired as the workload goes (Elle does the same): logical key L is
     * column {@code L / ROWS} of row {@code L % ROWS}, and the window of keys in use moves up by one every
     * {@link #APPENDS_PER_SHIFT} appends, so lists stay short (reads, the history and the check stay linear in
     * time) while the same 12 rows stay hot.
     */
    static final int ROWS = 12;
    static final int APPENDS_PER_SHIFT = 40;
    static final int THREADS = 6;
    /** Multiplies the workload's duration (and the time between faults), for a longer soak: -Delle.scale=4. */
    static final int SCALE = Integer.getInteger("elle.scale", 1);
    static final byte[] CF = Bytes.toBytes("cf");
    /** Three regions, so transactions and scans span region boundaries. */
    static final byte[][] SPLITS = {row(4), row(8)};
    /** The waits of the fault scenarios (here and in the gc module): a slow machine may take that long. */
    static final ConditionFactory WITHIN_A_MINUTE = await().atMost(Duration.ofMinutes(1))
            .pollInterval(Duration.ofMillis(50)).pollInSameThread();
    /** Oracles of the failover test: in-process, journaled, a roomy conflict table. */
    static final OracleConfig JOURNALED = OracleConfig.defaults().withPort(0)
            .withCapacities(1 << 16, 1 << 14, 1 << 12);

    @RegisterExtension
    static final BookKeeperCluster bookies = BookKeeperCluster.perTestClass(3);

    static byte[] row(int logicalKey) {
        return Bytes.toBytes(String.format("r%02d", logicalKey % ROWS));
    }

    static byte[] column(int logicalKey) {
        return Bytes.toBytes("l" + logicalKey / ROWS);
    }

    /** The logical key of a cell. */
    static int logicalKey(byte[] row, byte[] column) {
        return Integer.parseInt(Bytes.toString(column).substring(1)) * ROWS
                + Integer.parseInt(Bytes.toString(row).substring(1));
    }

    /** Clients that wait out a takeover (a minute) but do not retry: every attempt goes into the history. */
    static Map<String, String> clientSettings(boolean writeThrough) {
        Map<String, String> s = new HashMap<>();
        s.put(TransactionManager.FAILOVER_TIMEOUT_MS, "60000");
        if (writeThrough) {
            // Writes reach HBase before the commit (readers meet uncommitted versions), and reads fetch one version
            // at a time, so they walk down past those versions and aborted ones.
            s.put(TransactionManager.WRITE_BUFFER_BYTES, "0");
            s.put(TransactionManager.READ_VERSIONS, "1");
        }
        return s;
    }

    @Test
    void listAppendHistoryWithoutFaultsIsSnapshotIsolation() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("elle", SPLITS, "cf");
        try (TransactionManager buffered = c.manager(clientSettings(false));
             TransactionManager writeThrough = c.manager(clientSettings(true));
             Workload w = new Workload(name, List.of(buffered, writeThrough))) {
            w.run(SCALE * 15_000L, () -> {
            });
            w.checkSnapshotIsolation(buffered, "no faults");
        }
    }

    /**
     * Every transaction serializable (the clients' sibyl.client.isolation): the history must have no dependency cycle
     * at all, the write skew that snapshot isolation allows included.
     */
    @Test
    void listAppendHistoryOfSerializableTransactionsIsSerializable() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("elle_ser", SPLITS, "cf");
        Map<String, String> buffered = clientSettings(false);
        buffered.put(TransactionManager.ISOLATION, "serializable");
        Map<String, String> writeThrough = clientSettings(true);
        writeThrough.put(TransactionManager.ISOLATION, "serializable");
        try (TransactionManager one = c.manager(buffered);
             TransactionManager two = c.manager(writeThrough);
             Workload w = new Workload(name, List.of(one, two))) {
            w.run(SCALE * 10_000L, () -> {
            });
            w.checkSerializable(one, "serializable, no faults");
        }
    }

    /**
     * The same without faults on an oracle whose commit window holds 4 commits, so that T_max runs right behind the
     * newest commit: on six threads, readers begin while T_max passes their writers, long transactions keep their
     * snapshots while T_max passes them (their replicas must hold exactly the commits above them), writers it passes
     * are aborted as too old, and readers below T_max rely on the aborted set alone.
     */
    @Test
    void listAppendHistoryWhileTmaxRacesBehindTheNewestCommitIsSnapshotIsolation() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("elle-tmax", SPLITS, "cf");
        try (OracleServer oracle = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(1 << 10, 4, 1 << 12))) {
            Map<String, String> buffered = new HashMap<>(clientSettings(false));
            buffered.put(TransactionManager.ORACLE_ADDRESS, "127.0.0.1:" + oracle.port());
            Map<String, String> writeThrough = new HashMap<>(clientSettings(true));
            writeThrough.put(TransactionManager.ORACLE_ADDRESS, "127.0.0.1:" + oracle.port());
            try (TransactionManager one = c.manager(buffered);
                 TransactionManager two = c.manager(writeThrough);
                 Workload w = new Workload(name, List.of(one, two))) {
                w.run(SCALE * 10_000L, () -> {
                });
                w.checkSnapshotIsolation(one, "T_max racing");
                AtomicLong tooOld = w.errors.get("commit: TOO_OLD");
                assertTrue(tooOld != null && tooOld.get() > 0, "T_max passed running writers: " + w.errors);
            }
        }
    }

    /**
     * The oracle is replaced three times while the workload runs: each new oracle recovers the journal, which fences
     * the one serving (it stops and drops its clients), and announces itself in ZooKeeper, where the clients find it.
     * Transactions running at a takeover end aborted or with an unknown outcome; the checker takes an unknown one as
     * committed exactly when someone read one of its appends, and every committed one must be there.
     */
    @Test
    void listAppendHistoryUnderOracleFailoverIsSnapshotIsolation() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("elle-failover", SPLITS, "cf");
        JournalSettings js = bookies.settings("elle-failover");
        String leaderZnode = "/sibyl/test/elle-failover/leader";
        ZooKeeper zk = bookies.zooKeeper(js);
        List<JournaledOracle> oracles = new ArrayList<>();
        try {
            JournaledOracle first = JournaledOracle.start(js, "oracle-0", JOURNALED);
            oracles.add(first);
            announce(zk, leaderZnode, first, "oracle-0");
            Map<String, String> zkClient = new HashMap<>();
            zkClient.put(TransactionManager.ORACLE_ADDRESS, "");
            zkClient.put(TransactionManager.ORACLE_ZK_CONNECT, bookies.zkConnect());
            zkClient.put(TransactionManager.ORACLE_LEADER_ZNODE, leaderZnode);
            Map<String, String> buffered = new HashMap<>(clientSettings(false));
            buffered.putAll(zkClient);
            Map<String, String> writeThrough = new HashMap<>(clientSettings(true));
            writeThrough.putAll(zkClient);
            try (TransactionManager one = c.manager(buffered);
                 TransactionManager two = c.manager(writeThrough);
                 Workload w = new Workload(name, List.of(one, two))) {
                w.run(SCALE * 30_000L, () -> {
                    for (int i = 1; i <= 3; i++) {
                        Thread.sleep(SCALE * 7_000L);
                        JournaledOracle prev = oracles.get(oracles.size() - 1);
                        long t0 = System.nanoTime();
                        JournaledOracle next = JournaledOracle.start(js, "oracle-" + i, JOURNALED);
                        oracles.add(next);
                        announce(zk, leaderZnode, next, "oracle-" + i);
                        assertTrue(prev.server().awaitFatalError(20, TimeUnit.SECONDS), "the fenced oracle stops");
                        System.out.printf("takeover %d: oracle-%d on port %d (epoch %d, in doubt %s) in %.1f s%n", i,
                                i, next.port(), next.recovered().epoch(), next.recovered().inDoubtRange(),
                                (System.nanoTime() - t0) / 1e9);
                    }
                });
                w.checkSnapshotIsolation(one, "oracle failover");
                assertTrue(one.connection().reconnects() >= 3 && two.connection().reconnects() >= 3,
                        "both clients followed the three takeovers: " + one.connection().reconnects() + ", "
                                + two.connection().reconnects());
            }
        } finally {
            for (int i = oracles.size() - 1; i >= 0; i--) {
                oracles.get(i).close();
            }
        }
    }

    /**
     * The region server holding the table (alone) is killed mid-run; the master reopens its regions on the other
     * server, replaying its WAL, while the clients carry on (their HBase operations give up within seconds, so the
     * outage shows as aborted transactions). Committed appends must all survive the replay, and nothing a rolled-back
     * or failed transaction wrote may be read.
     */
    @Test
    void listAppendHistoryAcrossARegionServerCrashIsSnapshotIsolation() throws Exception {
        MiniCluster c = MiniCluster.get();
        MiniHBaseCluster hbase = c.util().getMiniHBaseCluster();
        try (Admin admin = c.connection().getAdmin()) {
            boolean balancerWasOn = admin.balancerSwitch(false, true); // nothing may move but what we move
            ServerName original = hbase.getServerHoldingMeta();
            RegionServerThread extra = hbase.startRegionServer();
            ServerName doomed = extra.getRegionServer().getServerName();
            java.util.concurrent.atomic.AtomicBoolean killed = new java.util.concurrent.atomic.AtomicBoolean();
            try {
                TableName name = c.createTable("elle-rscrash", SPLITS, "cf");
                int regions = admin.getRegions(name).size();
                WITHIN_A_MINUTE.alias("the regions of " + name + " to open on " + doomed).until(() -> {
                    if (!hbase.getMaster().getServerManager().getOnlineServersList().contains(doomed)) {
                        return false;
                    }
                    for (RegionInfo r : admin.getRegions(name)) {
                        if (!admin.getRegions(doomed).contains(r)) {
                            admin.move(r.getEncodedNameAsBytes(), doomed);
                        }
                    }
                    return onServer(admin, doomed, name) == regions;
                });
                try (TransactionManager buffered = c.manager(crashSettings(false));
                     TransactionManager writeThrough = c.manager(crashSettings(true));
                     Workload w = new Workload(name, List.of(buffered, writeThrough))) {
                    w.run(SCALE * 20_000L, () -> {
                        Thread.sleep(SCALE * 6_000L);
                        long t0 = System.nanoTime();
                        hbase.killRegionServer(doomed);
                        killed.set(true);
                        WITHIN_A_MINUTE.alias("the regions to reopen on " + original)
                                .until(() -> onServer(admin, original, name) == regions);
                        System.out.printf("region server %s killed, regions back in %.1f s%n", doomed,
                                (System.nanoTime() - t0) / 1e9);
                        Thread.sleep(SCALE * 6_000L); // and a while of normal service after the recovery
                    });
                    w.checkSnapshotIsolation(buffered, "region server crash");
                }
            } finally {
                if (!killed.get()) {
                    hbase.killRegionServer(doomed);
                }
                extra.join(60_000);
                // Let the master finish with the dead server before the next test runs.
                WITHIN_A_MINUTE.alias("the master to finish recovering " + doomed).until(
                        () -> !hbase.getMaster().getServerManager().areDeadServersInProgress());
                admin.balancerSwitch(balancerWasOn, true);
            }
        }
    }

    /** HBase operations on a dead server's regions give up within seconds (as in RegionServerCrashTest). */
    static Map<String, String> crashSettings(boolean writeThrough) {
        Map<String, String> s = clientSettings(writeThrough);
        s.put("hbase.client.retries.number", "3");
        s.put("hbase.client.pause", "100");
        s.put("hbase.rpc.timeout", "3000");
        s.put("hbase.client.operation.timeout", "8000");
        s.put("hbase.client.meta.operation.timeout", "8000");
        s.put("hbase.client.scanner.timeout.period", "8000");
        return s;
    }

    private static long onServer(Admin admin, ServerName server, TableName table) throws IOException {
        return admin.getRegions(server).stream().filter(r -> r.getTable().equals(table)).count();
    }

    private static void announce(ZooKeeper zk, String path, JournaledOracle o, String owner) throws Exception {
        LeaderZnode.publish(zk, path, new LeaderRecord(o.recovered().epoch(), "127.0.0.1", o.port(), owner));
    }

    /** Something the test does while the workload runs (a fault), on its own thread. */
    interface Faults {
        void run() throws Exception;
    }

    /** The workload, its history and what went wrong on the client side. */
    static final class Workload implements AutoCloseable {
        /** Each client's table on its own HBase connection, so the client's HBase settings apply. */
        final Map<TransactionManager, TTable> tables = new java.util.LinkedHashMap<>();
        final ConcurrentLinkedQueue<Tx> history = new ConcurrentLinkedQueue<>();
        final Map<String, AtomicLong> errors = new ConcurrentHashMap<>();
        final AtomicLong elements = new AtomicLong();
        final ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        double seconds;
        /**
         * Percent of attempts that are one append as a single-row transaction ({@link TTable#append(
         * TransactionManager, Append)}): the region server commits it where the table loads the fast path.
         */
        int singleRowAppendPercent;

        Workload(TableName name, List<TransactionManager> managers) throws IOException {
            for (TransactionManager tm : managers) {
                tables.put(tm, new TTable(tm.getConnection(), name));
            }
        }

        @Override
        public void close() throws IOException {
            for (TTable t : tables.values()) {
                t.close();
            }
        }

        /**
         * Runs {@code THREADS} threads over the clients for {@code millis}, and {@code faults} meanwhile; the
         * workload goes on until the faults are done too (recovery may be slow on a busy machine).
         */
        void run(long millis, Faults faults) throws Exception {
            long t0 = System.nanoTime();
            long deadline = t0 + TimeUnit.MILLISECONDS.toNanos(millis);
            java.util.concurrent.atomic.AtomicBoolean faultsDone = new java.util.concurrent.atomic.AtomicBoolean();
            List<TransactionManager> managers = new ArrayList<>(tables.keySet());
            List<Thread> threads = new ArrayList<>();
            for (int i = 0; i < THREADS; i++) {
                TransactionManager tm = managers.get(i % managers.size());
                Random rnd = new Random(i * 7919L + System.nanoTime());
                threads.add(new Thread(() -> {
                    try {
                        while (System.nanoTime() < deadline || !faultsDone.get()) {
                            attempt(tm, rnd);
                        }
                    } catch (Throwable e) {
                        failures.add(e); // a broken result (not a failed operation): the test fails
                    }
                }, "elle-" + i + "-client" + (i % managers.size())));
            }
            Thread faulter = new Thread(() -> {
                try {
                    faults.run();
                } catch (Throwable e) {
                    failures.add(e);
                } finally {
                    faultsDone.set(true);
                }
            }, "elle-faults");
            threads.forEach(Thread::start);
            faulter.start();
            faulter.join();
            for (Thread t : threads) {
                // A thread ends after its last transaction, which may wait out a takeover (a minute at most).
                t.join(120_000);
                assertTrue(!t.isAlive(), t.getName() + " did not finish");
            }
            seconds = (System.nanoTime() - t0) / 1e9;
            if (!failures.isEmpty()) {
                throw new AssertionError("the workload or the faults failed: " + failures.peek(), failures.peek());
            }
        }

        /**
         * One transaction of 1 to 4 random operations, recorded whatever happens. It is never retried: a retry is a
         * new transaction with its own record. Operations that fail roll it back (aborted); a commit that fails
         * with no answer is of unknown outcome.
         */
        void attempt(TransactionManager tm, Random rnd) {
            TTable table = tables.get(tm);
            int kind = rnd.nextInt(100);
            if (kind < 8) {
                readLatest(tm, table, rnd);
                return;
            }
            if (kind < 8 + singleRowAppendPercent) {
                appendAlone(tm, table, rnd);
                return;
            }
            // Read-only transactions from the replica, held to their staleness bound (except for their own client).
            boolean readOnly = kind < 23;
            long staleNanos = readOnly ? tm.settings().readOnlyMaxStalenessMillis() * 1_000_000L : 0;
            Recorder rec = new Recorder(); // notes the time before begin(), for the real-time check
            Transaction tx;
            try {
                tx = readOnly ? tm.beginReadOnly() : tm.begin();
            } catch (RuntimeException e) {
                error(readOnly ? "beginReadOnly" : "begin", e);
                pause();
                return;
            }
            boolean committing = false;
            Outcome outcome;
            try {
                int n = 1 + rnd.nextInt(4);
                int lastAppended = -1;
                int base = (int) (elements.get() / APPENDS_PER_SHIFT); // the window of keys in use
                // One in fifty dawdles between operations: long transactions widen the windows for stale reads
                // (more of them would cut the number of transactions a lot).
                boolean slow = rnd.nextInt(50) == 0;
                for (int i = 0; i < n; i++) {
                    if (slow) {
                        Thread.sleep(20 + rnd.nextInt(150));
                    }
                    int p = rnd.nextInt(readOnly ? 45 : 100);
                    if (readOnly && p >= 30) {
                        p += 55; // a scan instead of an append
                    }
                    if (p < 22) {
                        int k = base + rnd.nextInt(ROWS);
                        rec.read(k, read(table, tx, k));
                    } else if (p < 30) {
                        // A multi-get of a few keys in one call (regions answer separately).
                        List<Integer> keys = new ArrayList<>();
                        List<Get> gets = new ArrayList<>();
                        for (int j = 0; j < 2 + rnd.nextInt(3); j++) {
                            int k = base + rnd.nextInt(ROWS);
                            keys.add(k);
                            gets.add(new Get(row(k)).addColumn(CF, column(k)));
                        }
                        Result[] rs = table.get(tx, gets);
                        for (int j = 0; j < keys.size(); j++) {
                            rec.read(keys.get(j), list(rs[j], keys.get(j)));
                        }
                    } else if (p < 85) {
                        // Sometimes append twice to one key: a reader must never see the first without the second.
                        int k = lastAppended >= 0 && rnd.nextInt(4) == 0 ? lastAppended : base + rnd.nextInt(ROWS);
                        List<Long> list = new ArrayList<>(read(table, tx, k));
                        rec.read(k, list);
                        long x = elements.incrementAndGet();
                        rec.append(k, x); // before the put: a failed put may still leave its version in HBase
                        list.add(x);
                        table.put(tx, new Put(row(k)).addColumn(CF, column(k), Bytes.toBytes(SiHistory.encode(list))));
                        lastAppended = k;
                    } else {
                        // 2 to 4 keys in consecutive rows (not wrapping around the last row).
                        int from = base + rnd.nextInt(ROWS - 1);
                        int to = Math.min(from + 2 + rnd.nextInt(3), from + ROWS - from % ROWS);
                        Map<Integer, List<Long>> seen = scan(table, tx, from, to, rnd.nextBoolean());
                        for (int k = from; k < to; k++) {
                            rec.read(k, seen.getOrDefault(k, List.of()));
                        }
                    }
                }
                if (rnd.nextInt(20) == 0) {
                    tm.rollback(tx); // on purpose: its appends must never be read
                    outcome = Outcome.ABORTED;
                } else {
                    committing = true;
                    tm.commit(tx);
                    outcome = Outcome.COMMITTED;
                }
            } catch (RollbackException e) {
                error("commit: " + e.getReason(), e);
                outcome = Outcome.ABORTED;
            } catch (CommitOutcomeUnknownException e) {
                error("commit: outcome unknown", e);
                outcome = Outcome.UNKNOWN;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                throw new IllegalStateException(e);
            } catch (IOException | RuntimeException e) {
                error((committing ? "commit: " : "op: ") + e.getClass().getSimpleName(), e);
                if (!committing) {
                    try {
                        tm.rollback(tx);
                    } catch (RuntimeException again) {
                        error("rollback: " + again.getClass().getSimpleName(), again);
                    }
                    outcome = Outcome.ABORTED; // never sent to commit: it cannot have committed
                } else {
                    outcome = switch (tx.getStatus()) {
                        case COMMITTED -> Outcome.COMMITTED;
                        case ROLLED_BACK -> Outcome.ABORTED;
                        default -> Outcome.UNKNOWN;
                    };
                }
                pause();
            }
            history.add(rec.finish(outcome, tx.getStartTimestamp(), tx.getCommitTimestamp(), staleNanos));
        }

        /**
         * One key read with {@link TTable#getLatest}, recorded as a transaction of one read that must see every
         * append acknowledged before it began (linearizable). One that fails read nothing and is left out.
         */
        private void readLatest(TransactionManager tm, TTable table, Random rnd) {
            Recorder rec = new Recorder();
            int k = (int) (elements.get() / APPENDS_PER_SHIFT) + rnd.nextInt(ROWS);
            try {
                rec.read(k, list(table.getLatest(tm, new Get(row(k)).addColumn(CF, column(k))), k));
            } catch (IOException | RuntimeException e) {
                error("getLatest: " + e.getClass().getSimpleName(), e);
                pause();
                return;
            }
            history.add(rec.finish(Outcome.COMMITTED, 0, 0));
        }

        /**
         * One append as a transaction of its own, recorded as its read of the list (what it returned, less its own
         * element) and its append; ended with an unknown outcome if the call failed without a rollback.
         */
        private void appendAlone(TransactionManager tm, TTable table, Random rnd) {
            Recorder rec = new Recorder();
            int k = (int) (elements.get() / APPENDS_PER_SHIFT) + rnd.nextInt(ROWS);
            long x = elements.incrementAndGet();
            Outcome outcome;
            long version = 0;
            try {
                Result r = table.append(tm, new Append(row(k)).addColumn(CF, column(k), Bytes.toBytes("," + x)));
                List<Long> after = list(r, k);
                if (after.isEmpty() || after.get(after.size() - 1) != x) {
                    failures.add(new AssertionError("append of " + x + " to key " + k + " returned " + after));
                    return;
                }
                rec.read(k, after.subList(0, after.size() - 1));
                rec.append(k, x);
                version = r.rawCells()[0].getTimestamp();
                outcome = Outcome.COMMITTED;
            } catch (RollbackException e) {
                rec.append(k, x);
                error("single-row append: " + e.getReason(), e);
                outcome = Outcome.ABORTED;
            } catch (IOException | RuntimeException e) {
                rec.append(k, x);
                error("single-row append: " + e.getClass().getSimpleName(), e);
                outcome = Outcome.UNKNOWN;
                pause();
            }
            history.add(rec.finish(outcome, version, version));
        }

        private void error(String what, Throwable e) {
            errors.computeIfAbsent(what, x -> new AtomicLong()).incrementAndGet();
        }

        private static void pause() {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        static List<Long> read(TTable table, Transaction tx, int k) throws IOException {
            return list(table.get(tx, new Get(row(k)).addColumn(CF, column(k))), k);
        }

        static List<Long> list(Result r, int k) {
            byte[] v = r.getValue(CF, column(k));
            return SiHistory.decode(v == null ? null : Bytes.toString(v));
        }

        /**
         * Keys {@code from} (inclusive) to {@code to} (exclusive), in consecutive rows, forwards or backwards; with
         * {@code to} negative, every key in the table.
         */
        static Map<Integer, List<Long>> scan(TTable table, Transaction tx, int from, int to, boolean reversed)
                throws IOException {
            Map<Integer, List<Long>> out = new TreeMap<>();
            Scan s = new Scan();
            if (to >= 0) {
                s = reversed ? s.withStartRow(row(to - 1)).withStopRow(row(from), true).setReversed(true)
                        : s.withStartRow(row(from)).withStopRow(row(to - 1), true);
                for (int k = from; k < to; k++) {
                    s.addColumn(CF, column(k));
                }
                s.setCaching(2); // small batches: the scan crosses several RPCs
            }
            int lastRow = -1;
            try (ResultScanner scanner = table.getScanner(tx, s)) {
                for (Result r : scanner) {
                    int rowNo = Integer.parseInt(Bytes.toString(r.getRow()).substring(1));
                    if (lastRow >= 0 && (reversed ? rowNo >= lastRow : rowNo <= lastRow)) {
                        throw new AssertionError("the scan returned row " + rowNo + " after " + lastRow
                                + (reversed ? " (reversed)" : ""));
                    }
                    lastRow = rowNo;
                    for (org.apache.hadoop.hbase.Cell c : r.rawCells()) {
                        int k = logicalKey(r.getRow(), org.apache.hadoop.hbase.CellUtil.cloneQualifier(c));
                        if (to >= 0 && (k < from || k >= to)) {
                            continue; // another generation's column of a row in range
                        }
                        if (out.put(k, SiHistory.decode(Bytes.toString(org.apache.hadoop.hbase.CellUtil
                                .cloneValue(c)))) != null) {
                            throw new AssertionError("the scan returned key " + k + " twice");
                        }
                    }
                }
            }
            return out;
        }

        /**
         * Reads every key in a last transaction (so each committed append is in some read), then checks the whole
         * history and fails with the anomalies found.
         */
        void checkSnapshotIsolation(TransactionManager tm, String scenario) throws Exception {
            check(tm, scenario, false);
        }

        /** As {@link #checkSnapshotIsolation}, holding the history to serializability: no cycle of any kind. */
        void checkSerializable(TransactionManager tm, String scenario) throws Exception {
            check(tm, scenario, true);
        }

        private void check(TransactionManager tm, String scenario, boolean serializable) throws Exception {
            // A location cached during the faults can name a region moved away and since split or merged: the
            // region servers' stale "moved to" records can bounce the final scan between them until HBase gives up.
            tm.getConnection().clearRegionLocationCache();
            Recorder rec = new Recorder();
            Transaction tx = tm.begin();
            int keys = (int) (elements.get() / APPENDS_PER_SHIFT) + ROWS; // every key ever used
            Map<Integer, List<Long>> everything = scan(tables.get(tm), tx, 0, -1, false);
            for (int k = 0; k < keys; k++) {
                rec.read(k, everything.getOrDefault(k, List.of()));
            }
            assertTrue(everything.keySet().stream().allMatch(k -> k < keys), "keys beyond the window: " + everything.keySet());
            tm.commit(tx);
            history.add(rec.finish(Outcome.COMMITTED, tx.getStartTimestamp(), tx.getCommitTimestamp()));
            long t0 = System.nanoTime();
            SiHistoryChecker.Report report = serializable ? SiHistoryChecker.checkSerializable(List.copyOf(history))
                    : SiHistoryChecker.check(List.copyOf(history));
            Map<String, Long> perClient = new TreeMap<>();
            history.stream().filter(t -> t.outcome() == Outcome.COMMITTED && t.thread().contains("-client"))
                    .forEach(t -> perClient.merge(t.thread().substring(t.thread().indexOf("client")), 1L, Long::sum));
            System.out.printf("list-append, %s: %.1f s of workload, checked in %.2f s: %s; commits per client %s;"
                            + " client errors %s%n", scenario, seconds, (System.nanoTime() - t0) / 1e9,
                    report.summary(), perClient, new TreeMap<>(errors));
            if (!report.ok()) {
                StringBuilder sb = new StringBuilder((serializable ? "not serializable (" : "not snapshot isolation (")
                        + scenario + "): "
                        + report.summary());
                report.findings().forEach(f -> sb.append("\n  ").append(f));
                throw new AssertionError(sb.toString());
            }
            assertTrue(report.committed() > 100, "too little committed to mean anything: " + report.summary());
            assertTrue(report.appends() > 100 && report.edges() > 100, report.summary());

            // The checker is not vacuous on this history: pretend a committed writer read by the last transaction
            // had aborted, and it must report the reads of its appends (G1a).
            List<Tx> all = List.copyOf(history);
            Tx last = all.stream().filter(t -> t.id() == rec.id).findFirst().orElseThrow();
            java.util.Set<Long> finalElements = new java.util.HashSet<>();
            last.ops().forEach(op -> finalElements.addAll(op.list()));
            Tx victim = all.stream().filter(t -> t.outcome() == Outcome.COMMITTED && t.ops().stream()
                    .anyMatch(op -> op.append() && finalElements.contains(op.element()))).findFirst().orElseThrow();
            List<Tx> doctored = all.stream().map(t -> t != victim ? t : new Tx(t.id(), t.thread(), t.ops(),
                    Outcome.ABORTED, t.invokeNanos(), Long.MAX_VALUE, t.startTs(), t.commitTs())).toList();
            assertTrue(SiHistoryChecker.check(doctored).has(SiHistoryChecker.Anomaly.G1A),
                    "the checker missed reads of T" + victim.id() + " marked aborted");
        }
    }
}
