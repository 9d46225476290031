package io.sibyl.client.oracle;

import io.sibyl.client.MiniCluster;
import io.sibyl.client.RollbackException;
import io.sibyl.client.TTable;
import io.sibyl.client.Transaction;
import io.sibyl.client.TransactionManager;
import io.sibyl.oracle.ha.OracleProcess;
import io.sibyl.oracle.journal.BookKeeperCluster;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Faults on the client's side of ZooKeeper, for a {@link TransactionManager} that finds the leading oracle through
 * it: real in-process ZooKeeper and bookies, HA pairs of so-server processes on the BookKeeper journal, and a
 * {@link ZooKeeperLink} between the client and ZooKeeper that cuts the client off while the oracles keep their own
 * sessions. ZooKeeper is needed only to find a new leader: the known leader keeps serving through any of these, and
 * the same manager follows a failover once ZooKeeper answers again, also on a session of its own after its first one
 * expired.
 */
@ExtendWith(MiniCluster.class)
@Timeout(value = 240, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class ClientZooKeeperFaultsTest {
    private static final long READY_MS = 60_000;
    private static final byte[] CF = Bytes.toBytes("cf");
    private static final byte[] Q = Bytes.toBytes("n");
    private static final byte[] ROW = Bytes.toBytes("counter");
    /** How long the client's ZooKeeper session may take to do what a test waits for. */
    private static final ConditionFactory WITHIN_A_MINUTE = await().atMost(Duration.ofMinutes(1))
            .pollInterval(Duration.ofMillis(20));

    @RegisterExtension
    static final BookKeeperCluster zooKeeperAndBookies = BookKeeperCluster.perTestClass(3);

    @Test
    void aFailoverAfterTheClientsZooKeeperSessionExpiredIsFollowed() throws Exception {
        String root = "/sibyl/test/zk-faults-expiry";
        TableName table = MiniCluster.get().createTable("zk-expiry", "cf");
        try (ZooKeeperLink link = new ZooKeeperLink(zooKeeperAndBookies.zkConnect());
             HaPair oracles = HaPair.start("expiry", root);
             TransactionManager tm = TransactionManager.create(clientSettings(link.connect(), root, 30_000));
             TTable counter = new TTable(MiniCluster.get().connection(), table)) {
            long committed = increment(tm, counter, 0);
            WITHIN_A_MINUTE.alias("the client's ZooKeeper session was opened").until(
                    () -> !link.handshakes().isEmpty());
            ZooKeeperLink.Handshake first = link.handshakes().get(0);

            link.cut();
            expire(first); // while the client is cut off, as after a partition longer than its session timeout
            Transaction before = tm.begin();
            counter.put(before, new Put(ROW).addColumn(CF, Q, Bytes.toBytes(committed + 1)));
            tm.commit(before); // the leader it knows serves on
            committed++;
            committed = increment(tm, counter, committed);

            link.restore();
            WITHIN_A_MINUTE.alias("ZooKeeper told the client that its session expired: " + link.handshakes()).until(
                    () -> link.handshakes().stream().anyMatch(ZooKeeperLink.Handshake::refusedAsExpired));
            WITHIN_A_MINUTE.alias("the client opened a new session: " + link.handshakes()).until(
                    () -> link.handshakes().stream().skip(1).anyMatch(ZooKeeperLink.Handshake::openedNewSession));

            oracles.killLeaderAndAwaitTakeover();
            committed = increment(tm, counter, committed); // begins on the new leader, found on the new session
            assertEquals(committed, read(tm, counter));
        }
    }

    @Test
    void transactionsGoOnWhileZooKeeperIsUnreachableAndTheNextFailoverIsFoundWhenItReturns() throws Exception {
        String root = "/sibyl/test/zk-faults-unreachable";
        TableName table = MiniCluster.get().createTable("zk-unreachable", "cf");
        try (ZooKeeperLink link = new ZooKeeperLink(zooKeeperAndBookies.zkConnect());
             HaPair oracles = HaPair.start("unreachable", root);
             TransactionManager tm = TransactionManager.create(clientSettings(link.connect(), root, 60_000));
             TTable counter = new TTable(MiniCluster.get().connection(), table)) {
            long committed = increment(tm, counter, 0);
            Transaction running = tm.begin();

            link.cut();
            counter.put(running, new Put(ROW).addColumn(CF, Q, Bytes.toBytes(committed + 1)));
            tm.commit(running); // begun before the cut, committed during it
            committed++;
            for (int i = 0; i < 5; i++) {
                committed = increment(tm, counter, committed); // begun and committed during it
            }

            oracles.killLeaderAndAwaitTakeover(); // the client cannot learn of the new leader yet
            link.restore();
            committed = increment(tm, counter, committed);
            assertEquals(committed, read(tm, counter));
        }
    }

    @Test
    void creatingAManagerWhileZooKeeperIsUnreachableFailsInBoundedTimeNamingWhatToCheck() throws Exception {
        try (ZooKeeperLink link = new ZooKeeperLink(zooKeeperAndBookies.zkConnect())) {
            link.cut();
            long start = System.nanoTime();
            OracleUnavailableException e = assertThrows(OracleUnavailableException.class,
                    () -> TransactionManager.create(clientSettings(link.connect(), "/sibyl/test/zk-faults-down", 3_000)));
            long tookMillis = (System.nanoTime() - start) / 1_000_000L;
            String m = e.getMessage();
            assertTrue(m.contains("could not reach ZooKeeper at " + link.connect()), m);
            assertTrue(m.contains(TransactionManager.ORACLE_ZK_CONNECT), m);
            assertTrue(m.contains(TransactionManager.FAILOVER_TIMEOUT_MS + "=3000"), m);
            assertTrue(tookMillis < 60_000, "gave up after the failover timeout, not never: " + tookMillis + " ms");
        }
    }

    @Test
    void aMalformedZooKeeperConnectStringIsRejectedNamingTheSetting() {
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> TransactionManager.create(clientSettings("127.0.0.1:zk", "/sibyl/test/zk-faults-bad", 3_000)));
        assertTrue(e.getMessage().contains(TransactionManager.ORACLE_ZK_CONNECT + "=127.0.0.1:zk"), e.getMessage());
    }

    @Test
    void aMissingLeaderZnodeFailsCreateSayingNoOracleIsRegisteredThere() {
        String leader = "/sibyl/test/zk-faults-none/leader";
        OracleUnavailableException e = assertThrows(OracleUnavailableException.class,
                () -> TransactionManager.create(clientSettings(zooKeeperAndBookies.zkConnect(),
                        "/sibyl/test/zk-faults-none", 3_000)));
        String m = e.getMessage();
        assertTrue(m.contains("no oracle has published itself at " + leader), m);
        assertTrue(m.contains(TransactionManager.ORACLE_LEADER_ZNODE), m);
        assertTrue(m.contains(TransactionManager.FAILOVER_TIMEOUT_MS + "=3000"), m);
    }

    @Test
    void aLeaderZnodeHoldingGarbageFailsCreateSayingItIsNoLeaderRecord() throws Exception {
        String root = "/sibyl/test/zk-faults-garbage";
        ZooKeeper zk = zooKeeperAndBookies.zooKeeper(zooKeeperAndBookies.settings("zk-faults-garbage"));
        createWithParents(zk, root + "/leader", "not a leader record".getBytes(StandardCharsets.UTF_8));
        OracleUnavailableException e = assertThrows(OracleUnavailableException.class,
                () -> TransactionManager.create(clientSettings(zooKeeperAndBookies.zkConnect(), root, 3_000)));
        String m = e.getMessage();
        assertTrue(m.contains(root + "/leader holds no leader record"), m);
        assertTrue(m.contains(TransactionManager.ORACLE_LEADER_ZNODE), m);
    }

    @Test
    void creatingAManagerBeforeAnyOracleRegisteredWaitsForTheFirstOne() throws Exception {
        String root = "/sibyl/test/zk-faults-late";
        TableName table = MiniCluster.get().createTable("zk-late", "cf");
        CompletableFuture<TransactionManager> created = CompletableFuture.supplyAsync(() -> {
            try {
                return TransactionManager.create(clientSettings(zooKeeperAndBookies.zkConnect(), root, 120_000));
            } catch (IOException e) {
                throw new IllegalStateException(e);
            }
        });
        try (OracleProcess oracle = new OracleProcess("late", HaPair.flags(root))) {
            assertTrue(!created.isDone(), "create returned before any oracle registered");
            oracle.awaitReady(READY_MS);
            try (TransactionManager tm = created.get(120, TimeUnit.SECONDS);
                 TTable counter = new TTable(MiniCluster.get().connection(), table)) {
                assertEquals(1, increment(tm, counter, 0));
            }
        } finally {
            created.thenAccept(TransactionManager::close);
        }
    }

    /** A leader and a hot standby of one journal under {@code root}. */
    private static final class HaPair implements AutoCloseable {
        final OracleProcess leader;
        final OracleProcess standby;

        private HaPair(OracleProcess leader, OracleProcess standby) {
            this.leader = leader;
            this.standby = standby;
        }

        static HaPair start(String name, String root) throws Exception {
            OracleProcess leader = new OracleProcess(name + "-a", flags(root));
            try {
                leader.awaitReady(READY_MS); // elected first: the standby starts only now
                OracleProcess standby = new OracleProcess(name + "-b", flags(root));
                try {
                    standby.awaitLine("STANDBY", READY_MS);
                    return new HaPair(leader, standby);
                } catch (Exception | AssertionError e) {
                    standby.close();
                    throw e;
                }
            } catch (Exception | AssertionError e) {
                leader.close();
                throw e;
            }
        }

        static List<String> flags(String root) {
            String zk = zooKeeperAndBookies.zkConnect();
            return List.of("--port=0", "--host=127.0.0.1", "--journal=bookkeeper", "--journal.zk.connect=" + zk,
                    "--journal.bk.metadata.uri=zk+null://" + zk + "/ledgers", "--journal.ledgers.znode=" + root
                            + "/ledgers", "--journal.leader.znode=" + root + "/leader", "--journal.election.znode="
                            + root + "/election", "--ha=true", "--conflict.table.rows=65536",
                    "--max.running.transactions=4096");
        }

        void killLeaderAndAwaitTakeover() throws Exception {
            leader.process.destroyForcibly();
            assertTrue(leader.process.waitFor(10, TimeUnit.SECONDS));
            standby.awaitReady(READY_MS);
        }

        @Override
        public void close() {
            standby.close();
            leader.close();
        }
    }

    private static Configuration clientSettings(String zkConnect, String root, long failoverTimeoutMillis) {
        Configuration c = MiniCluster.get().configuration();
        c.unset(TransactionManager.ORACLE_ADDRESS);
        c.set(TransactionManager.ORACLE_ZK_CONNECT, zkConnect);
        c.set(TransactionManager.ORACLE_LEADER_ZNODE, root + "/leader");
        c.setLong(TransactionManager.FAILOVER_TIMEOUT_MS, failoverTimeoutMillis);
        return c;
    }

    /** One read-modify-write transaction on the counter, which holds {@code expected}; returns the new count. */
    private static long increment(TransactionManager tm, TTable counter, long expected)
            throws IOException, RollbackException {
        Transaction tx = tm.begin();
        assertEquals(expected, value(counter, tx));
        counter.put(tx, new Put(ROW).addColumn(CF, Q, Bytes.toBytes(expected + 1)));
        tm.commit(tx);
        return expected + 1;
    }

    private static long read(TransactionManager tm, TTable counter) throws IOException, RollbackException {
        Transaction tx = tm.begin();
        long v = value(counter, tx);
        tm.commit(tx);
        return v;
    }

    private static long value(TTable counter, Transaction tx) throws IOException {
        byte[] v = counter.get(tx, new Get(ROW).addColumn(CF, Q)).getValue(CF, Q);
        return v == null ? 0 : Bytes.toLong(v);
    }

    /**
     * Ends the session of {@code handshake} at ZooKeeper, the way ZooKeeper ends a session it has not heard from for
     * its timeout: a second handle attaches to it (with the password ZooKeeper granted) and closes it.
     */
    private static void expire(ZooKeeperLink.Handshake handshake) throws Exception {
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper twin = new ZooKeeper(zooKeeperAndBookies.zkConnect(), 10_000, event -> {
            if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        }, handshake.grantedSession(), handshake.password());
        try {
            assertTrue(connected.await(30, TimeUnit.SECONDS), "attached to the client's session");
        } finally {
            twin.close();
        }
    }

    private static void createWithParents(ZooKeeper zk, String path, byte[] data) throws Exception {
        StringBuilder at = new StringBuilder();
        String[] parts = path.substring(1).split("/");
        for (int i = 0; i < parts.length; i++) {
            at.append('/').append(parts[i]);
            try {
                zk.create(at.toString(), i == parts.length - 1 ? data : new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE,
                        CreateMode.PERSISTENT);
            } catch (KeeperException.NodeExistsException e) {
                // a parent another test made
            }
        }
    }
}
