package io.sibyl.client;

import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import static io.sibyl.client.TestSupport.get;
import static io.sibyl.client.TestSupport.put;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A transaction's batch of writes whose rows all live on one region server is sent by the committing thread itself,
 * not handed to the write pool (two wake-ups less per batch), and lands whole, across regions; one too large to
 * locate row by row goes to the pool.
 */
@ExtendWith(MiniCluster.class)
class SingleServerBatchTest {
    private static TransactionManager tm;
    private static TTable table;

    @BeforeAll
    static void setUp() throws Exception {
        MiniCluster c = MiniCluster.get();
        tm = c.manager();
        TableName name = c.createTable("one_server", new byte[][] {Bytes.toBytes("r3"), Bytes.toBytes("r6")}, "cf");
        table = new TTable(c.connection(), name);
    }

    @AfterAll
    static void tearDown() throws Exception {
        table.close();
        tm.close();
    }

    @Test
    void batchAcrossRegionsOfOneServerIsSentByTheCommittingThread() throws Exception {
        Transaction warm = tm.begin(); // region locations cached, as in any running client
        put(table, warm, "r0", "x");
        put(table, warm, "r4", "x");
        put(table, warm, "r8", "x");
        tm.commit(warm);

        long handedToPoolBefore = TableWrites.callsHandedToPool();
        Transaction tx = tm.begin();
        for (int i = 0; i < 10; i++) {
            put(table, tx, "r" + i, "v" + i);
        }
        tm.commit(tx);

        assertEquals(handedToPoolBefore, TableWrites.callsHandedToPool(),
                "a batch to one region server was handed to the write pool");
        Transaction reader = tm.begin();
        for (int i = 0; i < 10; i++) {
            assertEquals("v" + i, get(table, reader, "r" + i), "row r" + i);
        }
        tm.commit(reader);
    }

    @Test
    void aBatchTooLargeToLocateRowByRowGoesToThePool() throws Exception {
        long handedToPoolBefore = TableWrites.callsHandedToPool();
        Transaction tx = tm.begin();
        int rows = TableWrites.MAX_ROWS_CHECKED_FOR_ONE_SERVER + 1;
        for (int i = 0; i < rows; i++) {
            put(table, tx, "big" + i, "v");
        }
        tm.commit(tx);

        assertEquals(handedToPoolBefore + 1, TableWrites.callsHandedToPool(), "one call, to the one region server");
        Transaction reader = tm.begin();
        assertEquals(rows, TestSupport.rows(table, reader, new Scan().setRowPrefixFilter(Bytes.toBytes("big")))
                .size());
        tm.commit(reader);
    }
}
