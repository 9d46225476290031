package io.sibyl.client;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HConstants;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.TableNotFoundException;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Consistency;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.function.Executable;

import java.io.IOException;
import java.util.Map;

import static io.sibyl.client.TestSupport.CF;
import static io.sibyl.client.TestSupport.V;
import static io.sibyl.client.TestSupport.b;
import static io.sibyl.client.TestSupport.put;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Misuse gets an exception that says what is wrong and what to do. */
@ExtendWith(MiniCluster.class)
class MisuseTest {
    private static TransactionManager tm;
    private static TTable t;

    @BeforeAll
    static void setUp() throws Exception {
        MiniCluster c = MiniCluster.get();
        tm = c.manager();
        t = new TTable(c.connection(), c.createTable("misuse", "cf"));
    }

    @AfterAll
    static void close() {
        t.close();
        tm.close();
    }

    private static <T extends Throwable> void assertFails(Class<T> type, String fragment, Executable e) {
        T thrown = assertThrows(type, e);
        assertTrue(thrown.getMessage().contains(fragment), "message \"" + thrown.getMessage() + "\" should mention \""
                + fragment + "\"");
    }

    @Test
    void finishedTransactionsRefuseEveryOperation() throws Exception {
        Transaction committed = tm.begin();
        put(t, committed, "r", "1");
        tm.commit(committed);
        Transaction rolledBack = tm.begin();
        tm.rollback(rolledBack);
        for (Transaction tx : new Transaction[] {committed, rolledBack}) {
            String what = tx == committed ? "already committed" : "already rolled back";
            assertFails(IllegalStateException.class, what, () -> t.get(tx, new Get(b("r"))));
            assertFails(IllegalStateException.class, what, () -> put(t, tx, "r", "2"));
            assertFails(IllegalStateException.class, what, () -> t.delete(tx, new Delete(b("r"))));
            assertFails(IllegalStateException.class, what, () -> t.getScanner(tx, new Scan()));
            assertFails(IllegalStateException.class, what + ": reads, writes and commits need a running transaction",
                    () -> tm.commit(tx));
        }
        assertFails(IllegalStateException.class, "cannot be rolled back", () -> tm.rollback(committed));
    }

    @Test
    void scannerStopsWhenItsTransactionEnds() throws Exception {
        Transaction init = tm.begin();
        put(t, init, "s1", "1");
        put(t, init, "s2", "2");
        tm.commit(init);
        Transaction tx = tm.begin();
        var scanner = t.getScanner(tx, new Scan().withStartRow(b("s")).withStopRow(b("t")).setCaching(1));
        scanner.next();
        tm.commit(tx);
        assertFails(IllegalStateException.class, "already committed", scanner::next);
        scanner.close();
    }

    @Test
    void closedManagerRefusesBeginsAndRollsBackItsTransactions() throws Exception {
        TransactionManager other = MiniCluster.get().manager();
        Transaction running = other.begin();
        put(t, running, "closed-manager", "1");
        other.close();
        other.close(); // idempotent
        assertEquals(Transaction.Status.ROLLED_BACK, running.getStatus());
        assertFails(IllegalStateException.class, "TransactionManager is closed", other::begin);
        assertFails(IllegalStateException.class, "TransactionManager was closed",
                () -> t.get(running, new Get(b("closed-manager"))));
    }

    @Test
    void closedTableRefusesOperations() throws Exception {
        MiniCluster c = MiniCluster.get();
        TTable closed = new TTable(c.connection(), t.getName());
        closed.close();
        Transaction tx = tm.begin();
        assertFails(IllegalStateException.class, "is closed", () -> closed.get(tx, new Get(b("r"))));
        assertFails(IllegalStateException.class, "is closed", () -> put(closed, tx, "r", "1"));
        tm.rollback(tx);
    }

    @Test
    void missingTableIsReportedWithAHint() {
        TableNotFoundException e = assertThrows(TableNotFoundException.class,
                () -> new TTable(MiniCluster.get().connection(), TableName.valueOf("no_such_table")));
        assertTrue(e.getMessage().contains("no_such_table") && e.getMessage().contains("create it"), e.getMessage());
    }

