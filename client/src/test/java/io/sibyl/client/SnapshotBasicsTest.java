package io.sibyl.client;

import org.apache.hadoop.hbase.TableName;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static io.sibyl.client.TestSupport.get;
import static io.sibyl.client.TestSupport.put;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The basic visibility rules, with each of the oracle transports a manager can use. */
@ExtendWith(MiniCluster.class)
class SnapshotBasicsTest {
    private static final Map<String, TransactionManager> MANAGERS = new HashMap<>();
    private static TTable table;

    @BeforeAll
    static void setUp() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("basics", "cf");
        for (String transport : List.of("waiting-thread", "event-loop")) {
            MANAGERS.put(transport, c.manager(Map.of(TransactionManager.ORACLE_TRANSPORT, transport)));
        }
        table = new TTable(c.connection(), name);
    }

    @AfterAll
    static void tearDown() {
        table.close();
        MANAGERS.values().forEach(TransactionManager::close);
    }

    @ParameterizedTest
    @ValueSource(strings = {"waiting-thread", "event-loop"})
    void committedWriteIsVisibleToLaterTransactionsOnly(String transport) throws Exception {
        TransactionManager tm = MANAGERS.get(transport);
        String row = "a-" + transport;
        Transaction before = tm.begin();
        Transaction w = tm.begin();
        put(table, w, row, "1");
        assertFalse(w.isReadOnly());
        tm.commit(w);
        assertEquals(Transaction.Status.COMMITTED, w.getStatus());
        assertTrue(w.getCommitTimestamp() > w.getStartTimestamp());
        Transaction after = tm.begin();
        assertEquals("1", get(table, after, row));
        assertNull(get(table, before, row), "started before the commit: not in its snapshot");
        tm.commit(before);
        tm.commit(after);
        assertTrue(after.isReadOnly());
        assertEquals(after.getStartTimestamp(), after.getCommitTimestamp());
    }

    @ParameterizedTest
    @ValueSource(strings = {"waiting-thread", "event-loop"})
    void rolledBackWriteIsNeverVisible(String transport) throws Exception {
        TransactionManager tm = MANAGERS.get(transport);
        String row = "b-" + transport;
        Transaction w = tm.begin();
        put(table, w, row, "1");
        tm.rollback(w);
        assertEquals(Transaction.Status.ROLLED_BACK, w.getStatus());
        Transaction r = tm.begin();
        assertNull(get(table, r, row));
        tm.commit(r);
    }
}
