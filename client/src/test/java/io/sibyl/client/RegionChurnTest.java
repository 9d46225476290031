package io.sibyl.client;

import org.apache.hadoop.hbase.MiniHBaseCluster;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.CompactionState;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.regionserver.HRegion;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hadoop.hbase.util.JVMClusterUtil.RegionServerThread;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.IntStream;

import static io.sibyl.client.TestSupport.CF;
import static io.sibyl.client.TestSupport.V;
import static io.sibyl.client.TestSupport.b;
import static io.sibyl.client.TestSupport.io;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * HBase moves the data under running transactions: while transfers and list appends run, a churn thread keeps
 * splitting the table's regions at chosen rows, merging neighbours back, moving regions between two region servers,
 * closing and reopening them, flushing and major-compacting (and letting the catalog janitor clean up after splits
 * and merges). Auditors scan all accounts in one snapshot, forwards and backwards, in small batches with pauses (so
 * a scan is still open while the boundaries it crosses change), or read them in one multi-get: every audit must see
 * the exact total, and the final balances must hold exactly the committed transfers. The list-append history under
 * the same churn must be snapshot isolation ({@link SiHistoryChecker}). The test fails if the churn did not really
 * split, merge and move regions, or if the auditors did not run across it.
 *
 * <p>A second region server is started for the class and stopped afterwards (with this class's tables dropped
 * first), so regions really change servers; the balancer is off meanwhile. The client tests' minicluster does not
 * load the GC coprocessor, so flushes and compactions here keep every version (see hbase-gc-coprocessor's tests).
 */
@ExtendWith(MiniCluster.class)
@Timeout(value = 300, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RegionChurnTest {
    /**
     * The churn (and the workload with it) runs at least this long in each test, and on until it has split, merged
     * and moved regions twice each ({@link Churn#churnedEnough}), but no longer than {@link #MAX_CHURN_MILLIS};
     * -Dchurn.scale=4 for a longer soak.
     */
    static final long CHURN_MILLIS = 12_000L * Integer.getInteger("churn.scale", 1);
    static final long MAX_CHURN_MILLIS = CHURN_MILLIS + 80_000L;
    static final int ACCOUNTS = 60;
    static final long OPENING = 1000;
    static final int TRANSFER_THREADS = 6;
    static final int AUDITORS = 3;
    /** The churn keeps the table between one and this many regions. */
    static final int MAX_REGIONS = 6;
    static final long STEP_TIMEOUT_MS = 90_000;
    /** Each wait of a step, polled in the caller's thread like its other Admin calls. */
    private static final ConditionFactory STEP = await().atMost(Duration.ofMillis(STEP_TIMEOUT_MS))
            .pollInterval(Duration.ofMillis(50)).pollInSameThread();

    private static final List<TableName> TABLES = new ArrayList<>();
    private static boolean balancerWasOn;
    private static RegionServerThread extra;
    private static List<ServerName> servers;

    @BeforeAll
    static void startSecondRegionServer() throws Exception {
        MiniCluster c = MiniCluster.get();
        MiniHBaseCluster hbase = c.util().getMiniHBaseCluster();
        try (Admin admin = c.connection().getAdmin()) {
            balancerWasOn = admin.balancerSwitch(false, true); // nothing may move but what the churn moves
        }
        ServerName original = hbase.getServerHoldingMeta();
        extra = hbase.startRegionServer();
        ServerName second = extra.getRegionServer().getServerName();
        STEP.alias(second + " to be online at the master")
                .until(() -> hbase.getMaster().getServerManager().getOnlineServersList().contains(second));
        servers = List.of(original, second);
    }

    @AfterAll
    static void stopSecondRegionServer() throws Exception {
        MiniCluster c = MiniCluster.get();
        MiniHBaseCluster hbase = c.util().getMiniHBaseCluster();
        try (Admin admin = c.connection().getAdmin()) {
            try {
                for (TableName t : TABLES) { // nothing of this class's has to move back before the server stops
                    if (admin.tableExists(t)) {
                        admin.disableTable(t);
                        admin.deleteTable(t);
                    }
                }
            } finally {
                if (extra != null) {
                    ServerName second = extra.getRegionServer().getServerName();
                    hbase.stopRegionServer(second);
                    extra.join(STEP_TIMEOUT_MS);
                    STEP.alias("the master to finish with " + second)
                            .until(() -> !hbase.getMaster().getServerManager().areDeadServersInProgress());
                }
                admin.balancerSwitch(balancerWasOn, true);
            }
        }
    }

    private static TableName table(String prefix, byte[][] splits) throws IOException {
        TableName name = MiniCluster.get().createTable(prefix, splits, "cf");
        TABLES.add(name);
        return name;
    }

    private static Map<String, String> transferSettings(boolean writeThrough) {
        Map<String, String> s = new HashMap<>();
        s.put(TransactionManager.RETRY_ATTEMPTS, "1000");
        s.put(TransactionManager.RETRY_BACKOFF_MS, "2");
        s.put(TransactionManager.RETRY_BACKOFF_MAX_MS, "50");
        if (writeThrough) {
            s.put(TransactionManager.WRITE_BUFFER_BYTES, "0");
            s.put(TransactionManager.READ_VERSIONS, "1");
        }
        return s;
    }

    @Test
    void transfersStayExactWhileRegionsSplitMergeAndMove() throws Exception {
        MiniCluster c = MiniCluster.get();
        // Accounts in two regions, the transfer records ("xfer-...") in a third.
        TableName name = table("churn-accounts", new byte[][] {b(Accounts.account(ACCOUNTS / 2)), b("xfer")});
        List<byte[]> splitPoints = IntStream.range(1, ACCOUNTS).mapToObj(i -> b(Accounts.account(i))).toList();
        try (Admin admin = c.connection().getAdmin();
             Bank bank = new Bank(c, name)) {
            bank.open();
            Churn churn = new Churn(admin, c.util().getMiniHBaseCluster(), name, splitPoints);
            bank.start(churn);
            try {
                churn.run();
            } finally {
                bank.stop();
            }
            churn.settle(bank.buffered, bank.writeThrough);
            churn.report();
            bank.report();
            churn.assertChurned();
            bank.check();
        }
    }

    @Test
    void listAppendHistoryStaysSnapshotIsolationWhileRegionsSplitMergeAndMove() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = table("elle-churn", ListAppendIsolationTest.SPLITS);
        List<byte[]> splitPoints = IntStream.range(1, ListAppendIsolationTest.ROWS)
                .mapToObj(ListAppendIsolationTest::row).toList();
        try (Admin admin = c.connection().getAdmin();
             TransactionManager buffered = c.manager(ListAppendIsolationTest.clientSettings(false));
             TransactionManager writeThrough = c.manager(ListAppendIsolationTest.clientSettings(true));
             ListAppendIsolationTest.Workload w = new ListAppendIsolationTest.Workload(name,
                     List.of(buffered, writeThrough))) {
            Churn churn = new Churn(admin, c.util().getMiniHBaseCluster(), name, splitPoints);
            w.run(CHURN_MILLIS, churn::run);
            churn.settle(buffered, writeThrough);
            churn.report();
            churn.assertChurned();
            w.checkSnapshotIsolation(buffered, "region churn");
        }
    }

    /**
     * Changes the regions of one table until a deadline, one step at a time, each awaited: splits at chosen rows,
     * merges of neighbours, moves to the other server, close and reopen, flush, major compaction (which removes the
     * daughters' references to their parent, so they can split or merge again) and a catalog janitor run. HBase may
     * refuse a step (a region with references cannot split, a merged region not yet cleaned up cannot split or merge
     * again): refusals are counted, not errors.
     */
    static final class Churn {
        private final Admin admin;
        private final MiniHBaseCluster hbase;
        private final TableName table;
        private final List<byte[]> splitPoints;
        private final Random rnd = new Random();
        /** Region changes completed (splits, merges, moves, reopenings): auditors compare it before and after. */
        final AtomicInteger changes = new AtomicInteger();
        final Map<String, AtomicInteger> done = new ConcurrentHashMap<>();
        final Map<String, AtomicInteger> refused = new ConcurrentHashMap<>();
        final Map<String, String> refusalExamples = new ConcurrentHashMap<>();
        private int maxRegions;

        Churn(Admin admin, MiniHBaseCluster hbase, TableName table, List<byte[]> splitPoints) {
            this.admin = admin;
            this.hbase = hbase;
            this.table = table;
            this.splitPoints = splitPoints;
        }

        private enum Step { SPLIT, MERGE, MOVE, REOPEN, FLUSH, COMPACT }

        private static final Step[] CYCLE = {Step.SPLIT, Step.MOVE, Step.SPLIT, Step.FLUSH, Step.COMPACT, Step.MERGE,
                Step.REOPEN, Step.MOVE, Step.COMPACT, Step.MERGE, Step.SPLIT, Step.COMPACT};

        void run() throws Exception {
            long t0 = System.nanoTime();
            for (int i = 0; ; i++) {
                long elapsed = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
                if (elapsed >= MAX_CHURN_MILLIS || elapsed >= CHURN_MILLIS && churnedEnough()) {
                    break;
                }
                Step step = CYCLE[i % CYCLE.length];
                List<RegionInfo> regions = regions();
                maxRegions = Math.max(maxRegions, regions.size());
                if (step == Step.SPLIT && regions.size() >= MAX_REGIONS) {
                    step = Step.MERGE;
                } else if (step == Step.MERGE && regions.size() < 2) {
                    step = Step.SPLIT;
                }
                long stepStart = System.nanoTime();
                String outcome = "done";
                try {
                    switch (step) {
                        case SPLIT -> split(regions);
                        case MERGE -> merge(regions);
                        case MOVE -> move(regions);
                        case REOPEN -> reopen(regions);
                        case FLUSH -> {
                            admin.flush(table);
                            count(done, "flush");
                        }
                        case COMPACT -> compact();
                        default -> throw new IllegalStateException();
                    }
                } catch (IOException | ExecutionException e) {
                    Throwable cause = e instanceof ExecutionException && e.getCause() != null ? e.getCause() : e;
                    String kind = step + ": " + cause.getClass().getSimpleName();
                    count(refused, kind);
                    refusalExamples.putIfAbsent(kind, String.valueOf(cause.getMessage()).lines().findFirst()
                            .orElse(""));
                    outcome = "refused (" + cause.getClass().getSimpleName() + ")";
                }
                System.out.printf("%tT.%<tL churn of %s: %s %s in %d ms, %d regions before%n",
                        System.currentTimeMillis(), table, step, outcome,
                        (System.nanoTime() - stepStart) / 1_000_000, regions.size());
            }
        }

        /**
         * Waits for the last region change to finish and makes every given client look its regions up again. A
         * client's cached location can name a region that a split or merge has since removed, and the region
         * servers' "moved to" records can then send it back and forth between the two servers until HBase's retries
         * run out (seen in CI on the final read). Nothing the churn does is left in flight for the final checks.
         */
        void settle(TransactionManager... clients) throws Exception {
            STEP.alias("no region of " + table + " in transition").until(() -> admin.getClusterMetrics()
                    .getRegionStatesInTransition().stream().noneMatch(r -> r.getRegion().getTable().equals(table)));
            for (TransactionManager tm : clients) {
                tm.getConnection().clearRegionLocationCache();
            }
        }

        /** The table's online regions in key order (no split parents). */
        List<RegionInfo> regions() throws IOException {
            List<RegionInfo> out = new ArrayList<>();
            for (RegionInfo r : admin.getRegions(table)) {
                if (!r.isSplitParent() && !r.isOffline() && r.getReplicaId() == RegionInfo.DEFAULT_REPLICA_ID) {
                    out.add(r);
                }
            }
            out.sort(Comparator.comparing(RegionInfo::getStartKey, Bytes::compareTo));
            return out;
        }

        /** Splits the region holding a random split point that is not a boundary yet, at that point. */
        private void split(List<RegionInfo> regions) throws Exception {
            Set<String> boundaries = new HashSet<>();
            regions.forEach(r -> boundaries.add(Bytes.toStringBinary(r.getStartKey())));
            List<byte[]> candidates = splitPoints.stream()
                    .filter(p -> !boundaries.contains(Bytes.toStringBinary(p))).toList();
            byte[] point = candidates.get(rnd.nextInt(candidates.size()));
            RegionInfo target = regions.stream().filter(r -> r.containsRow(point)).findFirst().orElseThrow();
            admin.splitRegionAsync(target.getRegionName(), point).get(STEP_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            changes.incrementAndGet();
            count(done, "split");
        }

        /** Merges a random pair of neighbouring regions. */
        private void merge(List<RegionInfo> regions) throws Exception {
            int i = rnd.nextInt(regions.size() - 1);
            admin.mergeRegionsAsync(new byte[][] {regions.get(i).getEncodedNameAsBytes(),
                    regions.get(i + 1).getEncodedNameAsBytes()}, false).get(STEP_TIMEOUT_MS, TimeUnit.MILLISECONDS);
            changes.incrementAndGet();
            count(done, "merge");
        }

        /**
         * Moves a random region to the other server. A move soon after a server started can land back on the old
         * server (the master did not take the new one yet; RegionServerCrashTest saw it too): it is moved again.
         */
        private void move(List<RegionInfo> regions) throws Exception {
            RegionInfo r = regions.get(rnd.nextInt(regions.size()));
            ServerName from = holder(r);
            ServerName to = servers.get(0).equals(from) ? servers.get(1) : servers.get(0);
            admin.move(r.getEncodedNameAsBytes(), to);
            STEP.untilAsserted(() -> assertTrue(landedOrMovedAgain(r, to),
                    () -> "region " + r.getEncodedName() + " to open on " + to + " (now " + state(r) + ")"));
            changes.incrementAndGet();
            count(done, "move");
        }

        private boolean landedOrMovedAgain(RegionInfo r, ServerName to) throws IOException {
            if (admin.getRegions(to).contains(r)) {
                return true;
            }
            count(done, "move landed elsewhere");
            admin.move(r.getEncodedNameAsBytes(), to);
            return false;
        }

        /** Closes a random region and opens it again (wherever the master puts it). */
        private void reopen(List<RegionInfo> regions) throws Exception {
            RegionInfo r = regions.get(rnd.nextInt(regions.size()));
            admin.unassign(r.getRegionName());
            admin.assign(r.getRegionName());
            STEP.untilAsserted(() -> assertTrue(holder(r) != null,
                    () -> "region " + r.getEncodedName() + " to reopen (now " + state(r) + ")"));
            changes.incrementAndGet();
            count(done, "reopen");
        }

        /** What the master knows of the region, for a failure message. */
        private String state(RegionInfo r) {
            return String.valueOf(hbase.getMaster().getAssignmentManager().getRegionStates().getRegionStateNode(r));
        }

        private ServerName holder(RegionInfo r) throws IOException {
            for (ServerName s : servers) {
                if (admin.getRegions(s).contains(r)) {
                    return s;
                }
            }
            return null;
        }

        /**
         * Flushes and major-compacts the table and waits until no region refers to its parent's files any more,
         * then runs the catalog janitor, which lets go of split and merge parents.
         */
        private void compact() throws Exception {
            admin.flush(table);
            admin.majorCompact(table);
            Thread.sleep(100); // the request is queued on the region servers
            long t0 = System.nanoTime();
            AtomicBoolean reported = new AtomicBoolean();
            STEP.untilAsserted(() -> {
                if (System.nanoTime() - t0 > TimeUnit.SECONDS.toNanos(5) && !reported.getAndSet(true)) {
                    System.out.println("churn of " + table + ": compaction slow: " + compactionState());
                }
                // A region still counts the files it compacted away (a daughter's references to its parent) until
                // the region server's discharger chore archives them, every two minutes: run it now.
                for (RegionServerThread rs : hbase.getLiveRegionServerThreads()) {
                    rs.getRegionServer().getCompactedHFilesDischarger().chore();
                }
                assertTrue(admin.getCompactionState(table) == CompactionState.NONE
                        && hbase.getRegions(table).stream().noneMatch(HRegion::hasReferences),
                        () -> "the major compaction of " + table + ": " + compactionState());
            });
            count(done, "major compaction");
            admin.runCatalogJanitor();
        }

        /** Regions still holding compacted-away files, and who reads them, for a failure message. */
        private String compactionState() {
            StringBuilder sb = new StringBuilder();
            try {
                sb.append("state ").append(admin.getCompactionState(table));
            } catch (IOException e) {
                sb.append("state unknown (").append(e).append(')');
            }
            for (RegionServerThread rs : hbase.getLiveRegionServerThreads()) {
                sb.append("; ").append(rs.getRegionServer().getServerName()).append(" has ")
                        .append(rs.getRegionServer().getRSRpcServices().getScannersCount()).append(" scanners");
            }
            for (HRegion r : hbase.getRegions(table)) {
                sb.append("; ").append(r.getRegionInfo().getEncodedName()).append(r.hasReferences() ? " refs" : "")
                        .append(" ").append(r.getCompactionState());
                r.getStores().forEach(st -> {
                    st.getStorefiles().forEach(f -> sb.append(f.isReference() ? " [ref file]" : " [file]"));
                    st.getCompactedFiles().forEach(f -> sb.append(" [compacted").append(f.isReference() ? " ref" : "")
                            .append(" file, ").append(f.getRefCount()).append(" readers]"));
                });
            }
            return sb.toString();
        }

        private static void count(Map<String, AtomicInteger> m, String k) {
            m.computeIfAbsent(k, x -> new AtomicInteger()).incrementAndGet();
        }

        int done(String step) {
            AtomicInteger n = done.get(step);
            return n == null ? 0 : n.get();
        }

        void report() {
            System.out.printf("region churn on %s: done %s, up to %d regions; refused %s%n", table,
                    new TreeMap<>(done), maxRegions, new TreeMap<>(refused));
            new TreeMap<>(refusalExamples).forEach((k, m) -> System.out.printf("  refused %s, e.g. %s%n", k, m));
        }

        boolean churnedEnough() {
            return done("split") >= 2 && done("merge") >= 2 && done("move") + done("reopen") >= 2
                    && done("major compaction") >= 1;
        }

        /** The churn really happened: regions were split, merged and moved while the workload ran. */
        void assertChurned() {
            assertTrue(done("split") >= 2, "the churn split regions too rarely: " + done);
            assertTrue(done("merge") >= 2, "the churn merged regions too rarely: " + done);
            assertTrue(done("move") + done("reopen") >= 2, "the churn moved regions too rarely: " + done);
            assertTrue(done("major compaction") >= 1, "the churn never major-compacted: " + done);
        }
    }

    /**
     * The transfer workload: threads moving money between random accounts (each transfer also writes a record row
     * in the same transaction, which settles a commit of unknown outcome), and auditors summing all accounts in one
     * snapshot in several ways.
     */
    private static final class Bank implements AutoCloseable {
        private record Transfer(int from, int to, long amount, String record) implements Accounts.RecordedTransfer {
        }

        final TransactionManager buffered;
        final TransactionManager writeThrough;
        final TTable bufferedTable;
        final TTable writeThroughTable;
        final AtomicBoolean stopping = new AtomicBoolean();
        final ConcurrentLinkedQueue<Transfer> committed = new ConcurrentLinkedQueue<>();
        final ConcurrentLinkedQueue<Transfer> failed = new ConcurrentLinkedQueue<>();
        final ConcurrentLinkedQueue<Transfer> unknown = new ConcurrentLinkedQueue<>();
        final Map<String, AtomicInteger> failures = new ConcurrentHashMap<>();
        /** Audits completed per way of reading, and those during which the churn changed a region. */
        final Map<String, AtomicInteger> audits = new ConcurrentHashMap<>();
        final AtomicInteger auditsAcrossChurn = new AtomicInteger();
        final AtomicInteger auditsFailed = new AtomicInteger();
        final ConcurrentLinkedQueue<String> wrongAudits = new ConcurrentLinkedQueue<>();
        final ConcurrentLinkedQueue<Throwable> unexpected = new ConcurrentLinkedQueue<>();
        final List<Thread> threads = new ArrayList<>();

        Bank(MiniCluster c, TableName name) throws IOException {
            buffered = c.manager(transferSettings(false));
            writeThrough = c.manager(transferSettings(true));
            bufferedTable = new TTable(buffered.getConnection(), name);
            writeThroughTable = new TTable(writeThrough.getConnection(), name);
        }

        void open() throws Exception {
            Accounts accounts = new Accounts(bufferedTable, ACCOUNTS);
            buffered.run(io(tx -> {
                accounts.open(tx, OPENING);
                return null;
            }));
        }

        void start(Churn churn) {
            for (int i = 0; i < TRANSFER_THREADS; i++) {
                int w = i;
                threads.add(new Thread(() -> transfers(w), "transfer-" + w));
            }
            for (int i = 0; i < AUDITORS; i++) {
                int a = i;
                threads.add(new Thread(() -> audits(a, churn), "auditor-" + a));
            }
            threads.forEach(Thread::start);
        }

        private void transfers(int w) {
            TransactionManager tm = w % 2 == 0 ? buffered : writeThrough;
            Accounts accounts = new Accounts(w % 2 == 0 ? bufferedTable : writeThroughTable, ACCOUNTS);
            ThreadLocalRandom rnd = ThreadLocalRandom.current();
            for (int n = 0; !stopping.get(); n++) {
                int from = rnd.nextInt(ACCOUNTS);
                int to = (from + 1 + rnd.nextInt(ACCOUNTS - 1)) % ACCOUNTS;
                Transfer t = new Transfer(from, to, 1 + rnd.nextInt(50), "xfer-" + w + "-" + n);
                try {
                    tm.run(io(tx -> {
                        accounts.transfer(tx, t.from, t.to, t.amount);
                        TestSupport.put(accounts.table, tx, t.record, t.from + "->" + t.to + ":" + t.amount);
                        return null;
                    }));
                    committed.add(t);
                } catch (RollbackException e) {
                    failed.add(t);
                    count("RollbackException(" + e.getReason() + ")");
                } catch (CommitOutcomeUnknownException e) {
                    unknown.add(t);
                    count("CommitOutcomeUnknownException");
                } catch (UncheckedIOException e) {
                    failed.add(t); // a read or an early write failed: run rolled the transaction back
                    count("IOException: " + e.getCause().getClass().getSimpleName());
                } catch (Throwable e) {
                    failed.add(t);
                    unexpected.add(e);
                }
            }
        }

        /**
         * Audits in turn: one scan with a batch per region, a scan of 3 rows per RPC and a reversed one of 4 (both
         * pausing after each row, so they are open for about a second while the churn goes on), and a multi-get.
         */
        private void audits(int a, Churn churn) {
            TransactionManager tm = a % 2 == 0 ? buffered : writeThrough;
            Accounts accounts = new Accounts(a % 2 == 0 ? bufferedTable : writeThroughTable, ACCOUNTS);
            Runnable pause = () -> sleep(15);
            for (int n = a; !stopping.get(); n++) {
                String how = switch (n % 4) {
                    case 0 -> "scan";
                    case 1 -> "slow scan";
                    case 2 -> "slow reversed scan";
                    default -> "multi-get";
                };
                int changesBefore = churn.changes.get();
                Transaction tx = tm.begin();
                List<Result> seen = new ArrayList<>();
                long auditStart = System.currentTimeMillis();
                try {
                    long total = switch (n % 4) {
                        case 0 -> accounts.total(tx, ACCOUNTS, false, () -> { }, seen);
                        case 1 -> accounts.total(tx, 3, false, pause, seen);
                        case 2 -> accounts.total(tx, 4, true, pause, seen);
                        default -> accounts.totalByGets(tx);
                    };
                    if (total != ACCOUNTS * OPENING) {
                        wrongAudits.add(how + " in snapshot " + tx.getStartTimestamp() + " summed to " + total);
                        diagnose(how, tx, accounts.table, seen, total, auditStart, churn);
                    }
                    tm.commit(tx);
                    audits.computeIfAbsent(how, k -> new AtomicInteger()).incrementAndGet();
                    if (churn.changes.get() != changesBefore) {
                        auditsAcrossChurn.incrementAndGet();
                    }
                } catch (IOException | UncheckedIOException e) {
                    auditsFailed.incrementAndGet(); // HBase gave up (a region was offline too long)
                    count("audit: " + e.getClass().getSimpleName());
                    tm.rollback(tx);
                } catch (AssertionError e) {
                    wrongAudits.add(how + ": " + e.getMessage());
                    tm.rollback(tx);
                } catch (Throwable e) {
                    unexpected.add(e);
                    return;
                }
            }
        }

        /** Cells as "value@timestamp(type)", newest first per column. */
        static String describeCells(org.apache.hadoop.hbase.Cell[] cells) {
            StringBuilder sb = new StringBuilder();
            if (cells == null || cells.length == 0) {
                return "[]";
            }
            sb.append(Bytes.toString(org.apache.hadoop.hbase.CellUtil.cloneRow(cells[0]))).append(" [");
            for (int i = 0; i < cells.length; i++) {
                org.apache.hadoop.hbase.Cell c = cells[i];
                if (i > 0) {
                    sb.append(", ");
                }
                sb.append(describeValue(c)).append('@').append(c.getTimestamp());
                if (c.getType() != org.apache.hadoop.hbase.Cell.Type.Put) {
                    sb.append('(').append(c.getType()).append(')');
                }
            }
            return sb.append(']').toString();
        }

        private static String describeValue(org.apache.hadoop.hbase.Cell c) {
            byte[] v = org.apache.hadoop.hbase.CellUtil.cloneValue(c);
            return v.length == 8 ? String.valueOf(Bytes.toLong(v)) : Bytes.toStringBinary(v);
        }

        /**
         * A wrong audit: for every account, what the scan returned, what a get in the same transaction returns, and
         * every version in HBase (raw, delete markers included) with its writer's status for this snapshot.
         */
        private void diagnose(String how, Transaction tx, TTable table, List<Result> seen, long total,
                              long auditStart, Churn churn) {
            StringBuilder sb = new StringBuilder();
            io.sibyl.client.oracle.CommitReplica replica = TestSupport.internals(tx).begunOn().replica();
            sb.append(String.format("%n=== WRONG AUDIT: %s in snapshot %d summed to %d (%+d); audit %tT.%<tL - %tT.%<tL;"
                            + " replica %s; regions now %s%n", how, tx.getStartTimestamp(), total,
                    total - ACCOUNTS * OPENING, auditStart, System.currentTimeMillis(), replica, regionsOf(churn)));
            Map<String, Result> byRow = new HashMap<>();
            seen.forEach(r -> byRow.put(Bytes.toString(r.getRow()), r));
            try (org.apache.hadoop.hbase.client.Table plain = table.connection().getTable(table.getName())) {
                long getSum = 0;
                for (int i = 0; i < ACCOUNTS; i++) {
                    String row = Accounts.account(i);
                    Result scanned = byRow.get(row);
                    Result got = table.get(tx, new Get(b(row)).addColumn(CF, V));
                    String sv = scanned == null ? "MISSING" : describeCells(scanned.rawCells());
                    String gv = describeCells(got.rawCells());
                    if (got.getValue(CF, V) != null) {
                        getSum += Bytes.toLong(got.getValue(CF, V));
                    }
                    boolean differs = scanned == null || !java.util.Arrays.equals(scanned.getValue(CF, V),
                            got.getValue(CF, V)) || scanned.rawCells()[0].getTimestamp()
                            != got.rawCells()[0].getTimestamp();
                    sb.append(String.format("%s %s: scan %s | get %s%n", differs ? "!!" : "  ", row, sv, gv));
                    if (!differs) {
                        continue;
                    }
                    Result all = plain.get(new Get(b(row)).addColumn(CF, V).readAllVersions());
                    sb.append("     all versions (Get.readAllVersions): ").append(describeCells(all.rawCells()))
                            .append('\n');
                    org.apache.hadoop.hbase.client.Scan rawScan = new org.apache.hadoop.hbase.client.Scan()
                            .withStartRow(b(row)).withStopRow(b(row), true).setRaw(true).readAllVersions();
                    try (org.apache.hadoop.hbase.client.ResultScanner rs = plain.getScanner(rawScan)) {
                        for (Result r : rs) {
                            for (org.apache.hadoop.hbase.Cell c : r.rawCells()) {
                                long ts = c.getTimestamp();
                                String sees;
                                try {
                                    sees = String.valueOf(TestSupport.internals(tx).snapshot().sees(ts));
                                } catch (IOException | RuntimeException e) {
                                    sees = "error " + e;
                                }
                                long commit = replica.commitTimestampOf(ts);
                                sb.append(String.format("     raw %s@%d %s: sees=%s commitTs(replica)=%s aborted=%s"
                                                + " %s%n", describeValue(c), ts, c.getType(), sees,
                                        commit == 0 ? "-" : commit, replica.isAborted(ts),
                                        ts > tx.getStartTimestamp() ? "after snapshot"
                                                : ts < replica.tMax() ? "below tMax" : "between tMax and snapshot"));
                            }
                        }
                    }
                }
                sb.append("sum by gets in the same transaction: ").append(getSum).append('\n');
            } catch (Throwable e) {
                sb.append("diagnosis failed: ").append(e).append('\n');
            }
            sb.append("=== END WRONG AUDIT\n");
            System.out.print(sb);
            System.out.flush();
        }

        private static String regionsOf(Churn churn) {
            try {
                StringBuilder sb = new StringBuilder();
                for (RegionInfo r : churn.regions()) {
                    sb.append(r.getEncodedName()).append("[").append(Bytes.toStringBinary(r.getStartKey()))
                            .append(",").append(Bytes.toStringBinary(r.getEndKey())).append(") ");
                }
                return sb.toString();
            } catch (IOException e) {
                return "unknown (" + e + ")";
            }
        }

        private static void sleep(long millis) {
            try {
                Thread.sleep(millis);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        private void count(String kind) {
            failures.computeIfAbsent(kind, k -> new AtomicInteger()).incrementAndGet();
        }

        void stop() throws InterruptedException {
            stopping.set(true);
            for (Thread t : threads) {
                t.join(STEP_TIMEOUT_MS);
                assertTrue(!t.isAlive(), t.getName() + " did not finish: a transaction hangs");
            }
        }

        void report() {
            System.out.printf("transfers under region churn: %d committed, %d failed, %d outcome unknown; audits %s"
                            + " (%d while regions changed, %d failed on HBase); failures %s%n", committed.size(),
                    failed.size(), unknown.size(), new TreeMap<>(audits), auditsAcrossChurn.get(),
                    auditsFailed.get(), new TreeMap<>(failures));
        }

        /** The invariants, on one snapshot taken after the workload stopped. */
        void check() throws Exception {
            if (!unexpected.isEmpty()) {
                AssertionError e = new AssertionError("unexpected exception: " + unexpected.peek(),
                        unexpected.peek());
                unexpected.stream().skip(1).limit(5).forEach(e::addSuppressed);
                throw e;
            }
            assertTrue(wrongAudits.isEmpty(), "audits saw a partial transfer or a torn scan: "
                    + wrongAudits.stream().limit(5).toList());
            for (String how : List.of("scan", "slow scan", "slow reversed scan", "multi-get")) {
                assertTrue(audits.containsKey(how) && audits.get(how).get() >= 3, "too few audits by " + how
                        + ": " + audits);
            }
            assertTrue(auditsAcrossChurn.get() >= 3, "too few audits overlapped a region change: "
                    + auditsAcrossChurn.get());
            assertTrue(committed.size() >= 100, "too few transfers committed to mean anything: " + committed.size());

            Transaction check = buffered.begin();
            new Accounts(bufferedTable, ACCOUNTS).assertSettled(check, OPENING, committed, failed, unknown);
            buffered.commit(check);
        }

        @Override
        public void close() throws Exception {
            stopping.set(true);
            for (Thread t : threads) {
                t.join(STEP_TIMEOUT_MS); // after a failed step: let them finish before their managers close
            }
            bufferedTable.close();
            writeThroughTable.close();
            buffered.close();
            writeThrough.close();
        }
    }
}
