package io.sibyl.client;

import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.util.Map;

import static io.sibyl.client.TestSupport.b;
import static io.sibyl.client.TestSupport.put;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** After an abort (rollback or conflict) the transaction's versions are deleted from HBase. */
@ExtendWith(MiniCluster.class)
class AbortCleanupTest {
    private static TransactionManager writeThrough;
    private static TransactionManager buffered;

    @BeforeAll
    static void managers() throws Exception {
        writeThrough = MiniCluster.get().manager(Map.of(TransactionManager.WRITE_BUFFER_BYTES, "0"));
        buffered = MiniCluster.get().manager();
    }

    @AfterAll
    static void close() {
        writeThrough.close();
        buffered.close();
    }

    /** Cells stored in HBase (all versions, delete markers applied) with version {@code ts}. */
    private static int versionsAt(TableName name, long ts) throws IOException {
        int n = 0;
        try (Table raw = MiniCluster.get().raw(name); ResultScanner s = raw.getScanner(new Scan().readAllVersions())) {
            for (Result r : s) {
                for (Cell c : r.rawCells()) {
                    if (c.getTimestamp() == ts) {
                        n++;
                    }
                }
            }
        }
        return n;
    }

    @Test
    void rolledBackTransactionLeavesNoVersionInAnyTable() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName n1 = c.createTable("cleanup1", "cf");
        TableName n2 = c.createTable("cleanup2", "cf");
        TTable t1 = new TTable(c.connection(), n1);
        TTable t2 = new TTable(c.connection(), n2);
        Transaction init = writeThrough.begin();
        put(t1, init, "keep", "1");
        writeThrough.commit(init);
        Transaction tx = writeThrough.begin();
        for (int i = 0; i < 20; i++) {
            put(t1, tx, "r" + i, "x");
            put(t2, tx, "r" + i, "q" + i, "y");
        }
        t1.delete(tx, new Delete(b("keep"))); // a tombstone is a version too
        assertEquals(21, versionsAt(n1, tx.getStartTimestamp()), "write-through: in HBase before commit");
        assertEquals(20, versionsAt(n2, tx.getStartTimestamp()));
        writeThrough.rollback(tx);
        assertEquals(0, versionsAt(n1, tx.getStartTimestamp()));
        assertEquals(0, versionsAt(n2, tx.getStartTimestamp()));
        Transaction after = writeThrough.begin();
        assertEquals("1", TestSupport.get(t1, after, "keep"));
        writeThrough.commit(after);
    }

    @Test
    void conflictAbortDeletesTheVersionsSentAtCommit() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("cleanup3", "cf");
        TTable t = new TTable(c.connection(), name);
        Transaction loser = buffered.begin();
        Transaction winner = buffered.begin();
        for (int i = 0; i < 10; i++) {
            put(t, loser, "r" + i, "loser");
        }
        put(t, winner, "r3", "winner");
        buffered.commit(winner);
        assertThrows(RollbackException.class, () -> buffered.commit(loser));
        assertEquals(0, versionsAt(name, loser.getStartTimestamp()));
        assertEquals(1, versionsAt(name, winner.getStartTimestamp()));
    }

    @Test
    void bufferedWritesOfARolledBackTransactionNeverReachHBase() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("cleanup4", "cf");
        TTable t = new TTable(c.connection(), name);
        Transaction tx = buffered.begin();
        put(t, tx, "r", "x");
        assertFalse(tx.isReadOnly());
        buffered.rollback(tx);
        assertEquals(0, versionsAt(name, tx.getStartTimestamp()));
        buffered.rollback(tx); // twice is fine
        assertEquals(Transaction.Status.ROLLED_BACK, tx.getStatus());
    }

    @Test
    void workThatThrowsIsRolledBackByRun() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("cleanup5", "cf");
        TTable t = new TTable(c.connection(), name);
        Transaction[] seen = new Transaction[1];
        TestSupport.IoWork<Void> failing = tx -> {
            seen[0] = tx;
            put(t, tx, "r", "x");
            throw new IllegalStateException("business rule violated");
        };
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> writeThrough.run(TestSupport.io(failing)));
        assertEquals("business rule violated", e.getMessage());
        assertEquals(Transaction.Status.ROLLED_BACK, seen[0].getStatus());
        assertEquals(0, versionsAt(name, seen[0].getStartTimestamp()));
        Boolean nothing = writeThrough.run(TestSupport.io(tx -> TestSupport.get(t, tx, "r") == null));
        assertTrue(nothing);
    }

    @Test
    void versionsLeftByACommitHBaseRefusedAreDeletedOnceHBaseTakesWritesAgain() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("cleanup6", "cf");
        // Fail fast while the table is disabled, instead of waiting out HBase's default retries.
        try (TransactionManager tm = c.manager(Map.of("hbase.client.retries.number", "1", "hbase.client.pause", "50",
                "hbase.client.operation.timeout", "5000"))) {
            TTable t = new TTable(tm.getConnection(), name);
            Transaction tx = tm.begin();
            for (int i = 0; i < 5; i++) {
                put(t, tx, "sent" + i, "x");
            }
            TestSupport.internals(tx).flush(); // these versions are in HBase now
            assertEquals(5, versionsAt(name, tx.getStartTimestamp()));
            put(t, tx, "buffered", "y");
            c.util().getAdmin().disableTable(name);
            try {
                RollbackException e = assertThrows(RollbackException.class, () -> tm.commit(tx));
                assertEquals(RollbackException.Reason.WRITE_FAILED, e.getReason());
                assertEquals(Transaction.Status.ROLLED_BACK, tx.getStatus());
                assertEquals(1, tm.pendingAbortCleanups(), "the versions are left to the background clean-up");
            } finally {
                c.util().getAdmin().enableTable(name);
            }
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (tm.pendingAbortCleanups() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
            assertEquals(0, tm.pendingAbortCleanups(), "the clean-up gave up although the table is back");
            assertEquals(0, versionsAt(name, tx.getStartTimestamp()));
            Transaction after = tm.begin();
            assertEquals(null, TestSupport.get(t, after, "sent0"));
            tm.commit(after);
        }
    }
}
