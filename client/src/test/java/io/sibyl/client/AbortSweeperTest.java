package io.sibyl.client;

import io.sibyl.client.oracle.OracleClient;
import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;

import static io.sibyl.client.TestSupport.get;
import static io.sibyl.client.TestSupport.put;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A client JVM killed mid-transaction leaves versions in HBase and an entry in the oracle's aborted set; the sweeper
 * deletes those versions, only in tables that can hold transactional data and are not excluded, and the oracle then
 * forgets the transaction, with nothing of it ever visible.
 */
@ExtendWith(MiniCluster.class)
class AbortSweeperTest {
    private static final int ROWS = 20;

    @Test
    void sweeperRemovesTheVersionsOfADeadClientsTransactionAndTheOracleForgetsIt() throws Exception {
        MiniCluster c = MiniCluster.get();
        // An oracle of its own: a short reader grace (4 s), so the watermark passes the dead client's transaction soon.
        try (OracleServer oracle = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(1 << 16, 1 << 16, 1 << 10).withReaderGrace(4000)
                .withAdminSecretFile(TestSupport.adminSecretFile()));
             TransactionManager tm = TestSupport.adminManager(c, oracle.port())) {
            TableName name = c.createTable("swept", "cf");
            TableName excluded = c.createTable("sweep_excluded", "cf");
            TableName plain = TableName.valueOf("sweep_plain_" + System.nanoTime());
            try (Admin admin = c.connection().getAdmin()) {
                admin.createTable(TableDescriptorBuilder.newBuilder(plain)
                        .setColumnFamily(ColumnFamilyDescriptorBuilder.of("cf")).build()); // one version: not ours
            }
            try (TTable t = new TTable(c.connection(), name)) {
                Transaction init = tm.begin();
                put(t, init, "existing", "committed");
                put(t, init, "doomed", "still here");
                tm.commit(init);

                long dead = runAndKillAClient(c, oracle.port(), name);
                // Cells at the same timestamp in a table excluded and in one that cannot hold transactions.
                for (TableName other : List.of(excluded, plain)) {
                    try (Table raw = c.raw(other)) {
                        raw.put(new Put(Bytes.toBytes("r")).addColumn(TestSupport.CF, TestSupport.V, dead,
                                Bytes.toBytes("not a transaction's")));
                    }
                }
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (!tm.oracle().replica().isAborted(dead) || tm.oracle().lowWatermark().join() <= dead) {
                    assertTrue(System.nanoTime() < deadline, "the dead client's transaction " + dead + " was not"
                            + " aborted and passed by the watermark: " + oracle.stats());
                    tm.commit(tm.begin());
                    Thread.sleep(50);
                }
                assertEquals(ROWS + 2, TestSupport.versionsAt(name, dead));
                assertEquals(1, oracle.stats().abortedSet());
                // A family added since with HBase's default of one version does not hide the table's other families.
                try (Admin admin = c.connection().getAdmin()) {
                    admin.addColumnFamily(name, ColumnFamilyDescriptorBuilder.of("meta"));
                }
                // This test's oracle hands out timestamps of its own; the other tests' tables hold versions of the
                // shared oracle, which can carry the same numbers: out of bounds for this sweep, as a second oracle's
                // data would be in production (one oracle per HBase cluster).
                Set<TableName> skip = new HashSet<>(Set.of(excluded));
                try (Admin admin = c.connection().getAdmin()) {
                    for (TableName other : admin.listTableNames()) {
                        if (!other.equals(name) && !other.equals(plain)) {
                            skip.add(other);
                        }
                    }
                }

                AbortSweeper.Report dry = new AbortSweeper(tm, Set.of(), skip, 0, true).sweep();
                assertEquals(ROWS + 2, dry.versionsFound(), dry.toString());
                assertEquals(0, dry.versionsDeleted(), dry.toString());
                assertEquals(0, dry.reportedCleanedUp(), dry.toString());
                assertEquals(ROWS + 2, TestSupport.versionsAt(name, dead), "a dry run deletes nothing");

                AbortSweeper.Report r = new AbortSweeper(tm, Set.of(), skip, 200, false).sweep();
                assertEquals(1, r.transactions(), r.toString());
                assertEquals(ROWS + 2, r.versionsFound(), r.toString());
                assertEquals(ROWS + 2, r.versionsDeleted(), r.toString());
                assertEquals(1, r.reportedCleanedUp(), r.toString());
                assertTrue(r.tablesScanned().contains(name), r.toString());
                assertEquals("excluded", r.tablesSkipped().get(excluded), r.toString());
                assertTrue(r.tablesSkipped().get(plain).startsWith("no column family can hold"), r.toString());
                assertEquals(0, TestSupport.versionsAt(name, dead));
                assertEquals(1, TestSupport.versionsAt(excluded, dead), "an excluded table is not touched");
                assertEquals(1, TestSupport.versionsAt(plain, dead), "a table that cannot hold transactions is not touched");

                // Reported cleaned up, the oracle forgets it once no older reader runs.
                while (oracle.stats().abortedSet() > 0) {
                    assertTrue(System.nanoTime() < deadline + TimeUnit.SECONDS.toNanos(30),
                            "the oracle kept the swept transaction: " + oracle.stats());
                    tm.commit(tm.begin());
                    Thread.sleep(50);
                }
                while (tm.oracle().replica().isAborted(dead)) {
                    assertTrue(System.nanoTime() < deadline + TimeUnit.SECONDS.toNanos(30),
                            "the replica kept the swept transaction");
                    tm.commit(tm.begin());
                    Thread.sleep(50);
                }
                // Forgotten, and still nothing of it is visible: its versions are gone.
                Transaction after = tm.begin();
                assertEquals("committed", get(t, after, "existing"));
                assertEquals("still here", get(t, after, "doomed"));
                assertEquals(List.of("doomed", "existing"), TestSupport.rows(t, after, new Scan()));
                tm.commit(after);

                AbortSweeper.Report again = new AbortSweeper(tm, Set.of(), skip, 0, false).sweep();
                assertEquals(0, again.transactions(), "nothing left to sweep: " + again);
            }
        }
    }

    @Test
    void aClientThatLostItsOracleStopsWritingHalfTheReaderGraceAfterItLastHeardFromIt() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("late_writes", "cf");
        OracleServer oracle = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(1 << 16, 1 << 16, 1 << 10).withReaderGrace(4000));
        try (TransactionManager tm = TransactionManager.create(c.connection(), "127.0.0.1", oracle.port());
             TTable t = new TTable(c.connection(), name)) {
            Transaction tx = tm.begin();
            put(t, tx, "early", "sent in time");
            TestSupport.internals(tx).flush();
            assertEquals(1, TestSupport.versionsAt(name, tx.getStartTimestamp()));
            oracle.close(); // the oracle is gone: it aborted tx, and the sweeper may take tx once the grace is over
            OracleClient begunOn = TestSupport.internals(tx).begunOn();
            while (begunOn.millisSinceHeard() <= begunOn.readWindowMillis()) {
                Thread.sleep(20);
            }
            put(t, tx, "late", "must not reach HBase");
            SnapshotExpiredException e = org.junit.jupiter.api.Assertions.assertThrows(SnapshotExpiredException.class,
                    TestSupport.internals(tx)::flush);
            assertTrue(e.getMessage().contains("cannot write any more"), e.getMessage());
            assertEquals(1, TestSupport.versionsAt(name, tx.getStartTimestamp()), "nothing was sent after the window");
            tm.rollback(tx);
        } finally {
            oracle.close();
        }
    }

    @Test
    void aTransactionWhoseOracleWasSilentForAWholeReadWindowStaysExpiredWhenFramesComeAgain() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("silence", "cf");
        try (OracleServer oracle = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(1 << 16, 1 << 16, 1 << 10).withReaderGrace(4000));
             ReplyProxy proxy = new ReplyProxy(oracle.port());
             TransactionManager tm = c.manager(java.util.Map.of(TransactionManager.ORACLE_ADDRESS,
                     "127.0.0.1:" + proxy.port()));
             TTable t = new TTable(c.connection(), name)) {
            Transaction init = tm.begin();
            put(t, init, "row", "v");
            tm.commit(init);
            Transaction before = tm.begin();
            assertEquals("v", get(t, before, "row"));
            // The oracle's frames (heartbeats every 400 ms) reach the client 3 s late for a while: a silence longer
            // than the 2 s read window, as a client stalled that long would see it, and then frames again.
            long window = TestSupport.internals(before).begunOn().readWindowMillis();
            proxy.delayReplies(3000);
            Thread.sleep(500);
            proxy.delayReplies(0);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            while (TestSupport.internals(before).begunOn().millisSinceHeard() < window) {
                assertTrue(System.nanoTime() < deadline, "no silence seen");
                Thread.sleep(20);
            }
            while (TestSupport.internals(before).begunOn().millisSinceHeard() > 200) {
                assertTrue(System.nanoTime() < deadline, "frames did not come again");
                Thread.sleep(20);
            }
            // The oracle may have given up on this connection meanwhile (and the sweeper on its transactions).
            org.junit.jupiter.api.Assertions.assertThrows(SnapshotExpiredException.class,
                    () -> get(t, before, "row"));
            tm.rollback(before);
            Transaction after = tm.begin();
            assertEquals("v", get(t, after, "row"), "a transaction begun after the silence reads as usual");
            tm.commit(after);
        }
    }

    @Test
    void aFlushThatComesAfterARollbackBeganSendsNothing() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("flush_after_rollback", "cf");
        try (TransactionManager tm = c.manager(); TTable t = new TTable(c.connection(), name)) {
            Transaction tx = tm.begin();
            put(t, tx, "row", "buffered"); // the owner thread buffered it and is about to flush...
            Thread other = new Thread(() -> tm.rollback(tx)); // ...when another thread (or close()) rolls it back
            other.start();
            other.join();
            org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
                    TestSupport.internals(tx)::flush);
            assertEquals(0, TestSupport.versionsAt(name, tx.getStartTimestamp()), "a version sent after a rollback without an"
                    + " abort record would read as committed");
        }
    }

    /** Runs {@link KilledClientMain} against {@code table}, kills it with SIGKILL once it wrote; its start ts. */
    private static long runAndKillAClient(MiniCluster c, int oraclePort, TableName table) throws Exception {
        KilledClientProcess child = KilledClientProcess.start(c.configuration(), "127.0.0.1:" + oraclePort, table,
                ROWS, "swept-client");
        try {
            return child.awaitWritten();
        } finally {
            child.kill();
        }
    }
}
