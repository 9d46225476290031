package io.sibyl.client;

import org.apache.hadoop.hbase.CompareOperator;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.filter.SubstringComparator;
import org.apache.hadoop.hbase.filter.ValueFilter;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.util.List;
import java.util.Map;

import static io.sibyl.client.TestSupport.b;
import static io.sibyl.client.TestSupport.put;
import static io.sibyl.client.TestSupport.rows;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A scan with a row limit hands the limit to HBase (so that the region server ends the scan itself), and scans on
 * when rows HBase returned resolve to nothing in the snapshot or are filtered out.
 */
@ExtendWith(MiniCluster.class)
class ScanLimitTest {
    private static TransactionManager tm;
    private static TransactionManager writeThrough;

    @BeforeAll
    static void managers() throws IOException {
        tm = MiniCluster.get().manager();
        writeThrough = MiniCluster.get().manager(Map.of(TransactionManager.WRITE_BUFFER_BYTES, "0"));
    }

    @AfterAll
    static void close() {
        tm.close();
        writeThrough.close();
    }

    /** Committed rows c..f; rows a1..a3 and z1..z3 written by a transaction that stays running (sent to HBase). */
    private TTable table() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("limit", "cf");
        TTable t = new TTable(c.connection(), name);
        Transaction init = tm.begin();
        for (String row : List.of("c", "d", "e", "f")) {
            put(t, init, row, row + "-value");
        }
        tm.commit(init);
        Transaction pending = writeThrough.begin();
        for (String row : List.of("a1", "a2", "a3", "z1", "z2", "z3")) {
            put(t, pending, row, "uncommitted");
        }
        return t;
    }

    @Test
    void invisibleRowsDoNotUseUpTheLimit() throws Exception {
        TTable t = table();
        Transaction tx = tm.begin();
        assertEquals(List.of("c", "d"), rows(t, tx, new Scan().setLimit(2)));
        assertEquals(List.of("c"), rows(t, tx, new Scan().setLimit(1)));
        assertEquals(List.of("c", "d", "e", "f"), rows(t, tx, new Scan().setLimit(4)));
        assertEquals(List.of("c", "d", "e", "f"), rows(t, tx, new Scan().setLimit(100)));
        assertEquals(List.of("c", "d"), rows(t, tx, new Scan().setLimit(2).setCaching(1)));
        assertEquals(List.of("f", "e"), rows(t, tx, new Scan().setReversed(true).setLimit(2)));
        assertEquals(List.of("f", "e", "d", "c"), rows(t, tx, new Scan().setReversed(true).setLimit(9)));
        assertEquals(List.of("c", "d"), rows(t, tx, new Scan().withStartRow(b("a2")).withStopRow(b("f")).setLimit(2)));
        assertEquals(List.of("d", "e"), rows(t, tx, new Scan().withStartRow(b("c"), false).setLimit(2)));
        assertEquals(List.of("f", "e", "d"), rows(t, tx, new Scan().setReversed(true).withStartRow(b("z2"))
                .withStopRow(b("c"), false).setLimit(3)));
        tm.commit(tx);
    }

    @Test
    void filteredRowsDoNotUseUpTheLimit() throws Exception {
        TTable t = table();
        Transaction tx = tm.begin();
        Scan onlyE = new Scan().setLimit(1).setFilter(new ValueFilter(CompareOperator.EQUAL,
                new SubstringComparator("e-value")));
        assertEquals(List.of("e"), rows(t, tx, onlyE));
        tm.commit(tx);
    }

    @Test
    void ownWritesCountTowardsTheLimit() throws Exception {
        TTable t = table();
        Transaction tx = tm.begin();
        t.put(tx, new Put(b("a2")).addColumn(TestSupport.CF, TestSupport.V, b("mine")));
        put(t, tx, "b", "mine");
        assertEquals(List.of("a2", "b", "c"), rows(t, tx, new Scan().setLimit(3)));
        assertEquals(List.of("a2", "b"), rows(t, tx, new Scan().setLimit(2)));
        assertEquals(List.of("f", "e", "d", "c", "b"), rows(t, tx, new Scan().setReversed(true).setLimit(5)));
        tm.rollback(tx);
    }
}
