package io.sibyl.client;

import io.sibyl.client.oracle.OracleUnavailableException;
import io.sibyl.oracle.ha.OracleProcess;
import io.sibyl.oracle.journal.BookKeeperCluster;
import org.apache.hadoop.hbase.TableName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.ServerSocket;
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

    @Test
    void transfersFollowTheStandbyThatTakesOverThroughZooKeeper() throws Exception {
        String root = "/sibyl/test/failover-ha";
        Map<String, String> settings = new HashMap<>();
        settings.put(TransactionManager.ORACLE_ADDRESS, "");
        settings.put(TransactionManager.ORACLE_ZK_CONNECT, bookies.zkConnect());
        settings.put(TransactionManager.ORACLE_LEADER_ZNODE, root + "/leader");
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
        Map<String, String> settings = new HashMap<>(failoverSettings());
        settings.put(TransactionManager.ORACLE_ADDRESS, "");
        settings.put(TransactionManager.ORACLE_ZK_CONNECT, bookies.zkConnect());
        settings.put(TransactionManager.ORACLE_LEADER_ZNODE, root + "/leader");
        TableName table = c.createTable("failover-chain", "cf");
        List<OracleProcess> oracles = new ArrayList<>();
        try {
            OracleProcess leader = new OracleProcess("chain-0", oracleFlags(root, 0, true));
            oracles.add(leader);
            leader.awaitReady(READY_MS);
            OracleProcess standby = new OracleProcess("chain-1", oracleFlags(root, 0, true));
            oracles.add(standby);
            standby.awaitLine("STANDBY", READY_MS);
            try (TransactionManager one = c.manager(settings); TransactionManager two = c.manager(settings);
                 TTable accounts = new TTable(c.connection(), table)) {
                openAccounts(one, accounts);
                AtomicLongArray delta = new AtomicLongArray(ACCOUNTS);
                AtomicInteger committed = new AtomicInteger();
                AtomicInteger audits = new AtomicInteger();
                AtomicBoolean stop = new AtomicBoolean();
                ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
                List<Thread> threads = new ArrayList<>();
                for (TransactionManager tm : List.of(one, two)) {
                    for (int t = 0; t < 2; t++) {
                        threads.add(new Thread(() -> transferUntilStopped(tm, accounts, delta, committed, stop,
                                failures), "transfers-" + threads.size()));
                    }
                    threads.add(new Thread(() -> auditUntilStopped(tm, accounts, audits, stop, failures),
                            "audits-" + threads.size()));
                }
                threads.forEach(Thread::start);
                for (int round = 2; round <= 4; round++) {
                    awaitCount(committed, committed.get() + 60, failures);
                    int auditsBefore = audits.get();
                    leader.process.destroyForcibly();
                    assertTrue(leader.process.waitFor(10, TimeUnit.SECONDS));
                    standby.awaitReady(READY_MS); // it leads now
                    leader = standby;
                    standby = new OracleProcess("chain-" + round, oracleFlags(root, 0, true));
                    oracles.add(standby);
                    standby.awaitLine("STANDBY", READY_MS);
                    awaitCount(committed, committed.get() + 30, failures);
                    awaitCount(audits, auditsBefore + 5, failures);
                }
                stop.set(true);
                for (Thread th : threads) {
                    th.join(60_000);
                    assertTrue(!th.isAlive(), th.getName() + " finished");
                }
                assertTrue(failures.isEmpty(), "no transfer or audit failed: " + failures);
                assertTrue(one.connection().reconnects() >= 3 && two.connection().reconnects() >= 3,
                        "both clients followed all three takeovers: " + one.connection().reconnects() + ", "
                                + two.connection().reconnects());
                assertFinalBalances(two, accounts, delta);
                System.out.printf("three takeovers: %d transfers committed, %d exact audits%n", committed.get(),
                        audits.get());
            }
        } finally {
            oracles.forEach(OracleProcess::close);
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
            openAccounts(tm, accounts);
            AtomicLongArray delta = new AtomicLongArray(ACCOUNTS);
            AtomicInteger committed = new AtomicInteger();
            AtomicBoolean stop = new AtomicBoolean();
            ConcurrentLinkedQueue<Throwable> failures = new ConcurrentLinkedQueue<>();
            List<Thread> threads = new ArrayList<>();
            for (int t = 0; t < THREADS; t++) {
                Thread th = new Thread(() -> transferUntilStopped(tm, accounts, delta, committed, stop, failures),
                        "transfers-" + t);
                th.start();
                threads.add(th);
            }
            awaitCount(committed, 100, failures);
            int beforeKill = committed.get();
            first.process.destroyForcibly(); // SIGKILL with commits in flight
            assertTrue(first.process.waitFor(10, TimeUnit.SECONDS));
            long killedAt = System.nanoTime();
            try (OracleProcess second = takeover.start()) { // null when the standby took over
                awaitCount(committed, committed.get() + 100, failures);
                System.out.printf("failover: %d commits before the kill, first %d after it; %.0f ms from the kill to"
                        + " 100 more commits%n", beforeKill, committed.get(), (System.nanoTime() - killedAt) / 1e6);
                stop.set(true);
                for (Thread th : threads) {
                    th.join(60_000);
                    assertTrue(!th.isAlive(), th.getName() + " finished");
                }
                assertTrue(failures.isEmpty(), "no transfer failed for good: " + failures);
                assertTrue(tm.connection().reconnects() >= 1, "the manager reconnected");

                assertFinalBalances(tm, accounts, delta);
            }
        }
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

    /** Every balance is its opening value plus the committed transfers, read in one snapshot. */
    private static void assertFinalBalances(TransactionManager tm, TTable accounts, AtomicLongArray delta)
            throws Exception {
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

    private static void awaitCount(AtomicInteger count, int target, ConcurrentLinkedQueue<Throwable> failures)
            throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        while (count.get() < target && failures.isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertTrue(failures.isEmpty(), "transfers or audits failed: " + failures);
        assertTrue(count.get() >= target, "only " + count.get() + " of " + target);
    }

    /** Read-only audits of every account in one snapshot; an inexact total is a failure. */
    private static void auditUntilStopped(TransactionManager tm, TTable accounts, AtomicInteger audits,
                                          AtomicBoolean stop, ConcurrentLinkedQueue<Throwable> failures) {
        while (!stop.get()) {
            try {
                Transaction audit = tm.begin();
                long total = 0;
                for (int i = 0; i < ACCOUNTS; i++) {
                    total += getInt(accounts, audit, account(i));
                }
                tm.commit(audit);
                if (total != OPENING * ACCOUNTS) {
                    failures.add(new AssertionError("audit at snapshot " + audit.getStartTimestamp() + " saw total "
                            + total + ", not " + OPENING * ACCOUNTS));
                    return;
                }
                audits.incrementAndGet();
            } catch (Throwable e) {
                failures.add(e);
                return;
            }
        }
    }

    private static void transferUntilStopped(TransactionManager tm, TTable accounts, AtomicLongArray delta,
                                             AtomicInteger committed, AtomicBoolean stop,
                                             ConcurrentLinkedQueue<Throwable> failures) {
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

    private static String account(int i) {
        return String.format("acct%02d", i);
    }
}
