package io.sibyl.client;

import io.sibyl.client.oracle.OracleUnavailableException;
import io.sibyl.oracle.ha.OracleProcess;
import io.sibyl.oracle.journal.BookKeeperCluster;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLongArray;

import static io.sibyl.client.TestSupport.getInt;
import static io.sibyl.client.TestSupport.putInt;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Client failover on real components: HBase minicluster, in-process ZooKeeper and 3 bookies, so-server in its own
 * JVM on the BookKeeper journal, killed with SIGKILL while transfer transactions run, and replaced by an so-server
 * that recovers the journal: one restarted at the same address, or a hot standby of an HA pair that takes over and
 * publishes itself in ZooKeeper. The clients are not restarted: they reconnect on their own, resolve the
 * commits that were in flight by asking the new oracle, and carry on; every balance ends exactly at its opening
 * value plus the transfers reported committed, so no acknowledged commit was lost and no commit reported failed
 * took effect.
 */
@ExtendWith(MiniCluster.class)
@Timeout(value = 240, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class OracleFailoverTest {
    static final int ACCOUNTS = 32;
    static final long OPENING = 1000;
    static final int THREADS = 6;
    static final long READY_MS = 60_000;

    @RegisterExtension
    static final BookKeeperCluster bookies = BookKeeperCluster.perTestClass(3);

    /** so-server flags for a journal of its own (registry, leader znode and election under {@code root}). */
    private static List<String> oracleFlags(String root, int port, boolean ha) {
        String zk = bookies.zkConnect();
        return List.of("--port=" + port, "--host=127.0.0.1", "--journal=bookkeeper", "--journal.zk.connect=" + zk,
                "--journal.bk.metadata.uri=zk+null://" + zk + "/ledgers", "--journal.ledgers.znode=" + root
                        + "/ledgers", "--journal.leader.znode=" + root + "/leader", "--journal.election.znode="
                        + root + "/election", "--ha=" + ha, "--conflict.table.rows=65536",
                "--max.running.transactions=4096", "--push.interval.ms=20");
    }

    private static int freePort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            s.setReuseAddress(true);
            return s.getLocalPort();
        }
    }

    @Test
    void transfersContinueWhenTheOracleIsKilledAndRestartedAtItsAddress() throws Exception {
        String root = "/sibyl/test/failover-fixed";
        int port = freePort();
        Map<String, String> settings = new HashMap<>();
        settings.put(TransactionManager.ORACLE_ADDRESS, "127.0.0.1:" + port);
        try (OracleProcess first = new OracleProcess("restart-a", oracleFlags(root, port, false))) {
            first.awaitReady(READY_MS);
            runTransfersAcrossAFailover(settings, first, () -> {
                OracleProcess second = new OracleProcess("restart-b", oracleFlags(root, port, false));
                second.awaitReady(READY_MS);
                return second;
            });
        }
    }

    /**
     * Write skew across a kill (issue 17): a serializable transaction that read both rows before the oracle died is
     * not certified by the oracle that recovers the journal (its read set is not journaled) but aborted, so a
     * transaction of the new oracle that changed one of those rows cannot be combined with its write.
     */
    @Test
    void aSerializableTransactionOpenAcrossAKillAbortsInsteadOfSkewing() throws Exception {
        String root = "/sibyl/test/failover-serializable";
        int port = freePort();
        Map<String, String> settings = new HashMap<>(failoverSettings());
        settings.put(TransactionManager.ORACLE_ADDRESS, "127.0.0.1:" + port);
        MiniCluster c = MiniCluster.get();
        TableName table = c.createTable("failover_skew", "cf");
        try (OracleProcess first = new OracleProcess("skew-a", oracleFlags(root, port, false));
             TransactionManager tm = c.manager(settings); TTable oncall = new TTable(c.connection(), table)) {
            first.awaitReady(READY_MS);
            Transaction setUp = tm.begin();
            putInt(oncall, setUp, "alice", 1);
            putInt(oncall, setUp, "bob", 1);
            tm.commit(setUp);
            Transaction skewed = tm.begin(IsolationLevel.SERIALIZABLE);
            long before = getInt(oncall, skewed, "alice") + getInt(oncall, skewed, "bob");
            assertEquals(2, before, "two on call");
            first.process.destroyForcibly();
            assertTrue(first.process.waitFor(10, TimeUnit.SECONDS));
            try (OracleProcess second = new OracleProcess("skew-b", oracleFlags(root, port, false))) {
                second.awaitReady(READY_MS);
                Transaction other = tm.begin(IsolationLevel.SERIALIZABLE);
                assertEquals(2, getInt(oncall, other, "alice") + getInt(oncall, other, "bob"));
                putInt(oncall, other, "bob", 0); // bob goes off call: alice stays
                tm.commit(other);
                assertThrows(RollbackException.class, () -> {
                    putInt(oncall, skewed, "alice", 0); // alice goes off call too, on the snapshot before the kill
                    tm.commit(skewed);
                }, "the transaction begun before the kill must not commit");
                Transaction check = tm.begin();
                assertEquals(1, getInt(oncall, check, "alice") + getInt(oncall, check, "bob"), "one stays on call");
                tm.commit(check);
            }
        }
    }

    @Test
    void transfersFollowTheStandbyThatTakesOverThroughZooKeeper() throws Exception {
        String root = "/sibyl/test/failover-ha";
        Map<String, String> settings = zooKeeperClient(root);
        try (OracleProcess leader = new OracleProcess("ha-a", oracleFlags(root, 0, true))) {
            leader.awaitReady(READY_MS); // elected first: the standby starts only now
            try (OracleProcess standby = new OracleProcess("ha-b", oracleFlags(root, 0, true))) {
                standby.awaitLine("STANDBY", READY_MS);
                runTransfersAcrossAFailover(settings, leader, () -> {
                    standby.awaitReady(READY_MS); // it leads now
                    return null;
                });
            }
        }
    }

    /**
     * Three takeovers in a row (each new leader gets a fresh standby behind it), with two clients that each have their
     * own oracle connection and replica: transfers on both, and audits on both that read every account in one
     * snapshot. Every audit, including those running across a kill, must see the exact total.
     */
    @Test
    void auditsOfTwoClientsStayExactAcrossThreeSuccessiveTakeovers() throws Exception {
        String root = "/sibyl/test/failover-chain";
        MiniCluster c = MiniCluster.get();
        TableName table = c.createTable("failover-chain", "cf");
        List<OracleProcess> oracles = new ArrayList<>();
        try {
            OracleProcess leader = new OracleProcess("chain-0", oracleFlags(root, 0, true));
            oracles.add(leader);
            leader.awaitReady(READY_MS);
            OracleProcess standby = new OracleProcess("chain-1", oracleFlags(root, 0, true));
            oracles.add(standby);
            standby.awaitLine("STANDBY", READY_MS);
            try (TransactionManager one = c.manager(zooKeeperClient(root));
                 TransactionManager two = c.manager(zooKeeperClient(root));
                 TTable accounts = new TTable(c.connection(), table)) {
                Workload w = new Workload(accounts);
                openAccounts(one, accounts);
                w.start(one, 2, true);
                w.start(two, 2, true);
                for (int round = 2; round <= 4; round++) {
                    w.awaitCommits(60);
                    int auditsBefore = w.audits.get();
                    leader.process.destroyForcibly();
                    assertTrue(leader.process.waitFor(10, TimeUnit.SECONDS));
                    standby.awaitReady(READY_MS); // it leads now
                    leader = standby;
                    standby = new OracleProcess("chain-" + round, oracleFlags(root, 0, true));
                    oracles.add(standby);
                    standby.awaitLine("STANDBY", READY_MS);
                    w.awaitCommits(30);
                    awaitCount(w.audits, auditsBefore + 5, w.failures);
                }
                w.stopAndCheck(two);
                assertTrue(one.connection().reconnects() >= 3 && two.connection().reconnects() >= 3,
                        "both clients followed all three takeovers: " + one.connection().reconnects() + ", "
                                + two.connection().reconnects());
                System.out.printf("three takeovers: %d transfers committed, %d exact audits%n", w.committed.get(),
                        w.audits.get());
            }
        } finally {
            oracles.forEach(OracleProcess::close);
        }
    }

    /**
     * The leader is frozen with SIGSTOP under transfers and audits: its TCP connections stay open, so the clients move
     * on only when the standby takes over (after the frozen leader's ZooKeeper session expires) and announces itself.
     * Resumed with SIGCONT, the deposed leader exits without deciding anything: balances and audits stay exact.
     */
    @Test
    void clientsLeaveAFrozenLeaderForTheStandbyAndItsResumptionChangesNothing() throws Exception {
        String root = "/sibyl/test/failover-frozen";
        MiniCluster c = MiniCluster.get();
        List<String> flags = new ArrayList<>(oracleFlags(root, 0, true));
        flags.add("--journal.zk.session.timeout.ms=2000"); // the smallest the test ZooKeeper grants
        TableName table = c.createTable("failover-frozen", "cf");
        try (OracleProcess leader = new OracleProcess("frozen-a", flags)) {
            leader.awaitReady(READY_MS);
            try (OracleProcess standby = new OracleProcess("frozen-b", flags);
                 TransactionManager tm = c.manager(zooKeeperClient(root));
                 TTable accounts = new TTable(c.connection(), table)) {
                standby.awaitLine("STANDBY", READY_MS);
                Workload w = new Workload(accounts);
                openAccounts(tm, accounts);
                w.start(tm, 4, true);
                w.awaitCommits(100);

                leader.signal("STOP");
                long frozenAt = System.nanoTime();
                standby.awaitReady(READY_MS);
                long readyAt = System.nanoTime();
                w.awaitCommits(1);
                long firstAt = System.nanoTime();
                w.awaitCommits(60);
                System.out.printf("frozen leader: standby ready %.1f s after SIGSTOP, first transfer on it %.1f s after"
                        + " SIGSTOP%n", (readyAt - frozenAt) / 1e9, (firstAt - frozenAt) / 1e9);

                int auditsBefore = w.audits.get();
                leader.signal("CONT");
                assertTrue(leader.process.waitFor(30, TimeUnit.SECONDS), "the resumed, deposed leader exits");
                assertEquals(1, leader.process.exitValue(), "fatal error exit status");
                w.awaitCommits(60);
                awaitCount(w.audits, auditsBefore + 5, w.failures);
                w.stopAndCheck(tm);
            }
        }
    }

    /**
     * A lone oracle frozen with SIGSTOP keeps its connections open and answers nothing. A commit sent to it fails
     * within bounded time as outcome-unknown, naming the timeout, and a begin fails once no oracle answered within the
     * failover timeout; once the oracle is resumed, the same manager serves again.
     */
    @Test
    void aFrozenOracleWithoutAStandbyFailsRequestsInBoundedTimeAndServesAgainOnceResumed() throws Exception {
        MiniCluster c = MiniCluster.get();
        int port = freePort();
        List<String> flags = new ArrayList<>(oracleFlags("/sibyl/test/failover-silent", port, false));
        flags.add("--journal.zk.session.timeout.ms=30000"); // outlives the freeze: no session loss on resume
        TableName table = c.createTable("failover-silent", "cf");
        Map<String, String> settings = Map.of(TransactionManager.ORACLE_ADDRESS, "127.0.0.1:" + port,
                TransactionManager.ORACLE_TIMEOUT_MS, "1000", TransactionManager.FAILOVER_TIMEOUT_MS, "2000");
        try (OracleProcess oracle = new OracleProcess("silent", flags)) {
            oracle.awaitReady(READY_MS);
            try (TransactionManager tm = c.manager(settings); TTable t = new TTable(c.connection(), table)) {
                Transaction sentToAFrozenOracle = tm.begin();
                putInt(t, sentToAFrozenOracle, "row", 1);
                oracle.signal("STOP");
                try {
                    long frozenAt = System.nanoTime();
                    CommitOutcomeUnknownException unknown = assertThrows(CommitOutcomeUnknownException.class,
                            () -> tm.commit(sentToAFrozenOracle));
                    long commitMillis = (System.nanoTime() - frozenAt) / 1_000_000;
                    assertTrue(unknown.getMessage().contains("did not answer a commit within 1000 ms ("
                            + TransactionManager.ORACLE_TIMEOUT_MS + ")"), unknown.getMessage());
                    long beginAt = System.nanoTime();
                    OracleUnavailableException down = assertThrows(OracleUnavailableException.class, tm::begin);
                    long beginMillis = (System.nanoTime() - beginAt) / 1_000_000;
                    assertTrue(down.getMessage().contains("no status oracle answered within 2000 ms"),
                            down.getMessage());
                    System.out.printf("frozen lone oracle: commit failed after %d ms, begin after %d ms%n",
                            commitMillis, beginMillis);
                    assertTrue(commitMillis < 15_000 && beginMillis < 6_000, commitMillis + ", " + beginMillis);
                } finally {
                    oracle.signal("CONT");
                }
                Transaction afterResume = tm.begin();
                putInt(t, afterResume, "row2", 2);
                tm.commit(afterResume);
                Transaction check = tm.begin();
                assertEquals(2, getInt(t, check, "row2"));
                tm.commit(check);
            }
        }
    }

    /**
     * After its oracle dies, a transaction goes on reading from HBase for half the oracle's reader.grace.ms (the new
     * oracle spares every earlier snapshot from garbage collection for the whole period), then its reads fail with
     * {@link SnapshotExpiredException}; {@link TransactionManager#run} retries such work on the new oracle.
     */
    @Test
    void aReaderWhoseOracleDiedReadsForHalfTheGracePeriodThenMustRetry() throws Exception {
        MiniCluster c = MiniCluster.get();
        String root = "/sibyl/test/failover-grace";
        int port = freePort();
        long graceMs = 8000; // a read window of 4 s: room for a slow machine between the kill and the first read
        List<String> flags = new ArrayList<>(oracleFlags(root, port, false));
        flags.add("--reader.grace.ms=" + graceMs);
        flags.add("--journal.zk.session.timeout.ms=30000"); // outlives the freeze below
        TableName table = c.createTable("failover-grace", "cf");
        Map<String, String> settings = new HashMap<>(failoverSettings());
        settings.put(TransactionManager.ORACLE_ADDRESS, "127.0.0.1:" + port);
        OracleProcess first = new OracleProcess("grace-a", flags);
        try (TransactionManager tm = c.manager(settings); TTable t = new TTable(c.connection(), table)) {
            first.awaitReady(READY_MS);
            Transaction writer = tm.begin();
            putInt(t, writer, "row", 7);
            tm.commit(writer);
            Transaction reader = tm.begin();
            assertEquals(7, getInt(t, reader, "row"));
            first.process.destroyForcibly();
            assertTrue(first.process.waitFor(10, TimeUnit.SECONDS));
            long killedAt = System.nanoTime();
            // The read window (half the grace) runs from the last frame heard, before the kill. A busy machine may
            // use it up before the read below ends, so the read must succeed only if it provably ended within it.
            long heardAgoMs = TestSupport.internals(reader).begunOn().millisSinceHeard();
            long readStart = System.nanoTime();
            Long early;
            try {
                early = getInt(t, reader, "row");
            } catch (SnapshotExpiredException late) {
                early = null;
            }
            long endedAfterMs = heardAgoMs + (System.nanoTime() - readStart) / 1_000_000;
            if (endedAfterMs < graceMs / 2) {
                assertEquals(Long.valueOf(7), early, "within half the grace period the snapshot is still read");
            } else {
                System.out.println("read after the kill not checked: it ended " + endedAfterMs + " ms after the last"
                        + " frame from the oracle, past the read window");
            }
            while (System.nanoTime() - killedAt < graceMs / 2 * 1_000_000L) {
                Thread.sleep(50);
            }
            SnapshotExpiredException get = assertThrows(SnapshotExpiredException.class,
                    () -> getInt(t, reader, "row"));
            assertTrue(get.getMessage().contains("reader.grace.ms") && get.getTransaction() == reader,
                    get.getMessage());
            assertThrows(SnapshotExpiredException.class, () -> {
                try (ResultScanner s = t.getScanner(reader, new Scan())) {
                    s.next();
                }
            });
            tm.rollback(reader);

            try (OracleProcess second = new OracleProcess("grace-b", flags)) {
                second.awaitReady(READY_MS);
                AtomicInteger attempts = new AtomicInteger();
                long read = tm.run(tx -> {
                    try {
                        long v = getInt(t, tx, "row");
                        if (attempts.incrementAndGet() == 1) {
                            // This attempt's oracle goes silent (frozen) for longer than the read window.
                            second.signal("STOP");
                            try {
                                Thread.sleep(graceMs / 2 + 500);
                                return getInt(t, tx, "row"); // before the oracle resumes and is heard again
                            } finally {
                                second.signal("CONT");
                            }
                        }
                        return v;
                    } catch (IOException e) {
                        throw new UncheckedIOException(e);
                    } catch (Exception e) {
                        throw new IllegalStateException(e);
                    }
                });
                assertEquals(7, read);
                assertEquals(2, attempts.get(), "the expired snapshot was retried once");
            }
        }
    }

    @Test
    void noOracleAtTheAddressFailsAfterTheFailoverTimeoutSayingWhereItLooked() throws Exception {
        Map<String, String> settings = Map.of(TransactionManager.ORACLE_ADDRESS, "127.0.0.1:" + freePort(),
                TransactionManager.FAILOVER_TIMEOUT_MS, "300");
        OracleUnavailableException e = assertThrows(OracleUnavailableException.class,
                () -> MiniCluster.get().manager(settings).close());
        assertTrue(e.getMessage().contains("no status oracle answered within 300 ms")
                && e.getMessage().contains("address 127.0.0.1:"), e.getMessage());
    }

    @Test
    void noLeaderInZooKeeperFailsAfterTheFailoverTimeoutNamingTheZnode() throws Exception {
        Map<String, String> settings = Map.of(TransactionManager.ORACLE_ADDRESS, "",
                TransactionManager.ORACLE_ZK_CONNECT, bookies.zkConnect(),
                TransactionManager.ORACLE_LEADER_ZNODE, "/sibyl/test/nobody/leader",
                TransactionManager.FAILOVER_TIMEOUT_MS, "500");
        OracleUnavailableException e = assertThrows(OracleUnavailableException.class,
                () -> MiniCluster.get().manager(settings).close());
        assertTrue(e.getMessage().contains("no oracle has published itself at /sibyl/test/nobody/leader"),
                e.getMessage());
    }

    @Test
    void settingBothAnAddressAndZooKeeperIsRejected() {
        Map<String, String> settings = Map.of(TransactionManager.ORACLE_ADDRESS, "127.0.0.1:1",
                TransactionManager.ORACLE_ZK_CONNECT, bookies.zkConnect());
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> MiniCluster.get().manager(settings).close());
        assertTrue(e.getMessage().contains("not both"), e.getMessage());
    }

    /** Brings up the oracle that takes over and returns once it serves (with the process to stop, if new). */
    interface Takeover {
        OracleProcess start() throws Exception;
    }

    private void runTransfersAcrossAFailover(Map<String, String> settings, OracleProcess first, Takeover takeover)
            throws Exception {
        MiniCluster c = MiniCluster.get();
        settings.putAll(failoverSettings());
        TableName table = c.createTable("failover", "cf");
        try (TransactionManager tm = c.manager(settings); TTable accounts = new TTable(c.connection(), table)) {
            Workload w = new Workload(accounts);
            openAccounts(tm, accounts);
            w.start(tm, THREADS, false);
            w.awaitCommits(100);
            int beforeKill = w.committed.get();
            first.process.destroyForcibly(); // SIGKILL with commits in flight
            assertTrue(first.process.waitFor(10, TimeUnit.SECONDS));
            long killedAt = System.nanoTime();
            try (OracleProcess second = takeover.start()) { // null when the standby took over
                w.awaitCommits(100);
                System.out.printf("failover: %d commits before the kill, first %d after it; %.0f ms from the kill to"
                        + " 100 more commits%n", beforeKill, w.committed.get(), (System.nanoTime() - killedAt) / 1e6);
                w.stopAndCheck(tm);
                assertTrue(tm.connection().reconnects() >= 1, "the manager reconnected");
            }
        }
    }

    /** Client settings that find the leader of the HA group under {@code root} through ZooKeeper. */
    private static Map<String, String> zooKeeperClient(String root) {
        Map<String, String> settings = new HashMap<>(failoverSettings());
        settings.put(TransactionManager.ORACLE_ADDRESS, "");
        settings.put(TransactionManager.ORACLE_ZK_CONNECT, bookies.zkConnect());
        settings.put(TransactionManager.ORACLE_LEADER_ZNODE, root + "/leader");
        return settings;
    }

    /** Patient clients: conflicts retried many times, and a minute for an oracle to take over. */
    private static Map<String, String> failoverSettings() {
        return Map.of(TransactionManager.RETRY_ATTEMPTS, "1000", TransactionManager.RETRY_BACKOFF_MS, "1",
                TransactionManager.RETRY_BACKOFF_MAX_MS, "20", TransactionManager.FAILOVER_TIMEOUT_MS, "60000");
    }

    private static void openAccounts(TransactionManager tm, TTable accounts) throws Exception {
        tm.run(tx -> {
            try {
                for (int i = 0; i < ACCOUNTS; i++) {
                    putInt(accounts, tx, account(i), OPENING);
                }
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
            return null;
        });
    }

    /** Waits for {@code count} to reach {@code target}, or for a failure, which it throws. */
    private static void awaitCount(AtomicInteger count, int target, ConcurrentLinkedQueue<Throwable> failures) {
        await().atMost(Duration.ofSeconds(90)).pollInterval(Duration.ofMillis(10)).untilAsserted(() -> assertTrue(
                count.get() >= target || !failures.isEmpty(), () -> "only " + count.get() + " of " + target));
        assertNoFailures(failures);
    }

    /** Fails with the first failure as the cause, so its stack trace is in the report. */
    private static void assertNoFailures(ConcurrentLinkedQueue<Throwable> failures) {
        if (!failures.isEmpty()) {
            throw new AssertionError("transfers or audits failed: " + failures, failures.peek());
        }
    }

    /** Transfer and audit threads on one accounts table, and what they saw. */
    private static final class Workload {
        final TTable accounts;
        final AtomicLongArray delta = new AtomicLongArray(ACCOUNTS);
        final AtomicInteger committed = new AtomicInteger();
        final AtomicInteger audits = new AtomicInteger();
        final AtomicBoolean stop = new AtomicBoolean();
        final ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
        final List<Thread> threads = new ArrayList<>();

        Workload(TTable accounts) {
            this.accounts = accounts;
        }

        /** Starts {@code transferThreads} transfer threads on {@code tm}, and an auditor if {@code audit}. */
        void start(TransactionManager tm, int transferThreads, boolean audit) {
            for (int t = 0; t < transferThreads; t++) {
                startThread("transfers-" + threads.size(), () -> transferUntilStopped(tm));
            }
            if (audit) {
                startThread("audits-" + threads.size(), () -> auditUntilStopped(tm));
            }
        }

        private void startThread(String name, Runnable work) {
            Thread th = new Thread(work, name);
            th.start();
            threads.add(th);
        }

        void awaitCommits(int more) {
            awaitCount(committed, committed.get() + more, failures);
        }

        /** Stops the threads, then checks that none failed and that every balance is exact. */
        void stopAndCheck(TransactionManager tm) throws Exception {
            stop.set(true);
            for (Thread th : threads) {
                th.join(60_000);
                assertTrue(!th.isAlive(), th.getName() + " finished");
            }
            assertNoFailures(failures);
            Transaction audit = tm.begin();
            long total = 0;
            for (int i = 0; i < ACCOUNTS; i++) {
                long balance = getInt(accounts, audit, account(i));
                assertEquals(OPENING + delta.get(i), balance, "balance of " + account(i));
                total += balance;
            }
            tm.commit(audit);
            assertEquals(OPENING * ACCOUNTS, total);
        }

        /** Read-only audits of every account in one snapshot; an inexact total is a failure. */
        private void auditUntilStopped(TransactionManager tm) {
            while (!stop.get()) {
                try {
                    Transaction audit = tm.begin();
                    long total = 0;
                    for (int i = 0; i < ACCOUNTS; i++) {
                        total += getInt(accounts, audit, account(i));
                    }
                    tm.commit(audit);
                    if (total != OPENING * ACCOUNTS) {
                        failures.add(new AssertionError("audit at snapshot " + audit.getStartTimestamp()
                                + " saw total " + total + ", not " + OPENING * ACCOUNTS));
                        return;
                    }
                    audits.incrementAndGet();
                } catch (Throwable e) {
                    failures.add(e);
                    return;
                }
            }
        }

        private void transferUntilStopped(TransactionManager tm) {
            ThreadLocalRandom rnd = ThreadLocalRandom.current();
            while (!stop.get()) {
                int from = rnd.nextInt(ACCOUNTS);
                int to = (from + 1 + rnd.nextInt(ACCOUNTS - 1)) % ACCOUNTS;
                long amount = 1 + rnd.nextInt(20);
                try {
                    tm.run(tx -> {
                        try {
                            putInt(accounts, tx, account(from), getInt(accounts, tx, account(from)) - amount);
                            putInt(accounts, tx, account(to), getInt(accounts, tx, account(to)) + amount);
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                        return null;
                    });
                    delta.addAndGet(from, -amount);
                    delta.addAndGet(to, amount);
                    committed.incrementAndGet();
                } catch (Throwable e) {
                    failures.add(e);
                    return;
                }
            }
        }
    }

    private static String account(int i) {
        return String.format("acct%02d", i);
    }
}
