package io.sibyl.client;

import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.util.List;
import java.util.Map;

import static io.sibyl.client.TestSupport.CF;
import static io.sibyl.client.TestSupport.b;
import static io.sibyl.client.TestSupport.get;
import static io.sibyl.client.TestSupport.put;
import static io.sibyl.client.TestSupport.scan;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A transaction reads its own writes (buffered or already sent) merged with the committed snapshot. */
@ExtendWith(MiniCluster.class)
class ReadYourWritesTest {
    enum Writes { BUFFERED, WRITE_THROUGH }

    private static final byte[] CF2 = b("cf2");
    private static TransactionManager buffered;
    private static TransactionManager writeThrough;
    private TransactionManager tm;
    private TTable t;

    @BeforeAll
    static void managers() throws IOException {
        buffered = MiniCluster.get().manager();
        writeThrough = MiniCluster.get().manager(Map.of(TransactionManager.WRITE_BUFFER_BYTES, "0"));
    }

    @AfterAll
    static void close() {
        buffered.close();
        writeThrough.close();
    }

    private void setUp(Writes mode) throws Exception {
        tm = mode == Writes.BUFFERED ? buffered : writeThrough;
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("ryw", "cf", "cf2");
        t = new TTable(c.connection(), name);
        Transaction init = tm.begin();
        for (String row : List.of("a", "c", "e", "g")) {
            t.put(init, new Put(b(row)).addColumn(CF, b("v"), b(row + "0")).addColumn(CF, b("w"), b(row + "w"))
                    .addColumn(CF2, b("x"), b(row + "x")));
        }
        tm.commit(init);
    }

    @ParameterizedTest
    @EnumSource(Writes.class)
    void getSeesOwnPutOverTheCommittedValue(Writes mode) throws Exception {
        setUp(mode);
        Transaction tx = tm.begin();
        Transaction other = tm.begin();
        put(t, tx, "a", "a1");
        put(t, tx, "b", "b1");
        assertEquals("a1", get(t, tx, "a"));
        assertEquals("aw", get(t, tx, "a", "w"), "unwritten columns of the row come from the snapshot");
        assertEquals("b1", get(t, tx, "b"));
        assertEquals("a0", get(t, other, "a"), "other transactions do not see it");
        assertNull(get(t, other, "b"));
        put(t, tx, "a", "a2");
        assertEquals("a2", get(t, tx, "a"), "the latest own write wins");
        Result[] multi = t.get(tx, List.of(new Get(b("a")), new Get(b("b")), new Get(b("c")), new Get(b("zz"))));
        assertEquals("a2", Bytes.toString(multi[0].getValue(CF, b("v"))));
        assertEquals("b1", Bytes.toString(multi[1].getValue(CF, b("v"))));
        assertEquals("c0", Bytes.toString(multi[2].getValue(CF, b("v"))));
        assertTrue(multi[3].isEmpty());
        assertTrue(t.exists(tx, new Get(b("b"))));
        assertFalse(t.exists(other, new Get(b("b"))));
        tm.commit(tx);
        tm.commit(other);
        Transaction after = tm.begin();
        assertEquals("a2", get(t, after, "a"));
        assertEquals("b1", get(t, after, "b"));
        tm.commit(after);
    }

    @ParameterizedTest
    @EnumSource(Writes.class)
    void scanMixesOwnWritesWithCommittedRows(Writes mode) throws Exception {
        setUp(mode);
        Transaction tx = tm.begin();
        put(t, tx, "b", "b1");      // new row between committed ones
        put(t, tx, "c", "c1");      // overwrite a committed row
        put(t, tx, "h", "h1");      // new row after the last committed one
        put(t, tx, "0", "01");      // new row before the first
        t.delete(tx, new Delete(b("e")));                       // whole row gone
        t.delete(tx, new Delete(b("g")).addColumn(CF, b("w"))); // one column gone
        Map<String, Map<String, String>> rows = scan(t, tx, new Scan());
        assertEquals(List.of("0", "a", "b", "c", "g", "h"), List.copyOf(rows.keySet()));
        assertEquals(Map.of("cf:v", "c1", "cf:w", "cw", "cf2:x", "cx"), rows.get("c"));
        assertEquals(Map.of("cf:v", "g0", "cf2:x", "gx"), rows.get("g"));
        assertEquals(Map.of("cf:v", "b1"), rows.get("b"));
        assertEquals(List.of("h", "g", "c", "b", "a", "0"), TestSupport.rows(t, tx, new Scan().setReversed(true)));
        assertEquals(List.of("b", "c"), TestSupport.rows(t, tx, new Scan().withStartRow(b("b")).withStopRow(b("e"))));
        assertEquals(List.of("c", "b"), TestSupport.rows(t, tx,
                new Scan().setReversed(true).withStartRow(b("d")).withStopRow(b("a"))));
        for (boolean reversed : new boolean[] {false, true}) { // ranges of one row bound on both sides, as HBase
            assertEquals(List.of("c"), TestSupport.rows(t, tx, new Scan().setReversed(reversed)
                    .withStartRow(b("c"), true).withStopRow(b("c"), true)));
            assertEquals(List.of(), TestSupport.rows(t, tx, new Scan().setReversed(reversed)
                    .withStartRow(b("c"), false).withStopRow(b("c"), true)));
            assertEquals(List.of(), TestSupport.rows(t, tx, new Scan().setReversed(reversed)
                    .withStartRow(b("c"), true).withStopRow(b("c"), false)));
        }
        assertEquals(List.of("a", "c", "g"), TestSupport.rows(t, tx, new Scan().addFamily(CF2)),
                "own rows without a selected column do not appear");
        assertEquals(List.of("0", "a", "b"), TestSupport.rows(t, tx, new Scan().setLimit(3)));
        Transaction other = tm.begin();
        assertEquals(List.of("a", "c", "e", "g"), TestSupport.rows(t, other, new Scan()));
        tm.commit(tx);
        assertEquals(List.of("a", "c", "e", "g"), TestSupport.rows(t, other, new Scan()), "snapshot unchanged");
        tm.commit(other);
        Transaction after = tm.begin();
        assertEquals(rows, scan(t, after, new Scan()));
        tm.commit(after);
    }

