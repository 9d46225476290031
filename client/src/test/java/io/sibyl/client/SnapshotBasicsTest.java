package io.sibyl.client;

import org.apache.hadoop.hbase.TableName;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static io.sibyl.client.TestSupport.get;
import static io.sibyl.client.TestSupport.put;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

@ExtendWith(MiniCluster.class)
class SnapshotBasicsTest {
    private static TransactionManager tm;
    private static TTable table;

    @BeforeAll
    static void setUp() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("basics", "cf");
        tm = c.manager();
        table = new TTable(c.connection(), name);
    }

    @AfterAll
    static void tearDown() {
        table.close();
        tm.close();
    }

    @Test
    void committedWriteIsVisibleToLaterTransactionsOnly() throws Exception {
        Transaction before = tm.begin();
        Transaction w = tm.begin();
        put(table, w, "a", "1");
        assertFalse(w.isReadOnly());
        tm.commit(w);
        assertEquals(Transaction.Status.COMMITTED, w.getStatus());
        assertTrue(w.getCommitTimestamp() > w.getStartTimestamp());
        Transaction after = tm.begin();
        assertEquals("1", get(table, after, "a"));
        assertNull(get(table, before, "a"), "started before the commit: not in its snapshot");
        tm.commit(before);
        tm.commit(after);
        assertTrue(after.isReadOnly());
        assertEquals(after.getStartTimestamp(), after.getCommitTimestamp());
    }

    @Test
    void rolledBackWriteIsNeverVisible() throws Exception {
        Transaction w = tm.begin();
        put(table, w, "b", "1");
        tm.rollback(w);
        assertEquals(Transaction.Status.ROLLED_BACK, w.getStatus());
        Transaction r = tm.begin();
        assertNull(get(table, r, "b"));
        tm.commit(r);
    }
}
