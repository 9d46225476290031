package io.sibyl.client;

import org.apache.hadoop.hbase.MiniHBaseCluster;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.RegionLocator;
import org.apache.hadoop.hbase.util.JVMClusterUtil.RegionServerThread;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import static io.sibyl.client.TestSupport.b;
import static io.sibyl.client.TestSupport.io;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A region server dies under a transfer workload. The accounts table lives alone on an extra region server, which is
 * killed while transfers and auditors run; the master reassigns its regions to the original server, replaying its
 * WAL. The same clients carry on without help: every audit sees the exact total, every transfer whose commit
 * returned is in the final balances, every transfer that failed did so with a clear exception and left nothing
 * behind, and transactions begun once the regions are back all commit.
 */
@ExtendWith(MiniCluster.class)
@Timeout(value = 110, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class RegionServerCrashTest {
    static final int ACCOUNTS = 200;
    static final long OPENING = 1000;
    static final int THREADS = 8;
    static final int AUDITORS = 2;
    static final int COMMITS_BEFORE_CRASH = 150;
    static final int COMMITS_AFTER_RECOVERY = 150;
    /** Four account regions and one for the transfer records (rows "xfer-..."), all on the server that dies. */
    static final byte[][] SPLITS = {b("acct050"), b("acct100"), b("acct150"), b("xfer")};
    static final long STEP_TIMEOUT_MS = 30_000;
    /** Each wait of a step, polled in the test's thread like its other Admin calls. */
    private static final ConditionFactory STEP = await().atMost(Duration.ofMillis(STEP_TIMEOUT_MS))
            .pollInterval(Duration.ofMillis(50)).pollInSameThread();
    /**
     * Transfers held open across the kill, per manager, each on its own pair of accounts (0, 1), (2, 3)...: the
     * workers use the others, so these cannot conflict and their commit outcome is decided by the crash alone.
     */
    static final int HELD = 4;
    static final int RESERVED = 2 * HELD * 2;

    /**
     * The test's own connections: an operation on a region of the dead server fails within about a second instead of
     * retrying for tens of seconds (HBase's defaults ride out the whole outage), so the failure paths run too, and
     * no RPC can hang the build.
     */
    private static Map<String, String> settings(boolean writeThrough) {
        Map<String, String> s = new HashMap<>();
        s.put("hbase.client.retries.number", "3");
        s.put("hbase.client.pause", "100");
        s.put("hbase.rpc.timeout", "3000");
        s.put("hbase.client.operation.timeout", "8000");
        s.put("hbase.client.meta.operation.timeout", "8000");
        s.put("hbase.client.scanner.timeout.period", "8000");
        s.put(TransactionManager.RETRY_ATTEMPTS, "1000");
        s.put(TransactionManager.RETRY_BACKOFF_MS, "2");
        s.put(TransactionManager.RETRY_BACKOFF_MAX_MS, "50");
        if (writeThrough) {
            s.put(TransactionManager.WRITE_BUFFER_BYTES, "0"); // writes reach HBase before commit: the abort path
        }
        return s;
    }

    /** A transfer begun and written before the kill, committed after it. */
    private record Held(TransactionManager tm, Transaction tx, Transfer transfer) {
    }

    /** One transfer as attempted by a worker; {@code record} is the row it writes in the same transaction. */
    private record Transfer(int from, int to, long amount, String record, boolean begunAfterRecovery)
            implements Accounts.RecordedTransfer {
    }

    @Test
    void transfersKeepTheTotalWhenTheRegionServerHoldingTheAccountsDies() throws Exception {
        MiniCluster c = MiniCluster.get();
        MiniHBaseCluster hbase = c.util().getMiniHBaseCluster();
        try (Admin admin = c.connection().getAdmin()) {
            boolean balancerWasOn = admin.balancerSwitch(false, true); // nothing may move but what we move
            ServerName original = hbase.getServerHoldingMeta();
            RegionServerThread extra = hbase.startRegionServer();
            ServerName doomed = extra.getRegionServer().getServerName();
            boolean killed = false;
            try {
                TableName name = c.createTable("rscrash", SPLITS, "cf");
                List<RegionInfo> regions = admin.getRegions(name);
                moveAll(admin, hbase, name, doomed);
                assertEquals(Set.of(name), admin.getRegions(doomed).stream().map(RegionInfo::getTable)
                        .collect(Collectors.toSet()), "only this test's table may live on the server that dies");

                try (Workload w = new Workload(c, name)) {
                    w.open();
                    w.start();
                    STEP.alias(COMMITS_BEFORE_CRASH + " commits before the crash").until(
                            () -> w.committed.size() >= COMMITS_BEFORE_CRASH);
                    List<Held> held = w.holdTransfers();
                    long killedAt = System.nanoTime();
                    hbase.killRegionServer(doomed);
                    killed = true;
                    w.commitHeld(held);
                    STEP.alias("the regions to reopen on " + original).until(() -> onServer(admin, original, name)
                            == regions.size() && inMeta(c, original, name) == regions.size());
                    w.recovered.set(true);
                    double recoverySecs = (System.nanoTime() - killedAt) / 1e9;
                    STEP.alias(COMMITS_AFTER_RECOVERY + " commits begun after the regions reopened").until(
                            () -> w.committedAfterRecovery.get() >= COMMITS_AFTER_RECOVERY);
                    w.stop();
                    w.report(recoverySecs);
                    w.check();
                }
            } finally {
                if (!killed) {
                    hbase.killRegionServer(doomed);
                }
                extra.join(STEP_TIMEOUT_MS);
                // Let the master finish with the dead server before the next test class runs.
                STEP.alias("the master to finish recovering " + doomed).until(
                        () -> !hbase.getMaster().getServerManager().areDeadServersInProgress());
                admin.balancerSwitch(balancerWasOn, true);
            }
        }
    }

    /**
     * Moves every region of the table to {@code target}. The first moves right after a server starts can land back
     * on the old server (seen here: the master did not pick the new one yet), so regions not there are moved again.
     */
    private static void moveAll(Admin admin, MiniHBaseCluster hbase, TableName table, ServerName target)
            throws Exception {
        STEP.alias(target + " to be online at the master").until(
                () -> hbase.getMaster().getServerManager().getOnlineServersList().contains(target));
        int regions = admin.getRegions(table).size();
        STEP.alias("the regions of " + table + " to open on " + target).until(() -> {
            for (RegionInfo r : admin.getRegions(table)) {
                if (!admin.getRegions(target).contains(r)) {
                    admin.move(r.getEncodedNameAsBytes(), target);
                }
            }
            return onServer(admin, target, table) == regions;
        });
    }

    /** Regions of the table that hbase:meta places on the server (read afresh, no client cache). */
    private static long inMeta(MiniCluster c, ServerName server, TableName table) throws IOException {
        try (RegionLocator locator = c.connection().getRegionLocator(table)) {
            return locator.getAllRegionLocations().stream().filter(l -> server.equals(l.getServerName())).count();
        }
    }

    private static long onServer(Admin admin, ServerName server, TableName table) throws IOException {
        return admin.getRegions(server).stream().filter(r -> r.getTable().equals(table)).count();
    }

    /** Transfer workers and auditors on two managers (buffered, write-through) and what each of them saw. */
    private static final class Workload implements AutoCloseable {
        final TransactionManager buffered;
        final TransactionManager writeThrough;
        final TTable bufferedTable;
        final TTable writeThroughTable;
        final AtomicBoolean recovered = new AtomicBoolean();
        final AtomicBoolean stopping = new AtomicBoolean();
        final ConcurrentLinkedQueue<Transfer> committed = new ConcurrentLinkedQueue<>();
        final ConcurrentLinkedQueue<Transfer> failed = new ConcurrentLinkedQueue<>();
        final ConcurrentLinkedQueue<Transfer> unknown = new ConcurrentLinkedQueue<>();
        final AtomicInteger committedAfterRecovery = new AtomicInteger();
        final Set<String> heldCommitted = ConcurrentHashMap.newKeySet();
        final ConcurrentLinkedQueue<Throwable> failedAfterRecovery = new ConcurrentLinkedQueue<>();
        /** Failure kind (exception, reason, HBase cause) -> count, and one message of each kind. */
        final Map<String, AtomicInteger> kinds = new ConcurrentHashMap<>();
        final Map<String, String> examples = new ConcurrentHashMap<>();
        final AtomicInteger audits = new AtomicInteger();
        final AtomicInteger auditsFailed = new AtomicInteger();
        final ConcurrentLinkedQueue<String> wrongAudits = new ConcurrentLinkedQueue<>();
        final ConcurrentLinkedQueue<Throwable> unexpected = new ConcurrentLinkedQueue<>();
        final AtomicLong slowestTransferNanos = new AtomicLong();
        final List<Thread> threads = new ArrayList<>();

        Workload(MiniCluster c, TableName name) throws IOException {
            buffered = c.manager(settings(false));
            writeThrough = c.manager(settings(true));
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

        void start() {
            for (int i = 0; i < THREADS; i++) {
                int w = i;
                threads.add(new Thread(() -> transfers(w), "transfer-" + w));
            }
            for (int i = 0; i < AUDITORS; i++) {
                int a = i;
                threads.add(new Thread(() -> audits(a), "auditor-" + a));
            }
            threads.forEach(Thread::start);
        }

        private void transfers(int w) {
            TransactionManager tm = w % 2 == 0 ? buffered : writeThrough;
            Accounts accounts = new Accounts(w % 2 == 0 ? bufferedTable : writeThroughTable, ACCOUNTS);
            ThreadLocalRandom rnd = ThreadLocalRandom.current();
            for (int n = 0; !stopping.get(); n++) {
                int from = RESERVED + rnd.nextInt(ACCOUNTS - RESERVED);
                int to = RESERVED + (from - RESERVED + 1 + rnd.nextInt(ACCOUNTS - RESERVED - 1))
                        % (ACCOUNTS - RESERVED);
                Transfer t = new Transfer(from, to, 1 + rnd.nextInt(50), "xfer-" + w + "-" + n, recovered.get());
                long t0 = System.nanoTime();
                Throwable failure = null;
                try {
                    tm.run(io(tx -> {
                        accounts.transfer(tx, t.from, t.to, t.amount);
                        TestSupport.put(accounts.table, tx, t.record, t.from + "->" + t.to + ":" + t.amount);
                        return null;
                    }));
                    committed.add(t);
                    if (t.begunAfterRecovery) {
                        committedAfterRecovery.incrementAndGet();
                    }
                } catch (RollbackException e) {
                    failure = e;
                    failed.add(t);
                    count("RollbackException(" + e.getReason() + ")" + cause(e), e);
                } catch (CommitOutcomeUnknownException e) {
                    failure = e;
                    unknown.add(t);
                    count("CommitOutcomeUnknownException" + cause(e), e);
                } catch (UncheckedIOException e) {
                    failure = e;
                    failed.add(t); // the work failed in a read or an early write: run rolled the transaction back
                    count("IOException in the transaction: " + e.getCause().getClass().getSimpleName() + cause(e),
                            e.getCause());
                } catch (Throwable e) {
                    failure = e;
                    unexpected.add(e);
                    failed.add(t);
                }
                slowestTransferNanos.accumulateAndGet(System.nanoTime() - t0, Math::max);
                if (failure != null) {
                    if (t.begunAfterRecovery) {
                        failedAfterRecovery.add(failure);
                    }
                    pause(); // the region is offline: do not spin
                }
            }
        }

        /**
         * Begins a transfer on each reserved pair and writes it: the buffered manager keeps its writes until
         * commit, the write-through one has them acknowledged by HBase (in the WAL of the server about to die).
         */
        List<Held> holdTransfers() throws IOException {
            List<Held> held = new ArrayList<>();
            for (int i = 0; i < 2 * HELD; i++) {
                boolean writeThroughHeld = i >= HELD;
                TransactionManager tm = writeThroughHeld ? writeThrough : buffered;
                Accounts accounts = new Accounts(writeThroughHeld ? writeThroughTable : bufferedTable, ACCOUNTS);
                Transfer t = new Transfer(2 * i, 2 * i + 1, 7, "xfer-held-" + i, false);
                Transaction tx = tm.begin();
                accounts.transfer(tx, t.from, t.to, t.amount);
                TestSupport.put(accounts.table, tx, t.record, "held");
                held.add(new Held(tm, tx, t));
            }
            return held;
        }

        /**
         * Commits the held transfers while the regions are offline. The write-through ones need nothing more from
         * HBase, so they commit, and their acknowledged writes must come back with the WAL; the buffered ones must
         * send their writes first, and either wait out the outage or roll back with WRITE_FAILED.
         */
        void commitHeld(List<Held> held) {
            for (Held h : held) {
                try {
                    h.tm.commit(h.tx);
                    committed.add(h.transfer);
                    heldCommitted.add(h.transfer.record);
                } catch (RollbackException e) {
                    failed.add(h.transfer);
                    count("held: RollbackException(" + e.getReason() + ")" + cause(e), e);
                    if (e.getReason() != RollbackException.Reason.WRITE_FAILED
                            || !(e.getCause() instanceof IOException)) {
                        unexpected.add(e); // a held transfer conflicts with nobody: only HBase can fail it
                    }
                } catch (CommitOutcomeUnknownException e) {
                    unknown.add(h.transfer);
                    count("held: CommitOutcomeUnknownException" + cause(e), e);
                } catch (RuntimeException e) {
                    unexpected.add(e);
                    failed.add(h.transfer);
                }
            }
        }

        private void audits(int a) {
            TransactionManager tm = a % 2 == 0 ? buffered : writeThrough;
            Accounts accounts = new Accounts(a % 2 == 0 ? bufferedTable : writeThroughTable, ACCOUNTS);
            while (!stopping.get()) {
                Transaction tx = tm.begin();
                try {
                    long total = accounts.total(tx);
                    if (total != ACCOUNTS * OPENING) {
                        wrongAudits.add("snapshot " + tx.getStartTimestamp() + " summed to " + total);
                    }
                    tm.commit(tx);
                    audits.incrementAndGet();
                } catch (IOException | UncheckedIOException e) {
                    auditsFailed.incrementAndGet(); // the region was offline: HBase gave up
                    tm.rollback(tx);
                    pause();
                } catch (AssertionError e) {
                    wrongAudits.add(e.getMessage());
                    tm.rollback(tx);
                } catch (Throwable e) {
                    unexpected.add(e);
                    return;
                }
            }
        }

        private static String cause(Throwable e) {
            Throwable cause = e instanceof UncheckedIOException ? e.getCause().getCause() : e.getCause();
            return cause == null ? "" : " caused by " + cause.getClass().getSimpleName();
        }

        private void count(String kind, Throwable e) {
            kinds.computeIfAbsent(kind, k -> new AtomicInteger()).incrementAndGet();
            examples.putIfAbsent(kind, String.valueOf(e.getMessage()).lines().findFirst().orElse(""));
        }

        private static void pause() {
            try {
                Thread.sleep(20);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }

        void stop() throws InterruptedException {
            stopping.set(true);
            for (Thread t : threads) {
                t.join(STEP_TIMEOUT_MS);
                assertTrue(!t.isAlive(), t.getName() + " did not finish: a transaction hangs");
            }
        }

        void report(double recoverySecs) {
            System.out.printf("region server crash: held across the kill, committed: %s%n", new TreeMap<>(
                    heldCommitted.stream().collect(Collectors.toMap(r -> r, r -> true))).keySet());
            System.out.printf("region server crash: regions back after %.1f s; %d transfers committed (%d begun"
                            + " after recovery), %d failed, %d outcome unknown; %d audits, %d audits failed on"
                            + " HBase; slowest transfer %.1f s%n", recoverySecs, committed.size(),
                    committedAfterRecovery.get(), failed.size(), unknown.size(), audits.get(), auditsFailed.get(),
                    slowestTransferNanos.get() / 1e9);
            new TreeMap<>(kinds).forEach((k, n) -> System.out.printf("  %5d x %s, e.g. %s%n", n.get(), k,
                    examples.get(k)));
        }

        /** The invariants, judged on one snapshot taken after the workload stopped. */
        void check() throws Exception {
            if (!unexpected.isEmpty()) {
                AssertionError e = new AssertionError("unexpected exception: " + unexpected.peek(),
                        unexpected.peek());
                unexpected.stream().skip(1).limit(5).forEach(e::addSuppressed);
                throw e;
            }
            assertTrue(wrongAudits.isEmpty(), "audits saw a partial transaction: " + wrongAudits);
            assertTrue(audits.get() > 0, "no audit completed");
            for (int i = HELD; i < 2 * HELD; i++) {
                assertTrue(heldCommitted.contains("xfer-held-" + i), "a write-through transfer whose writes HBase"
                        + " had acknowledged did not commit: xfer-held-" + i + " " + kinds);
            }
            assertTrue(failedAfterRecovery.isEmpty(), "transactions begun after the regions reopened failed: "
                    + failedAfterRecovery.stream().limit(3).map(Throwable::toString).toList());

            Transaction check = buffered.begin();
            new Accounts(bufferedTable, ACCOUNTS).assertSettled(check, OPENING, committed, failed, unknown);
            buffered.commit(check);
        }

        @Override
        public void close() throws InterruptedException {
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