    @ParameterizedTest
    @EnumSource(Writes.class)
    void deleteThenRePutInOneTransaction(Writes mode) throws Exception {
        setUp(mode);
        Transaction tx = tm.begin();
        t.delete(tx, new Delete(b("a")));
        assertTrue(t.get(tx, new Get(b("a"))).isEmpty());
        assertFalse(t.exists(tx, new Get(b("a"))));
        put(t, tx, "a", "v", "again");
        Result r = t.get(tx, new Get(b("a")));
        assertEquals(1, r.size(), "only the re-put column: the others stay deleted");
        assertEquals("again", Bytes.toString(r.getValue(CF, b("v"))));
        tm.commit(tx);
        Transaction after = tm.begin();
        Result committed = t.get(after, new Get(b("a")));
        assertEquals(1, committed.size());
        assertEquals("again", Bytes.toString(committed.getValue(CF, b("v"))));
        assertEquals(Map.of("cf:v", "again"), scan(t, after, new Scan().withStartRow(b("a")).withStopRow(b("b")))
                .get("a"));
        tm.commit(after);
    }

    @ParameterizedTest
    @EnumSource(Writes.class)
    void putThenDeleteThenPutAgainOfOneColumn(Writes mode) throws Exception {
        setUp(mode);
        Transaction tx = tm.begin();
        put(t, tx, "n", "1");
        t.delete(tx, new Delete(b("n")).addColumns(CF, b("v")));
        assertNull(get(t, tx, "n"));
        put(t, tx, "n", "3");
        assertEquals("3", get(t, tx, "n"));
        tm.commit(tx);
        Transaction after = tm.begin();
        assertEquals("3", get(t, after, "n"));
        tm.commit(after);
    }

    @ParameterizedTest
    @EnumSource(Writes.class)
    void familyAndColumnDeletesAreTransactional(Writes mode) throws Exception {
        setUp(mode);
        Transaction tx = tm.begin();
        Transaction concurrent = tm.begin();
        t.delete(tx, new Delete(b("a")).addFamily(CF));
        t.delete(tx, new Delete(b("c")).addColumn(CF2, b("x")));
        assertEquals(Map.of("cf2:x", "ax"), scan(t, tx, new Scan().withStartRow(b("a")).withStopRow(b("b"))).get("a"));
        assertNull(t.get(tx, new Get(b("c"))).getValue(CF2, b("x")));
        assertEquals(3, t.get(concurrent, new Get(b("a"))).size(), "not visible before commit");
        tm.commit(tx);
        assertEquals(3, t.get(concurrent, new Get(b("a"))).size(), "nor to a snapshot taken before the commit");
        assertEquals("cx", Bytes.toString(t.get(concurrent, new Get(b("c"))).getValue(CF2, b("x"))));
        tm.commit(concurrent);
        Transaction after = tm.begin();
        Result a = t.get(after, new Get(b("a")));
        assertEquals(1, a.size());
        assertArrayEquals(b("ax"), a.getValue(CF2, b("x")));
        assertEquals(2, t.get(after, new Get(b("c"))).size());
        tm.commit(after);
    }

    @Test
    void deleteOfARowWithNothingVisibleStillConflicts() throws Exception {
        setUp(Writes.BUFFERED);
        Transaction deleter = tm.begin();
        Transaction inserter = tm.begin();
        t.delete(deleter, new Delete(b("new")));
        assertFalse(deleter.isReadOnly());
        put(t, inserter, "new", "x");
        tm.commit(inserter);
        RollbackException e = org.junit.jupiter.api.Assertions.assertThrows(RollbackException.class,
                () -> tm.commit(deleter));
        assertEquals(RollbackException.Reason.CONFLICT, e.getReason());
    }

    @Test
    void largeTransactionSpillsItsBufferAndStillReadsItsWrites() throws Exception {
        MiniCluster c = MiniCluster.get();
        try (TransactionManager small = c.manager(Map.of(TransactionManager.WRITE_BUFFER_BYTES, "4096"))) {
            tm = small;
            t = new TTable(c.connection(), c.createTable("spill", "cf"));
            Transaction tx = small.begin();
            for (int i = 0; i < 500; i++) {
                put(t, tx, String.format("r%04d", i), "value-" + i);
            }
            assertEquals("value-7", get(t, tx, "r0007"));
            assertEquals(500, TestSupport.rows(t, tx, new Scan()).size());
            Transaction other = small.begin();
            assertEquals(0, TestSupport.rows(t, other, new Scan()).size(), "sent early, still invisible");
            small.commit(tx);
            small.commit(other);
            Transaction after = small.begin();
            assertEquals(500, TestSupport.rows(t, after, new Scan()).size());
            small.commit(after);
        }
    }
}