    @Test
    void anHBaseThatCannotBeReachedIsNamedWithTheTableAndTheSettingToCheck() throws Exception {
        Configuration conf = MiniCluster.get().configuration();
        conf.set(HConstants.ZOOKEEPER_CLIENT_PORT, "1");
        conf.set("zookeeper.registry.async.get.timeout", "500"); // HBase's 10 s wait, shortened for the test
        try (Connection unreachable = ConnectionFactory.createConnection(conf)) {
            IOException e = assertThrows(IOException.class, () -> new TTable(unreachable, t.getName()));
            assertTrue(e.getMessage().contains("cannot open table " + t.getName())
                    && e.getMessage().contains("(client port 1)") && e.getMessage().contains("hbase.zookeeper.quorum"),
                    e.getMessage());
        }
    }

    @Test
    void tablesThatCannotHoldVersionsAreRefused() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName oneVersion = TableName.valueOf("one_version");
        TableName withTtl = TableName.valueOf("with_ttl");
        TableName newVersionBehavior = TableName.valueOf("new_version_behavior");
        try (Admin admin = c.connection().getAdmin()) {
            admin.createTable(TableDescriptorBuilder.newBuilder(newVersionBehavior).setColumnFamily(
                    ColumnFamilyDescriptorBuilder.newBuilder(CF).setMaxVersions(Integer.MAX_VALUE)
                            .setNewVersionBehavior(true).build()).build());
            admin.createTable(TableDescriptorBuilder.newBuilder(oneVersion)
                    .setColumnFamily(ColumnFamilyDescriptorBuilder.of("cf")).build());
            admin.createTable(TableDescriptorBuilder.newBuilder(withTtl).setColumnFamily(
                    ColumnFamilyDescriptorBuilder.newBuilder(CF).setMaxVersions(Integer.MAX_VALUE).setTimeToLive(3600)
                            .build()).build());
        }
        assertFails(IllegalArgumentException.class, "setMaxVersions", () -> new TTable(c.connection(), oneVersion));
        assertFails(IllegalArgumentException.class, "TTL", () -> new TTable(c.connection(), withTtl));
        assertFails(IllegalArgumentException.class, "setNewVersionBehavior(false)",
                () -> new TTable(c.connection(), newVersionBehavior));
    }

    @Test
    void userTimestampsAndTimeRangesAreRejected() throws Exception {
        Transaction tx = tm.begin();
        assertFails(IllegalArgumentException.class, "must not set a timestamp",
                () -> t.put(tx, new Put(b("r"), 5L).addColumn(CF, V, b("x"))));
        assertFails(IllegalArgumentException.class, "must not set a timestamp",
                () -> t.put(tx, new Put(b("r")).addColumn(CF, V, 5L, b("x"))));
        assertFails(IllegalArgumentException.class, "must not set a timestamp",
                () -> t.delete(tx, new Delete(b("r"), 5L)));
        assertFails(IllegalArgumentException.class, "must not set a timestamp",
                () -> t.delete(tx, new Delete(b("r")).addColumn(CF, V, 5L)));
        assertFails(IllegalArgumentException.class, "must not set a timestamp",
                () -> t.delete(tx, new Delete(b("r")).addFamilyVersion(CF, 5L)));
        assertFails(IllegalArgumentException.class, "time range",
                () -> t.get(tx, new Get(b("r")).setTimestamp(5L)));
        assertFails(IllegalArgumentException.class, "time range",
                () -> t.get(tx, new Get(b("r")).setTimeRange(0, 10)));
        assertFails(IllegalArgumentException.class, "time range",
                () -> t.getScanner(tx, new Scan().setTimeRange(0, 10)));
        assertFails(IllegalArgumentException.class, "time range",
                () -> t.get(tx, new Get(b("r")).setColumnFamilyTimeRange(CF, 0, 10)));
        assertFails(IllegalArgumentException.class, "time range",
                () -> t.getScanner(tx, new Scan().setColumnFamilyTimeRange(CF, 0, 10)));
        assertFails(IllegalArgumentException.class, "one version",
                () -> t.get(tx, new Get(b("r")).readVersions(3)));
        assertFails(IllegalArgumentException.class, "one version",
                () -> t.getScanner(tx, new Scan().readAllVersions()));
        assertFails(IllegalArgumentException.class, "raw", () -> t.getScanner(tx, new Scan().setRaw(true)));
        assertFails(IllegalArgumentException.class, "primary region",
                () -> t.get(tx, new Get(b("r")).setConsistency(Consistency.TIMELINE)));
        assertFails(IllegalArgumentException.class, "primary region",
                () -> t.getScanner(tx, new Scan().setConsistency(Consistency.TIMELINE)));
        assertFails(IllegalArgumentException.class, "no columns", () -> t.put(tx, new Put(b("r"))));
        assertFails(IllegalArgumentException.class, "reserved delete marker",
                () -> t.put(tx, new Put(b("r")).addColumn(CF, V, Tombstones.VALUE.clone())));
        assertFails(NoSuchColumnFamilyException.class, "nope",
                () -> t.put(tx, new Put(b("r")).addColumn(b("nope"), V, b("x"))));
        assertFails(NoSuchColumnFamilyException.class, "nope", () -> t.get(tx, new Get(b("r")).addFamily(b("nope"))));
        assertTrue(tx.isReadOnly(), "nothing was buffered by the rejected calls");
        assertEquals(HConstants.LATEST_TIMESTAMP, new Put(b("r")).getTimestamp());
        tm.commit(tx);
    }

    @Test
    void transactionOfAnotherManagerIsRefused() throws Exception {
        try (TransactionManager other = MiniCluster.get().manager()) {
            Transaction foreign = other.begin();
            assertFails(IllegalArgumentException.class, "another TransactionManager", () -> tm.commit(foreign));
            other.rollback(foreign);
        }
    }

    @Test
    void anOracleThatCannotBeReachedIsNamedWithTheSettingToCheck() {
        Configuration wrongPort = MiniCluster.get().configuration();
        wrongPort.set(TransactionManager.ORACLE_ADDRESS, "127.0.0.1:1");
        wrongPort.set(TransactionManager.FAILOVER_TIMEOUT_MS, "1000");
        String refused = assertThrows(RuntimeException.class, () -> TransactionManager.create(wrongPort)).getMessage();
        assertTrue(refused.contains("address 127.0.0.1:1") && refused.contains("Connection refused")
                && refused.contains("check this client's " + TransactionManager.ORACLE_ADDRESS), refused);

        Configuration deadZooKeeper = MiniCluster.get().configuration();
        deadZooKeeper.unset(TransactionManager.ORACLE_ADDRESS);
        deadZooKeeper.set(TransactionManager.ORACLE_ZK_CONNECT, "127.0.0.1:1");
        deadZooKeeper.set(TransactionManager.FAILOVER_TIMEOUT_MS, "1000");
        String silent = assertThrows(RuntimeException.class, () -> TransactionManager.create(deadZooKeeper))
                .getMessage();
        assertTrue(silent.contains("could not reach ZooKeeper at 127.0.0.1:1")
                && silent.contains(TransactionManager.ORACLE_ZK_CONNECT), silent);
        assertTrue(!silent.contains("last error"), "nothing was dialled, so there is no last error: " + silent);
        deadZooKeeper.set(TransactionManager.ORACLE_ZK_SESSION_TIMEOUT_MS, "-1");
        assertFails(IllegalArgumentException.class, "invalid value -1 for "
                + TransactionManager.ORACLE_ZK_SESSION_TIMEOUT_MS, () -> TransactionManager.create(deadZooKeeper));
        deadZooKeeper.unset(TransactionManager.ORACLE_ZK_SESSION_TIMEOUT_MS);
        deadZooKeeper.set(TransactionManager.ORACLE_LEADER_ZNODE, "sibyl/oracle/leader");
        assertFails(IllegalArgumentException.class, TransactionManager.ORACLE_LEADER_ZNODE
                + "=sibyl/oracle/leader is not an absolute ZooKeeper path",
                () -> TransactionManager.create(deadZooKeeper));
    }

    @Test
    void runThatGivesUpOnConflictsSaysHowOftenItTried() throws Exception {
        try (TransactionManager twice = MiniCluster.get().manager(Map.of(
                TransactionManager.RETRY_ATTEMPTS, "2", TransactionManager.RETRY_BACKOFF_MS, "1"))) {
            RollbackException e = assertThrows(RollbackException.class, () -> twice.run(tx -> {
                try {
                    put(t, tx, "give-up", "mine");
                    Transaction first = tm.begin(); // commits the same row first: every attempt conflicts
                    put(t, first, "give-up", "theirs");
                    tm.commit(first);
                } catch (Exception x) {
                    throw new IllegalStateException(x);
                }
                return null;
            }));
            assertEquals(RollbackException.Reason.CONFLICT, e.getReason());
            assertTrue(e.getMessage().contains("run gave up after 2 attempts (" + TransactionManager.RETRY_ATTEMPTS
                    + ")"), e.getMessage());
            assertEquals(Transaction.Status.ROLLED_BACK, e.getTransaction().getStatus());
        }
    }

    @Test
    void aNullTransactionIsExplained() {
        assertFails(NullPointerException.class, "transaction is null: begin one", () -> tm.commit(null));
        assertFails(NullPointerException.class, "transaction is null: begin one", () -> tm.rollback(null));
        assertFails(NullPointerException.class, "transaction is null: begin one", () -> t.get(null, new Get(b("r"))));
    }

    @Test
    void aNullArgumentIsNamedWithWhatToPassInstead() throws Exception {
        Transaction tx = tm.begin();
        assertFails(NullPointerException.class, "get is null: pass the Get", () -> t.get(tx, (Get) null));
        assertFails(NullPointerException.class, "gets[1] is null", () -> t.get(tx, java.util.Arrays.asList(
                new Get(b("r")), null)));
        assertFails(NullPointerException.class, "scan is null: pass a Scan", () -> t.getScanner(tx, (Scan) null));
        assertFails(NullPointerException.class, "put is null: pass the Put",
                () -> t.put(tx, (Put) null));
        assertFails(NullPointerException.class, "delete is null", () -> t.delete(tx,
                (Delete) null));
        assertFails(NullPointerException.class, "increment is null", () -> t.increment(tx, null));
        assertFails(NullPointerException.class, "checkAndMutate is null", () -> t.checkAndMutate(tx,
                (org.apache.hadoop.hbase.client.CheckAndMutate) null));
        assertFails(NullPointerException.class, "get is null", () -> t.getLatest(tm, null));
        assertFails(NullPointerException.class, "transaction manager is null", () -> t.getLatest(null,
                new Get(b("r"))));
        assertFails(NullPointerException.class, "work is null", () -> tm.run(null));
        assertFails(NullPointerException.class, "table name is null",
                () -> new TTable(MiniCluster.get().connection(), null));
        // Refused before anything happened: the transaction is still usable.
        assertEquals(Transaction.Status.RUNNING, tx.getStatus());
        tm.commit(tx);
    }

    @Test
    void missingOracleAddressIsExplained() {
        Configuration conf = MiniCluster.get().configuration();
        conf.unset(TransactionManager.ORACLE_ADDRESS);
        assertFails(IllegalArgumentException.class, TransactionManager.ORACLE_ADDRESS,
                () -> TransactionManager.create(conf));
        conf.set(TransactionManager.ORACLE_ADDRESS, "localhost");
        assertFails(IllegalArgumentException.class, "host:port", () -> TransactionManager.create(conf));
        conf.set(TransactionManager.ORACLE_ADDRESS, "localhost:99999");
        assertFails(IllegalArgumentException.class, TransactionManager.ORACLE_ADDRESS + "=localhost:99999: the port"
                + " must be 1 to 65535", () -> TransactionManager.create(conf));
        assertFails(IllegalArgumentException.class, "port from 1 to 65535, got localhost:0",
                () -> TransactionManager.create(conf, "localhost", 0));
        conf.set(TransactionManager.ORACLE_ADDRESS, "127.0.0.1:1");
        conf.set(TransactionManager.READ_VERSIONS, "0");
        assertFails(IllegalArgumentException.class, TransactionManager.READ_VERSIONS,
                () -> TransactionManager.create(conf));
        conf.set(TransactionManager.READ_VERSIONS, "three"); // Configuration.getInt would not name the key
        assertFails(IllegalArgumentException.class, "invalid value 'three' for " + TransactionManager.READ_VERSIONS,
                () -> TransactionManager.create(conf));
        conf.set(TransactionManager.READ_VERSIONS, "4294967299"); // (int) of it is 3
        assertFails(IllegalArgumentException.class, "must be at most", () -> TransactionManager.create(conf));
        conf.unset(TransactionManager.READ_VERSIONS);
        conf.set(TransactionManager.FAILOVER_TIMEOUT_MS, "30s");
        assertFails(IllegalArgumentException.class, TransactionManager.FAILOVER_TIMEOUT_MS,
                () -> TransactionManager.create(conf));
        conf.unset(TransactionManager.FAILOVER_TIMEOUT_MS);
        conf.set(TransactionManager.ORACLE_TRANSPORT, "netty");
        assertFails(IllegalArgumentException.class, "invalid value 'netty' for " + TransactionManager.ORACLE_TRANSPORT
                + ": must be waiting-thread or event-loop", () -> TransactionManager.create(conf));
    }
}
