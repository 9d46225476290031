package io.sibyl.client;

import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.CompareOperator;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.TableNotFoundException;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.CompactionState;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.filter.BinaryComparator;
import org.apache.hadoop.hbase.filter.ColumnPaginationFilter;
import org.apache.hadoop.hbase.filter.ColumnPrefixFilter;
import org.apache.hadoop.hbase.filter.FilterList;
import org.apache.hadoop.hbase.filter.InclusiveStopFilter;
import org.apache.hadoop.hbase.filter.MultiRowRangeFilter;
import org.apache.hadoop.hbase.filter.RowFilter;
import org.apache.hadoop.hbase.filter.WhileMatchFilter;
import org.apache.hadoop.hbase.filter.FirstKeyOnlyFilter;
import org.apache.hadoop.hbase.filter.KeyOnlyFilter;
import org.apache.hadoop.hbase.filter.PageFilter;
import org.apache.hadoop.hbase.filter.PrefixFilter;
import org.apache.hadoop.hbase.filter.SingleColumnValueFilter;
import org.apache.hadoop.hbase.filter.ValueFilter;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

import static io.sibyl.client.TestSupport.b;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a demanding HBase user tries: a transaction's reads (with its own buffered or sent writes) compared, result by
 * result, with a plain HBase table holding the same logical data; filters judged on the snapshot's version only;
 * deletes of every kind; lost updates under contention; a long reader across hundreds of commits, flushes, major
 * compactions, region moves and a split; and misuse.
 */
@ExtendWith(MiniCluster.class)
class AdversarialSemanticsTest {
    private static final byte[] CF = b("cf");
    private static final byte[] CF2 = b("cf2");
    private static final byte[][] SPLITS = {b("m")};
    private static TransactionManager buffered;
    private static TransactionManager writeThrough;
    private static TransactionManager oneVersion;

    @BeforeAll
    static void managers() throws IOException {
        MiniCluster c = MiniCluster.get();
        buffered = c.manager();
        writeThrough = c.manager(Map.of(TransactionManager.WRITE_BUFFER_BYTES, "0"));
        oneVersion = c.manager(Map.of(TransactionManager.READ_VERSIONS, "1",
                TransactionManager.WRITE_BUFFER_BYTES, "0"));
    }

    @AfterAll
    static void close() {
        buffered.close();
        writeThrough.close();
        oneVersion.close();
    }

    // ---- helpers ------------------------------------------------------------------------------------------------

    /** A plain (non-transactional) table with ordinary one-version families, pre-split like the transactional one. */
    private static Table plainTable(String prefix) throws IOException {
        MiniCluster c = MiniCluster.get();
        TableName name = TableName.valueOf(prefix + "_plain_" + System.nanoTime());
        try (Admin admin = c.connection().getAdmin()) {
            admin.createTable(TableDescriptorBuilder.newBuilder(name)
                    .setColumnFamily(org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder.of(CF))
                    .setColumnFamily(org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder.of(CF2)).build(),
                    SPLITS);
        }
        return c.raw(name);
    }

    /** One result as "row: fam/qual=value ..." without timestamps, plus its emptiness. */
    private static String describe(Result r) {
        StringBuilder s = new StringBuilder();
        s.append(r.getRow() == null ? "<no row>" : Bytes.toString(r.getRow())).append(':');
        s.append(" empty=").append(r.isEmpty()).append(" size=").append(r.size());
        s.append(" rawCellsNull=").append(r.rawCells() == null).append(" listCellsNull=").append(r.listCells() == null);
        s.append(" stale=").append(r.isStale());
        // (mayHaveMoreCellsInRow is not compared: HBase may set it on a batch that happens to end its row.)
        if (r.getExists() != null) {
            s.append(" exists=").append(r.getExists());
        }
        for (Cell c : r.rawCells() == null ? new Cell[0] : r.rawCells()) {
            s.append(' ').append(Bytes.toString(CellUtil.cloneFamily(c))).append('/')
                    .append(Bytes.toString(CellUtil.cloneQualifier(c))).append('=')
                    .append(Bytes.toStringBinary(CellUtil.cloneValue(c)));
        }
        return s.toString();
    }

    private static List<String> describe(ResultScanner s) throws IOException {
        List<String> out = new ArrayList<>();
        for (Result r = s.next(); r != null; r = s.next()) {
            out.add(describe(r));
        }
        return out;
    }

    /** Applies the same mutation to the transactional table (in tx) and to the plain mirror. */
    private static void put(TTable t, Transaction tx, Table plain, Put p) throws IOException {
        t.put(tx, p);
        plain.put(new Put(p));
    }

    private static void delete(TTable t, Transaction tx, Table plain, Delete d) throws IOException {
        t.delete(tx, d);
        plain.delete(new Delete(d));
        // A plain put in the same millisecond as this delete marker would be hidden by it (HBase: a delete masks puts
        // with its timestamp), while in the transaction a later put wins. Let the clock move on first.
        long after = System.currentTimeMillis();
        while (System.currentTimeMillis() <= after) {
            Thread.onSpinWait();
        }
    }

    private static Map<String, Supplier<Get>> gets() {
        Map<String, Supplier<Get>> m = new LinkedHashMap<>();
        for (String row : List.of("\0", "\0\1", "a", "b", "c", "d", "e", "k", "n", "o", "p", "zz", "missing")) {
            m.put(row + " whole", () -> new Get(b(row)));
            m.put(row + " family", () -> new Get(b(row)).addFamily(CF2));
            m.put(row + " column", () -> new Get(b(row)).addColumn(CF, b("q1")));
            m.put(row + " columns of two families", () -> new Get(b(row)).addColumn(CF, b("q2"))
                    .addColumn(CF2, b("x")));
            m.put(row + " family then column", () -> new Get(b(row)).addFamily(CF).addColumn(CF, b("q3")));
            m.put(row + " per-family limit", () -> new Get(b(row)).setMaxResultsPerColumnFamily(1)
                    .setRowOffsetPerColumnFamily(1));
            m.put(row + " value filter", () -> new Get(b(row)).setFilter(new ValueFilter(CompareOperator.EQUAL,
                    new BinaryComparator(b("new")))));
            m.put(row + " column prefix", () -> new Get(b(row)).setFilter(new ColumnPrefixFilter(b("q"))));
            m.put(row + " key only", () -> new Get(b(row)).setFilter(new KeyOnlyFilter()));
            m.put(row + " first key only", () -> new Get(b(row)).setFilter(new FirstKeyOnlyFilter()));
            m.put(row + " exists only", () -> new Get(b(row)).setCheckExistenceOnly(true));
            m.put(row + " exists only, column", () -> new Get(b(row)).addColumn(CF, b("q1"))
                    .setCheckExistenceOnly(true));
        }
        return m;
    }

    private static Map<String, Supplier<Scan>> scans() {
        Map<String, Supplier<Scan>> m = new LinkedHashMap<>();
        m.put("plain", Scan::new);
        m.put("caching 1", () -> new Scan().setCaching(1));
        m.put("reversed", () -> new Scan().setReversed(true));
        m.put("reversed caching 1", () -> new Scan().setReversed(true).setCaching(1));
        m.put("limit 3", () -> new Scan().setLimit(3));
        m.put("limit 3 across the split", () -> new Scan().withStartRow(b("k")).setLimit(3));
        m.put("reversed limit 4", () -> new Scan().setReversed(true).setLimit(4));
        m.put("batch 1", () -> new Scan().setBatch(1));
        m.put("batch 2 caching 1", () -> new Scan().setBatch(2).setCaching(1));
        m.put("family", () -> new Scan().addFamily(CF2));
        m.put("column", () -> new Scan().addColumn(CF, b("q1")));
        m.put("start exclusive", () -> new Scan().withStartRow(b("b"), false));
        m.put("start exclusive at a new row", () -> new Scan().withStartRow(b("c"), false));
        m.put("stop inclusive", () -> new Scan().withStopRow(b("n"), true));
        m.put("stop exclusive at a new row", () -> new Scan().withStopRow(b("n")));
        m.put("one row, both inclusive", () -> new Scan().withStartRow(b("n")).withStopRow(b("n"), true));
        m.put("start equals stop", () -> new Scan().withStartRow(b("c")).withStopRow(b("c")));
        m.put("range across the split", () -> new Scan().withStartRow(b("d")).withStopRow(b("p")));
        m.put("reversed range across the split", () -> new Scan().setReversed(true).withStartRow(b("p"))
                .withStopRow(b("d")));
        m.put("reversed range, inclusive ends", () -> new Scan().setReversed(true).withStartRow(b("o"), true)
                .withStopRow(b("c"), true));
        m.put("reversed start exclusive", () -> new Scan().setReversed(true).withStartRow(b("n"), false));
        m.put("prefix", () -> new Scan().setStartStopRowForPrefixScan(b("z")));
        m.put("value filter", () -> new Scan().setFilter(new ValueFilter(CompareOperator.EQUAL,
                new BinaryComparator(b("new")))));
        m.put("single column value filter", () -> {
            SingleColumnValueFilter f = new SingleColumnValueFilter(CF, b("q1"), CompareOperator.EQUAL, b("new"));
            f.setFilterIfMissing(true);
            return new Scan().setFilter(f);
        });
        m.put("single column value filter keeps rows without the column", () -> new Scan().setFilter(
                new SingleColumnValueFilter(CF, b("q1"), CompareOperator.NOT_EQUAL, b("new"))));
        // (A PageFilter across regions is applied per region by HBase, so only within one region here.)
        m.put("page filter in one region", () -> new Scan().withStopRow(b("l")).setFilter(new PageFilter(2)));
        m.put("column pagination", () -> new Scan().setFilter(new ColumnPaginationFilter(1, 1)));
        m.put("multi row range", () -> new Scan().setFilter(new MultiRowRangeFilter(new ArrayList<>(List.of(
                new MultiRowRangeFilter.RowRange(b("b"), true, b("d"), false),
                new MultiRowRangeFilter.RowRange(b("n"), true, b("p"), true))))));
        m.put("while match", () -> new Scan().setFilter(new WhileMatchFilter(new RowFilter(CompareOperator.LESS,
                new BinaryComparator(b("e"))))));
        m.put("inclusive stop reversed", () -> new Scan().setReversed(true).withStartRow(b("o"))
                .setFilter(new InclusiveStopFilter(b("c"))));
        m.put("must pass one", () -> new Scan().setFilter(new FilterList(FilterList.Operator.MUST_PASS_ONE,
                new PrefixFilter(b("n")), new ValueFilter(CompareOperator.EQUAL, new BinaryComparator(b("new"))))));
        m.put("family and column of another family", () -> new Scan().addFamily(CF2).addColumn(CF, b("q0")));
        m.put("binary rows", () -> new Scan().withStartRow(new byte[] {0}).withStopRow(b("a")));
        m.put("empty values", () -> new Scan().setFilter(new ValueFilter(CompareOperator.EQUAL,
                new BinaryComparator(new byte[0]))));
        m.put("prefix filter reversed", () -> new Scan().setReversed(true).setFilter(new PrefixFilter(b("z"))));
        m.put("per-family limit", () -> new Scan().setMaxResultsPerColumnFamily(1));
        return m;
    }

    /**
     * Committed rows a..p (with a split at m), then a running transaction adds rows (new ones between and after them,
     * one in each region), changes columns, deletes columns, families and whole rows: every get, multi-get, exists
     * and scan must equal the plain HBase table holding the same logical data.
     */
    private static void readsLookLikeHBase(TransactionManager tm) throws Exception {
        MiniCluster c = MiniCluster.get();
        TTable t = new TTable(c.connection(), c.createTable("advlike", SPLITS, "cf", "cf2"));
        try (Table plain = plainTable("advlike")) {
            Transaction init = tm.begin();
            for (String row : List.of("a", "b", "d", "e", "k", "o", "p")) {
                Put p = new Put(b(row)).addColumn(CF, b("q1"), b(row + "1")).addColumn(CF, b("q2"), b(row + "2"))
                        .addColumn(CF2, b("x"), b(row + "x"));
                if (row.equals("e") || row.equals("o")) {
                    p.addColumn(CF, b("q3"), b("new")); // a committed value the value filters match
                }
                put(t, init, plain, p);
            }
            tm.commit(init);
            Transaction tx = tm.begin();
            put(t, tx, plain, new Put(b("c")).addColumn(CF, b("q1"), b("new")).addColumn(CF2, b("x"), b("cx")));
            put(t, tx, plain, new Put(b("n")).addColumn(CF2, b("y"), b("new")));
            put(t, tx, plain, new Put(b("zz")).addColumn(CF, b("q0"), b("zz0")));
            put(t, tx, plain, new Put(b("a")).addColumn(CF, b("q1"), b("new")).addColumn(CF, b("q0"), b("a0")));
            delete(t, tx, plain, new Delete(b("b")).addColumn(CF, b("q1")));
            delete(t, tx, plain, new Delete(b("d")).addFamily(CF));
            delete(t, tx, plain, new Delete(b("k")));
            delete(t, tx, plain, new Delete(b("missing")));
            delete(t, tx, plain, new Delete(b("p")).addColumns(CF2, b("x")));
            put(t, tx, plain, new Put(b("p")).addColumn(CF2, b("x"), b("new"))); // deleted, then written again
            delete(t, tx, plain, new Delete(b("o")).addColumn(CF, b("q3"))); // its committed "new" goes
            put(t, tx, plain, new Put(b("\0")).addColumn(CF, new byte[0], new byte[0])); // empty qualifier and value
            put(t, tx, plain, new Put(b("\0\1")).addColumn(CF2, b("x"), b("new")).addColumn(CF, b("q1"), b("")));
            put(t, tx, plain, new Put(b("e")).addColumn(CF, b("q1"), b("new"))); // now matches the value filters
            Map<String, Supplier<Get>> gets = gets();
            List<Get> all = new ArrayList<>();
            List<String> expectedAll = new ArrayList<>();
            for (Map.Entry<String, Supplier<Get>> e : gets.entrySet()) {
                Result expected = plain.get(e.getValue().get());
                Result actual = t.get(tx, e.getValue().get());
                assertEquals(describe(expected), describe(actual), "get " + e.getKey() + " (" + tm.settings() + ")");
                if (!e.getValue().get().isCheckExistenceOnly()) {
                    assertEquals(plain.exists(e.getValue().get()), t.exists(tx, e.getValue().get()),
                            "exists " + e.getKey());
                    all.add(e.getValue().get());
                    expectedAll.add(describe(expected));
                }
            }
            List<String> actualAll = new ArrayList<>();
            for (Result r : t.get(tx, all)) {
                actualAll.add(describe(r));
            }
            assertEquals(expectedAll, actualAll, "multi-get, in request order");
            for (Map.Entry<String, Supplier<Scan>> e : scans().entrySet()) {
                List<String> expected;
                try (ResultScanner s = plain.getScanner(e.getValue().get())) {
                    expected = describe(s);
                }
                try (ResultScanner s = t.getScanner(tx, e.getValue().get())) {
                    assertEquals(expected, describe(s), "scan " + e.getKey());
                }
            }
            tm.commit(tx);
            // Committed, the same data reads the same in a new transaction (now from HBase, not the buffer).
            Transaction after = tm.begin();
            for (Map.Entry<String, Supplier<Get>> e : gets.entrySet()) {
                assertEquals(describe(plain.get(e.getValue().get())), describe(t.get(after, e.getValue().get())),
                        "get after commit " + e.getKey());
            }
            for (Map.Entry<String, Supplier<Scan>> e : scans().entrySet()) {
                try (ResultScanner s = plain.getScanner(e.getValue().get());
                     ResultScanner s2 = t.getScanner(after, e.getValue().get())) {
                    assertEquals(describe(s), describe(s2), "scan after commit " + e.getKey());
                }
            }
            tm.commit(after);
        }
        t.close();
    }

    // ---- Result shape ---------------------------------------------------------------------------------------------

    @Test
    void readsWithBufferedWritesLookLikeAPlainHBaseTable() throws Exception {
        readsLookLikeHBase(buffered);
    }

    @Test
    void readsWithWritesAlreadySentLookLikeAPlainHBaseTable() throws Exception {
        readsLookLikeHBase(writeThrough);
    }

    @Test
    void readsFetchingOneVersionAtATimeLookLikeAPlainHBaseTable() throws Exception {
        readsLookLikeHBase(oneVersion);
    }

    @Test
    void cellTimestampsAreTheWritersStartTimestamps() throws Exception {
        MiniCluster c = MiniCluster.get();
        TTable t = new TTable(c.connection(), c.createTable("advts", "cf"));
        Transaction w1 = buffered.begin();
        t.put(w1, new Put(b("r")).addColumn(CF, b("a"), b("1")).addColumn(CF, b("b"), b("1")));
        buffered.commit(w1);
        Transaction w2 = writeThrough.begin();
        t.put(w2, new Put(b("r")).addColumn(CF, b("b"), b("2")));
        writeThrough.commit(w2);
        Transaction reader = buffered.begin();
        Result r = t.get(reader, new Get(b("r")));
        assertEquals(w1.getStartTimestamp(), r.getColumnLatestCell(CF, b("a")).getTimestamp());
        assertEquals(w2.getStartTimestamp(), r.getColumnLatestCell(CF, b("b")).getTimestamp());
        t.put(reader, new Put(b("r")).addColumn(CF, b("c"), b("3")));
        r = t.get(reader, new Get(b("r")));
        assertEquals(reader.getStartTimestamp(), r.getColumnLatestCell(CF, b("c")).getTimestamp(),
                "a buffered write carries the transaction's start timestamp, as it will in HBase");
        try (ResultScanner s = t.getScanner(reader, new Scan())) {
            Result sr = s.next();
            assertEquals(w1.getStartTimestamp(), sr.getColumnLatestCell(CF, b("a")).getTimestamp());
            assertEquals(w2.getStartTimestamp(), sr.getColumnLatestCell(CF, b("b")).getTimestamp());
            assertEquals(reader.getStartTimestamp(), sr.getColumnLatestCell(CF, b("c")).getTimestamp());
        }
        buffered.commit(reader);
        Transaction later = buffered.begin();
        assertEquals(reader.getStartTimestamp(),
                t.get(later, new Get(b("r"))).getColumnLatestCell(CF, b("c")).getTimestamp());
        buffered.commit(later);
    }

    // ---- filters judge the snapshot's version ---------------------------------------------------------------------

    @Test
    void filtersSeeTheSnapshotValueNotNewerAbortedOrUncommittedOnes() throws Exception {
        MiniCluster c = MiniCluster.get();
        TTable t = new TTable(c.connection(), c.createTable("advfilter", SPLITS, "cf"));
        Transaction init = buffered.begin();
        t.put(init, new Put(b("match")).addColumn(CF, b("v"), b("yes")).addColumn(CF, b("w"), b("w")));
        t.put(init, new Put(b("nomatch")).addColumn(CF, b("v"), b("no")).addColumn(CF, b("w"), b("w")));
        t.put(init, new Put(b("x-nomatch")).addColumn(CF, b("v"), b("no")).addColumn(CF, b("w"), b("w")));
        buffered.commit(init);
        Transaction reader = buffered.begin();
        // A newer aborted version that matches, a newer uncommitted one that matches, and newer invisible ones that
        // do not match over the committed match.
        Transaction aborted = writeThrough.begin();
        t.put(aborted, new Put(b("nomatch")).addColumn(CF, b("v"), b("yes")));
        t.put(aborted, new Put(b("match")).addColumn(CF, b("v"), b("no")));
        writeThrough.rollback(aborted);
        Transaction uncommitted = writeThrough.begin();
        t.put(uncommitted, new Put(b("x-nomatch")).addColumn(CF, b("v"), b("yes")));
        t.put(uncommitted, new Put(b("match")).addColumn(CF, b("v"), b("no")));
        Transaction committedLater = writeThrough.begin();
        t.put(committedLater, new Put(b("match")).addColumn(CF, b("w"), b("gone")));
        t.delete(committedLater, new Delete(b("match")).addColumn(CF, b("v")));
        writeThrough.commit(committedLater);
        // An abort whose clean-up deletes did not happen (a crashed client): its version stays, the oracle aborted it.
        SingleColumnValueFilter scvf = new SingleColumnValueFilter(CF, b("v"), CompareOperator.EQUAL, b("yes"));
        scvf.setFilterIfMissing(true);
        for (int round = 0; round < 2; round++) {
            assertEquals(List.of("match"), TestSupport.rows(t, reader, new Scan().setFilter(scvf)));
            assertEquals(List.of("match"), TestSupport.rows(t, reader, new Scan().setReversed(true).setFilter(scvf)));
            assertEquals(List.of("match"), TestSupport.rows(t, reader, new Scan().setFilter(
                    new ValueFilter(CompareOperator.EQUAL, new BinaryComparator(b("yes"))))));
            assertFalse(t.get(reader, new Get(b("match")).setFilter(scvf)).isEmpty());
            assertTrue(t.get(reader, new Get(b("nomatch")).setFilter(scvf)).isEmpty());
            assertTrue(t.get(reader, new Get(b("x-nomatch")).setFilter(scvf)).isEmpty());
            assertTrue(t.exists(reader, new Get(b("match")).setFilter(scvf)));
            assertFalse(t.exists(reader, new Get(b("x-nomatch")).setFilter(scvf)));
            assertEquals("w", Bytes.toString(t.get(reader, new Get(b("match")).setFilter(scvf)).getValue(CF, b("w"))));
            try (Admin admin = c.connection().getAdmin()) {
                admin.flush(t.getName()); // the same from store files
            }
        }
        writeThrough.rollback(uncommitted);
        buffered.commit(reader);
        Transaction after = buffered.begin();
        assertEquals(List.of(), TestSupport.rows(t, after, new Scan().setFilter(scvf)),
                "the committed delete of match:v now hides it; nothing else ever matched");
        buffered.commit(after);
    }

    // ---- deletes --------------------------------------------------------------------------------------------------

    @Test
    void everyKindOfDeleteRemovesTheColumnsInTheSameAndLaterTransactions() throws Exception {
        MiniCluster c = MiniCluster.get();
        TTable t = new TTable(c.connection(), c.createTable("advdel", "cf", "cf2"));
        // Several committed versions per column, so that a "latest version" delete would reveal an older one.
        for (int i = 0; i < 3; i++) {
            Transaction w = buffered.begin();
            for (String row : List.of("col", "cols", "fam", "row", "keep")) {
                t.put(w, new Put(b(row)).addColumn(CF, b("a"), b("a" + i)).addColumn(CF, b("b"), b("b" + i))
                        .addColumn(CF2, b("x"), b("x" + i)));
            }
            buffered.commit(w);
        }
        Transaction tx = buffered.begin();
        t.delete(tx, new Delete(b("col")).addColumn(CF, b("a")));
        t.delete(tx, new Delete(b("cols")).addColumns(CF, b("a")));
        t.delete(tx, new Delete(b("fam")).addFamily(CF));
        t.delete(tx, new Delete(b("row")));
        Map<String, String> expected = Map.of(
                "col", "cf/b=b2 cf2/x=x2",
                "cols", "cf/b=b2 cf2/x=x2",
                "fam", "cf2/x=x2",
                "keep", "cf/a=a2 cf/b=b2 cf2/x=x2");
        Transaction concurrent = buffered.begin();
        for (Transaction reader : List.of(tx, concurrent)) {
            for (String row : List.of("col", "cols", "fam", "row", "keep")) {
                String want = reader == tx ? expected.get(row) : "cf/a=a2 cf/b=b2 cf2/x=x2";
                assertEquals(want, cells(t.get(reader, new Get(b(row)))), row + " read by " + reader);
            }
        }
        assertEquals(List.of("col", "cols", "fam", "keep"), TestSupport.rows(t, tx, new Scan()));
        assertEquals(List.of("col", "cols", "keep"), TestSupport.rows(t, tx, new Scan().addFamily(CF)));
        buffered.commit(tx);
        buffered.commit(concurrent);
        Transaction later = oneVersion.begin();
        for (String row : List.of("col", "cols", "fam", "row", "keep")) {
            assertEquals(expected.get(row), cells(t.get(later, new Get(b(row)))), row + " after commit");
        }
        assertFalse(t.exists(later, new Get(b("row"))));
        assertEquals(List.of("keep", "fam", "cols", "col"),
                TestSupport.rows(t, later, new Scan().setReversed(true)));
        oneVersion.commit(later);
    }

    private static String cells(Result r) {
        if (r.isEmpty()) {
            return null;
        }
        List<String> out = new ArrayList<>();
        for (Cell c : r.rawCells()) {
            out.add(Bytes.toString(CellUtil.cloneFamily(c)) + "/" + Bytes.toString(CellUtil.cloneQualifier(c)) + "="
                    + Bytes.toString(CellUtil.cloneValue(c)));
        }
        return String.join(" ", out);
    }

    @Test
    void aRolledBackOrConflictingDeleteLeavesTheDataVisible() throws Exception {
        MiniCluster c = MiniCluster.get();
        TTable t = new TTable(c.connection(), c.createTable("advdelabort", "cf"));
        Transaction init = buffered.begin();
        t.put(init, new Put(b("r")).addColumn(CF, b("v"), b("1")));
        t.put(init, new Put(b("s")).addColumn(CF, b("v"), b("1")));
        buffered.commit(init);
        Transaction rolledBack = writeThrough.begin();
        t.delete(rolledBack, new Delete(b("r")));
        writeThrough.rollback(rolledBack);
        Transaction loser = writeThrough.begin();
        Transaction winner = buffered.begin();
        t.delete(loser, new Delete(b("s")));
        t.put(winner, new Put(b("s")).addColumn(CF, b("v"), b("2")));
        buffered.commit(winner);
        RollbackException e = assertThrows(RollbackException.class, () -> writeThrough.commit(loser));
        assertEquals(RollbackException.Reason.CONFLICT, e.getReason());
        Transaction reader = buffered.begin();
        assertEquals("1", Bytes.toString(t.get(reader, new Get(b("r"))).getValue(CF, b("v"))));
        assertEquals("2", Bytes.toString(t.get(reader, new Get(b("s"))).getValue(CF, b("v"))));
        assertEquals(List.of("r", "s"), TestSupport.rows(t, reader, new Scan()));
        buffered.commit(reader);
    }

    @Test
    void deletingARowThatDoesNotExistCommitsAndConflictsWithAConcurrentInsert() throws Exception {
        MiniCluster c = MiniCluster.get();
        TTable t = new TTable(c.connection(), c.createTable("advdelmissing", "cf"));
        Transaction alone = buffered.begin();
        t.delete(alone, new Delete(b("ghost")));
        t.delete(alone, new Delete(b("ghost2")).addColumn(CF, b("v")));
        assertFalse(alone.isReadOnly());
        assertTrue(t.get(alone, new Get(b("ghost2"))).isEmpty());
        assertEquals(List.of(), TestSupport.rows(t, alone, new Scan()));
        buffered.commit(alone);
        Transaction deleter = buffered.begin();
        Transaction inserter = buffered.begin();
        t.delete(deleter, new Delete(b("ghost")));
        t.put(inserter, new Put(b("ghost")).addColumn(CF, b("v"), b("1")));
        buffered.commit(inserter);
        assertThrows(RollbackException.class, () -> buffered.commit(deleter));
        Transaction reader = buffered.begin();
        assertEquals(List.of("ghost"), TestSupport.rows(t, reader, new Scan()));
        buffered.commit(reader);
    }

    @Test
    void deleteThenPutAgainOfTheSameCellInOneTransactionKeepsTheNewValue() throws Exception {
        MiniCluster c = MiniCluster.get();
        TTable t = new TTable(c.connection(), c.createTable("advdelput", "cf"));
        for (TransactionManager tm : List.of(buffered, writeThrough)) {
            Transaction init = tm.begin();
            t.put(init, new Put(b("r")).addColumn(CF, b("v"), b("old")).addColumn(CF, b("w"), b("w")));
            tm.commit(init);
            Transaction tx = tm.begin();
            t.delete(tx, new Delete(b("r")));
            assertTrue(t.get(tx, new Get(b("r"))).isEmpty());
            t.put(tx, new Put(b("r")).addColumn(CF, b("v"), b("new")));
            assertEquals("cf/v=new", cells(t.get(tx, new Get(b("r")))));
            tm.commit(tx);
            Transaction reader = tm.begin();
            assertEquals("cf/v=new", cells(t.get(reader, new Get(b("r")))));
            t.put(reader, new Put(b("r")).addColumn(CF, b("v"), b("a")).addColumn(CF, b("v"), b("b")));
            assertEquals("cf/v=b", cells(t.get(reader, new Get(b("r")))), "the later cell of one Put wins");
            tm.rollback(reader);
        }
    }

    // ---- concurrency ----------------------------------------------------------------------------------------------

    @Test
    void readModifyWriteIncrementsFromManyThreadsLoseNoUpdate() throws Exception {
        MiniCluster c = MiniCluster.get();
        TTable t = new TTable(c.connection(), c.createTable("advinc", "cf"));
        Transaction init = buffered.begin();
        TestSupport.putInt(t, init, "counter", 0);
        buffered.commit(init);
        int threads = 4;
        int perThread = 15;
        AtomicInteger committed = new AtomicInteger();
        AtomicInteger conflicts = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(threads);
        try {
            List<Future<?>> futures = new ArrayList<>();
            for (int th = 0; th < threads; th++) {
                TransactionManager tm = th % 2 == 0 ? buffered : writeThrough;
                futures.add(pool.submit(() -> {
                    for (int i = 0; i < perThread; i++) {
                        Transaction tx = tm.begin();
                        try {
                            long v = TestSupport.getInt(t, tx, "counter");
                            TestSupport.putInt(t, tx, "counter", v + 1);
                            tm.commit(tx);
                            committed.incrementAndGet();
                        } catch (RollbackException e) {
                            conflicts.incrementAndGet();
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    }
                    return null;
                }));
            }
            for (Future<?> f : futures) {
                f.get();
            }
        } finally {
            pool.shutdownNow();
        }
        Transaction reader = buffered.begin();
        assertEquals(committed.get(), TestSupport.getInt(t, reader, "counter"),
                committed + " committed, " + conflicts + " rolled back");
        buffered.commit(reader);
        assertTrue(committed.get() > 0);
    }

    @Test
    void readOnlyTransactionsNeverAbortWhileWritersConflict() throws Exception {
        MiniCluster c = MiniCluster.get();
        TTable t = new TTable(c.connection(), c.createTable("advro", "cf"));
        Transaction init = buffered.begin();
        TestSupport.putInt(t, init, "x", 0);
        buffered.commit(init);
        List<Transaction> readers = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            Transaction r = buffered.begin();
            long seen = TestSupport.getInt(t, r, "x");
            readers.add(r);
            Transaction w = writeThrough.begin();
            TestSupport.putInt(t, w, "x", i + 1);
            writeThrough.commit(w);
            assertEquals(seen, TestSupport.getInt(t, r, "x"));
        }
        for (Transaction r : readers) {
            buffered.commit(r);
            assertEquals(Transaction.Status.COMMITTED, r.getStatus());
        }
    }

    @Test
    void aLongReadersSnapshotSurvivesManyCommitsFlushesCompactionsARegionMoveAndASplit() throws Exception {
        MiniCluster c = MiniCluster.get();
        // Pre-split at r20, and split at r10 while running (com.google.protobuf.HBaseZeroCopyByteString in the test
        // sources says why a split needs help on this class path).
        TableName name = c.createTable("advlong", new byte[][] {b("r20")}, "cf");
        TTable t = new TTable(c.connection(), name);
        Transaction init = buffered.begin();
        for (int i = 0; i < 40; i++) {
            t.put(init, new Put(b(String.format("r%02d", i))).addColumn(CF, b("v"), b("v0-" + i)));
        }
        buffered.commit(init);
        Transaction reader = buffered.begin();
        Transaction readerOneVersion = oneVersion.begin();
        List<String> before = describeAll(t, reader);
        assertEquals(before, describeAll(t, readerOneVersion));
        try (Admin admin = c.connection().getAdmin()) {
            for (int round = 1; round <= 300; round++) {
                TransactionManager tm = round % 2 == 0 ? buffered : writeThrough;
                Transaction w = tm.begin();
                int i = round % 40;
                String row = String.format("r%02d", i);
                if (round % 7 == 0) {
                    t.delete(w, new Delete(b(row)));
                } else {
                    t.put(w, new Put(b(row)).addColumn(CF, b("v"), b("v" + round + "-" + i))
                            .addColumn(CF, b("n" + round), b("x")));
                }
                if (round % 11 == 0) {
                    tm.rollback(w);
                } else {
                    tm.commit(w);
                }
                if (round == 100) {
                    admin.flush(name);
                    assertEquals(before, describeAll(t, reader), "after a flush");
                }
                if (round == 150) {
                    admin.majorCompact(name);
                    waitForCompaction(admin, name);
                    assertEquals(before, describeAll(t, reader), "after a major compaction");
                }
                if (round == 200) {
                    moveOrReassign(admin, name);
                    assertEquals(before, describeAll(t, reader), "after a region move");
                }
                if (round == 250) {
                    admin.splitRegionAsync(admin.getRegions(name).get(0).getRegionName(), b("r10"))
                            .get(60, java.util.concurrent.TimeUnit.SECONDS);
                    waitForRegions(admin, name, 3);
                    assertEquals(before, describeAll(t, reader), "after a region split");
                }
            }
            assertEquals(before, describeAll(t, reader), "after 300 commits, a compaction and a move");
            assertEquals(before, describeAll(t, readerOneVersion), "reading one version at a time");
            moveOrReassign(admin, name);
            waitForRegions(admin, name, 3);
            admin.flush(name);
            admin.majorCompact(name);
            waitForCompaction(admin, name);
            assertEquals(before, describeAll(t, reader), "after a region move and a major compaction");
        }
        buffered.commit(reader);
        oneVersion.commit(readerOneVersion);
    }

    @Test
    void aLongReaderOnAnotherClientKeepsItsSnapshotWhileTmaxPassesTheWritersItMustNotSee() throws Exception {
        MiniCluster c = MiniCluster.get();
        // A private oracle with a tiny commit window, so that T_max passes the reader and its writers many times.
        try (io.sibyl.oracle.OracleServer small = io.sibyl.oracle.OracleServer.startInMemory(
                io.sibyl.oracle.OracleConfig.defaults().withPort(0).withCapacities(64, 8, 1024));
             TransactionManager writers = TransactionManager.create(c.connection(), "127.0.0.1", small.port());
             TransactionManager readers = TransactionManager.create(c.connection(), "127.0.0.1", small.port())) {
            TTable t = new TTable(c.connection(), c.createTable("advtmax", new byte[][] {b("k5")}, "cf"));
            Transaction init = writers.begin();
            for (int i = 0; i < 10; i++) {
                TestSupport.put(t, init, "k" + i, "v0");
            }
            writers.commit(init);
            // Writers that start before the reader and commit after it began: never in its snapshot.
            List<Transaction> startedBefore = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                Transaction w = writers.begin();
                TestSupport.put(t, w, "k" + i, "before-" + i);
                startedBefore.add(w);
            }
            Transaction reader = readers.begin();
            Map<String, Map<String, String>> snapshot = TestSupport.scan(t, reader, new Scan());
            long lastCommit = 0;
            for (Transaction w : startedBefore) {
                try {
                    writers.commit(w);
                    lastCommit = w.getCommitTimestamp();
                } catch (RollbackException e) {
                    // TOO_OLD: the tiny window moved past it already; its versions must stay invisible too
                }
            }
            assertTrue(lastCommit > reader.getStartTimestamp(), "some writer committed after the reader began");
            for (int round = 0; round < 300; round++) {
                final int n = round;
                writers.run(TestSupport.io(tx -> {
                    TestSupport.put(t, tx, "k" + (n % 10), "round-" + n);
                    return null;
                }));
                if (round % 50 == 0) {
                    assertEquals(snapshot, TestSupport.scan(t, reader, new Scan()), "round " + round);
                }
            }
            assertTrue(small.tMax() > lastCommit, "T_max passed every writer");
            assertEquals(snapshot, TestSupport.scan(t, reader, new Scan()));
            assertEquals(snapshot, TestSupport.scan(t, reader, new Scan().setReversed(true)));
            for (int i = 0; i < 10; i++) {
                assertEquals("v0", TestSupport.get(t, reader, "k" + i));
            }
            readers.commit(reader);
            Transaction after = readers.begin();
            assertEquals("round-299", TestSupport.get(t, after, "k9"));
            readers.commit(after);
        }
    }

    private static void waitForCompaction(Admin admin, TableName name) throws Exception {
        Thread.sleep(200); // a requested compaction may not have started yet
        await("the compaction of " + name).atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50))
                .pollInSameThread().until(() -> admin.getCompactionState(name) == CompactionState.NONE);
    }

    /** Moves the table's regions to another region server, or closes and reopens them if there is only one. */
    private static void moveOrReassign(Admin admin, TableName name) throws Exception {
        var servers = new ArrayList<>(admin.getRegionServers());
        for (var region : admin.getRegions(name)) {
            if (servers.size() > 1) {
                admin.move(region.getEncodedNameAsBytes());
            } else {
                admin.unassign(region.getEncodedNameAsBytes());
                admin.assign(region.getEncodedNameAsBytes());
            }
        }
        waitForRegions(admin, name, admin.getRegions(name).size());
    }

    private static void waitForRegions(Admin admin, TableName name, int count) {
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).pollInSameThread()
                .untilAsserted(() -> {
                    assertEquals(count, admin.getRegions(name).size(), "regions online");
                    assertTrue(admin.isTableAvailable(name), name + " available");
                });
    }

    /** Every row by scan (caching 3), by reversed scan, and by a multi-get of every row. */
    private static List<String> describeAll(TTable t, Transaction tx) throws IOException {
        List<String> out = new ArrayList<>();
        try (ResultScanner s = t.getScanner(tx, new Scan().setCaching(3))) {
            out.addAll(describe(s));
        }
        List<String> reversed = new ArrayList<>();
        try (ResultScanner s = t.getScanner(tx, new Scan().setReversed(true))) {
            reversed.addAll(describe(s));
        }
        java.util.Collections.reverse(reversed);
        assertEquals(out, reversed, "reversed scan");
        List<Get> gets = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            gets.add(new Get(b(String.format("r%02d", i))));
        }
        List<String> viaGets = new ArrayList<>();
        for (Result r : t.get(tx, gets)) {
            if (!r.isEmpty()) {
                viaGets.add(describe(r));
            }
        }
        assertEquals(out, viaGets, "multi-get");
        return out;
    }

    @Test
    void aCommitIsVisibleAtOnceToTransactionsBegunOnOtherManagers() throws Exception {
        MiniCluster c = MiniCluster.get();
        TTable t = new TTable(c.connection(), c.createTable("advcross", "cf"));
        List<TransactionManager> managers = List.of(buffered, writeThrough, oneVersion);
        for (int i = 0; i < 90; i++) {
            TransactionManager writer = managers.get(i % 3);
            TransactionManager reader = managers.get((i + 1 + i / 3 % 2) % 3);
            Transaction w = writer.begin();
            TestSupport.putInt(t, w, "k", i);
            t.put(w, new Put(b("k" + i)).addColumn(CF, b("v"), b("x")));
            writer.commit(w);
            Transaction r = reader.begin();
            assertTrue(r.getStartTimestamp() > w.getCommitTimestamp());
            assertEquals(i, TestSupport.getInt(t, r, "k"), "round " + i);
            assertEquals(i + 2, TestSupport.rows(t, r, new Scan()).size(), "round " + i);
            reader.commit(r);
        }
    }

    @Test
    void rollingBackAfterAFailedCommitIsHarmless() throws Exception {
        MiniCluster c = MiniCluster.get();
        TTable t = new TTable(c.connection(), c.createTable("advrbrb", "cf"));
        Transaction loser = buffered.begin();
        Transaction winner = writeThrough.begin();
        TestSupport.put(t, loser, "r", "loser");
        TestSupport.put(t, winner, "r", "winner");
        writeThrough.commit(winner);
        try {
            buffered.commit(loser);
            throw new AssertionError("the second writer must lose");
        } catch (RollbackException e) {
            assertTrue(e.isRetryable());
            buffered.rollback(loser); // the usual catch block: must be a no-op
        }
        assertEquals(Transaction.Status.ROLLED_BACK, loser.getStatus());
        Transaction reader = buffered.begin();
        assertEquals("winner", TestSupport.get(t, reader, "r"));
        buffered.commit(reader);
    }


    // ---- filters called as a region server calls them -------------------------------------------------------------

    /**
     * Rows a, b, c written by one transaction and to a plain table; {@code check} compares, for each Get and Scan, the
     * plain table with the transaction that wrote them (own writes) and with a later one (committed data).
     */
    private static void comparesWithPlainHBase(List<Put> rows, List<Supplier<Get>> gets, List<Supplier<Scan>> scans)
            throws Exception {
        MiniCluster c = MiniCluster.get();
        TTable t = new TTable(c.connection(), c.createTable("advfiltercalls", "cf", "cf2"));
        try (Table plain = plainTable("advfiltercalls")) {
            Transaction writer = buffered.begin();
            for (Put p : rows) {
                put(t, writer, plain, p);
            }
            Transaction reader = null;
            for (int round = 0; round < 2; round++) {
                Transaction tx = round == 0 ? writer : (reader = buffered.begin());
                for (Supplier<Get> g : gets) {
                    assertEquals(describe(plain.get(g.get())), describe(t.get(tx, g.get())),
                            (round == 0 ? "own writes: " : "committed: ") + g.get());
                }
                for (Supplier<Scan> sc : scans) {
                    try (ResultScanner expected = plain.getScanner(sc.get());
                         ResultScanner actual = t.getScanner(tx, sc.get())) {
                        assertEquals(describe(expected), describe(actual),
                                (round == 0 ? "own writes: " : "committed: ") + sc.get());
                    }
                }
                if (round == 0) {
                    buffered.commit(writer);
                }
            }
            buffered.commit(reader);
        }
    }

    @Test
    void whileMatchFilterEndsTheScanAtTheFirstCellItRejectsAsHBaseDoes() throws Exception {
        Supplier<org.apache.hadoop.hbase.filter.Filter> whileNotStop = () -> new WhileMatchFilter(
                new ValueFilter(CompareOperator.NOT_EQUAL, new BinaryComparator(b("stop"))));
        comparesWithPlainHBase(List.of(
                        new Put(b("a")).addColumn(CF, b("a"), b("ok")).addColumn(CF, b("b"), b("ok"))
                                .addColumn(CF2, b("x"), b("ok")),
                        new Put(b("b")).addColumn(CF, b("a"), b("ok")).addColumn(CF, b("b"), b("stop"))
                                .addColumn(CF, b("c"), b("ok")).addColumn(CF2, b("x"), b("ok")),
                        new Put(b("c")).addColumn(CF, b("a"), b("ok"))),
                List.of(() -> new Get(b("b")).setFilter(whileNotStop.get()),
                        () -> new Get(b("a")).setFilter(whileNotStop.get())),
                List.of(() -> new Scan().setFilter(whileNotStop.get()),
                        () -> new Scan().setReversed(true).setFilter(whileNotStop.get()),
                        () -> new Scan().setCaching(1).setFilter(whileNotStop.get())));
    }

    @Test
    void aPerFamilyLimitEndsTheFamilyBeforeTheFilterSeesAnotherCellAsHBaseDoes() throws Exception {
        comparesWithPlainHBase(List.of(
                        new Put(b("a")).addColumn(CF, b("a"), b("1")).addColumn(CF, b("b"), b("2"))
                                .addColumn(CF, b("c"), b("3")).addColumn(CF2, b("a"), b("4"))
                                .addColumn(CF2, b("b"), b("5")).addColumn(CF2, b("c"), b("6")),
                        new Put(b("b")).addColumn(CF2, b("x"), b("x")).addColumn(CF2, b("y"), b("match"))),
                List.of(() -> new Get(b("a")).setMaxResultsPerColumnFamily(1)
                                .setFilter(new ColumnPaginationFilter(2, b("b"))),
                        () -> {
                            // The tested column comes after the family's limit: HBase never shows it to the filter.
                            SingleColumnValueFilter f = new SingleColumnValueFilter(CF2, b("y"),
                                    CompareOperator.EQUAL, b("match"));
                            f.setFilterIfMissing(true);
                            return new Get(b("b")).setMaxResultsPerColumnFamily(1).setFilter(f);
                        }),
                List.of(() -> new Scan().setMaxResultsPerColumnFamily(1).setFilter(new ColumnPaginationFilter(2,
                                b("b"))),
                        () -> new Scan().setMaxResultsPerColumnFamily(2).setRowOffsetPerColumnFamily(1)
                                .setFilter(new ColumnPaginationFilter(3, 0))));
    }

    // ---- random differential test against plain HBase -------------------------------------------------------------

    /**
     * Seeded random transactions (puts, column, family and row deletes, on a pre-split table) checked after every few
     * operations with random gets and scans (ranges with either bound inclusive, reversed, limits, batches, caching,
     * column selection, per-family limits, filters) against a plain HBase table holding the same logical data (explicit
     * increasing timestamps, so HBase's own delete markers behave). Meanwhile other transactions leave rolled-back,
     * still-running and committed-after-the-reader-began versions that the reads must not show.
     */
    @org.junit.jupiter.params.ParameterizedTest(name = "seed {0}")
    @org.junit.jupiter.params.provider.ValueSource(longs = {1, 2, 3, 5})
    void randomTransactionsReadLikeAPlainHBaseTable(long seed) throws Exception {
        java.util.Random rnd = new java.util.Random(seed);
        MiniCluster c = MiniCluster.get();
        TTable t = new TTable(c.connection(), c.createTable("advrand", new byte[][] {b("r5"), b("s")}, "cf", "cf2"));
        List<String> ownRows = List.of("r0", "r1", "r2", "r3", "r4", "r4a", "r5", "r6", "r7", "r8", "r9", "r55");
        List<String> otherRows = List.of("s0", "s1", "s2");
        long[] mirrorTs = {1};
        try (Table plain = plainTable("advrand")) {
            for (int round = 0; round < 8; round++) {
                TransactionManager tm = List.of(buffered, writeThrough, oneVersion).get(round % 3);
                // Noise: a rolled-back writer, a writer left running, and one that commits after the reader began.
                Transaction rolledBack = writeThrough.begin();
                randomOps(rnd, t, rolledBack, null, null, ownRows, 6);
                writeThrough.rollback(rolledBack);
                Transaction running = oneVersion.begin();
                randomOps(rnd, t, running, null, null, ownRows, 6);
                Transaction committedAfter = writeThrough.begin();
                List<Runnable> committedAfterOps = new ArrayList<>();
                randomOps(rnd, t, committedAfter, plain, committedAfterOps, otherRows, 4);
                Transaction tx = tm.begin();
                writeThrough.commit(committedAfter); // after tx began: invisible to it, visible to later ones
                for (int step = 0; step < 5; step++) {
                    randomOps(rnd, t, tx, plain, null, ownRows, 3 + rnd.nextInt(4));
                    for (int k = 0; k < 6; k++) {
                        compareRandomRead(rnd, t, tx, plain, "seed " + seed + " round " + round + " step " + step);
                    }
                }
                tm.commit(tx);
                oneVersion.rollback(running);
                for (Runnable op : committedAfterOps) {
                    op.run();
                }
                Transaction reader = List.of(oneVersion, buffered, writeThrough).get(round % 3).begin();
                for (int k = 0; k < 10; k++) {
                    compareRandomRead(rnd, t, reader, plain, "seed " + seed + " after round " + round);
                }
                TestSupport.internals(reader).manager().commit(reader);
            }
        }
    }

    /** Explicit timestamps of the plain mirror's mutations, so that a put after a delete is never masked by it. */
    private long mirrorClock = 1;

    /**
     * Random puts and deletes in {@code tx}; each is applied to {@code plain} (if given) at once, or queued in
     * {@code later} (if given) to apply after a commit, with the next mirror timestamp.
     */
    private void randomOps(java.util.Random rnd, TTable t, Transaction tx, Table plain, List<Runnable> later,
                           List<String> rows, int count) throws IOException {
        List<String> values = List.of("v1", "v2", "match", "x", "");
        List<String> qualifiers = List.of("a", "b", "c");
        for (int i = 0; i < count; i++) {
            byte[] row = b(rows.get(rnd.nextInt(rows.size())));
            byte[] fam = rnd.nextBoolean() ? CF : CF2;
            byte[] q = b(qualifiers.get(rnd.nextInt(qualifiers.size())));
            int kind = rnd.nextInt(10);
            Put p = null;
            Delete d = null;
            Runnable mirror;
            long ts = mirrorClock++;
            if (kind < 6) {
                byte[] v = b(values.get(rnd.nextInt(values.size())));
                p = new Put(row).addColumn(fam, q, v);
                if (rnd.nextInt(3) == 0) {
                    p.addColumn(fam == CF ? CF2 : CF, b(qualifiers.get(rnd.nextInt(3))), b("second"));
                }
                Put mp = new Put(row);
                for (Cell cell : p.getFamilyCellMap().values().stream().flatMap(List::stream).toList()) {
                    mp.addColumn(CellUtil.cloneFamily(cell), CellUtil.cloneQualifier(cell), ts,
                            CellUtil.cloneValue(cell));
                }
                mirror = () -> io(() -> plain.put(mp));
            } else if (kind < 8) {
                d = rnd.nextBoolean() ? new Delete(row).addColumn(fam, q) : new Delete(row).addColumns(fam, q);
                Delete md = new Delete(row).addColumns(fam, q, ts);
                mirror = () -> io(() -> plain.delete(md));
            } else if (kind < 9) {
                d = new Delete(row).addFamily(fam);
                Delete md = new Delete(row).addFamily(fam, ts);
                mirror = () -> io(() -> plain.delete(md));
            } else {
                d = new Delete(row);
                Delete md = new Delete(row, ts);
                mirror = () -> io(() -> plain.delete(md));
            }
            if (p != null) {
                t.put(tx, p);
            } else {
                t.delete(tx, d);
            }
            if (later != null) {
                later.add(mirror);
            } else if (plain != null) {
                mirror.run();
            }
        }
    }

    private interface IoAction {
        void run() throws IOException;
    }

    private static void io(IoAction a) {
        try {
            a.run();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static byte[] randomRow(java.util.Random rnd) {
        List<String> rows = List.of("", "r", "r0", "r2", "r4", "r4a", "r5", "r55", "r6", "r9", "s", "s1", "t");
        return b(rows.get(rnd.nextInt(rows.size())));
    }

    private static org.apache.hadoop.hbase.filter.Filter randomFilter(java.util.Random rnd, boolean forGet) {
        switch (rnd.nextInt(19)) {
            case 0 -> {
                return new ValueFilter(CompareOperator.EQUAL, new BinaryComparator(b("match")));
            }
            case 1 -> {
                SingleColumnValueFilter f = new SingleColumnValueFilter(CF, b("a"), CompareOperator.EQUAL,
                        b("match"));
                f.setFilterIfMissing(rnd.nextBoolean());
                return f;
            }
            case 2 -> {
                return new ColumnPrefixFilter(b("b"));
            }
            case 3 -> {
                return new KeyOnlyFilter();
            }
            case 4 -> {
                return new FirstKeyOnlyFilter();
            }
            case 5 -> {
                return new PrefixFilter(b("r4"));
            }
            case 6 -> {
                return new ValueFilter(CompareOperator.NOT_EQUAL, new BinaryComparator(b("v1")));
            }
            case 7 -> {
                return new FilterList(FilterList.Operator.MUST_PASS_ONE, new ColumnPrefixFilter(b("c")),
                        new ValueFilter(CompareOperator.EQUAL, new BinaryComparator(b("v2"))));
            }
            case 8 -> {
                return new org.apache.hadoop.hbase.filter.MultipleColumnPrefixFilter(new byte[][] {b("a"), b("c")});
            }
            case 9 -> {
                return new org.apache.hadoop.hbase.filter.ColumnRangeFilter(b("b"), rnd.nextBoolean(), b("c"),
                        rnd.nextBoolean());
            }
            case 10 -> {
                SingleColumnValueFilter f = new org.apache.hadoop.hbase.filter.SingleColumnValueExcludeFilter(CF2,
                        b("b"), CompareOperator.NOT_EQUAL, b("v2"));
                f.setFilterIfMissing(rnd.nextBoolean());
                return f;
            }
            case 11 -> {
                return new org.apache.hadoop.hbase.filter.ColumnPaginationFilter(2, b("b"));
            }
            case 12 -> {
                return new org.apache.hadoop.hbase.filter.SkipFilter(new ValueFilter(CompareOperator.NOT_EQUAL,
                        new BinaryComparator(b("x"))));
            }
            case 13 -> {
                return new WhileMatchFilter(new ValueFilter(CompareOperator.NOT_EQUAL,
                        new BinaryComparator(b("match"))));
            }
            case 14 -> {
                return new MultiRowRangeFilter(new ArrayList<>(List.of(
                        new MultiRowRangeFilter.RowRange(b("r1"), true, b("r4a"), rnd.nextBoolean()),
                        new MultiRowRangeFilter.RowRange(b("r6"), rnd.nextBoolean(), b("s1"), true))));
            }
            case 15 -> {
                return new org.apache.hadoop.hbase.filter.FuzzyRowFilter(List.of(
                        new org.apache.hadoop.hbase.util.Pair<>(b("r?"), new byte[] {0, 1})));
            }
            case 16 -> {
                return new org.apache.hadoop.hbase.filter.FamilyFilter(CompareOperator.EQUAL,
                        new BinaryComparator(CF2));
            }
            case 17 -> { // (HBase calls ColumnCountGetFilter unsuitable for scans: used only in gets)
                return forGet ? new FilterList(FilterList.Operator.MUST_PASS_ALL, new PrefixFilter(b("r")),
                        new org.apache.hadoop.hbase.filter.ColumnCountGetFilter(2)) : null;
            }
            default -> {
                return null;
            }
        }
    }

    private static void compareRandomRead(java.util.Random rnd, TTable t, Transaction tx, Table plain, String where)
            throws IOException {
        if (rnd.nextInt(3) == 0) {
            List<Get> gets = new ArrayList<>();
            int n = 1 + rnd.nextInt(4);
            for (int i = 0; i < n; i++) {
                byte[] row = randomRow(rnd);
                Get g = new Get(row.length == 0 ? b("r0") : row);
                switch (rnd.nextInt(4)) {
                    case 0 -> g.addFamily(rnd.nextBoolean() ? CF : CF2);
                    case 1 -> g.addColumn(CF, b("a")).addColumn(CF2, b("b"));
                    default -> {
                    }
                }
                if (rnd.nextInt(3) == 0) {
                    g.setFilter(randomFilter(rnd, true));
                }
                if (rnd.nextInt(5) == 0) {
                    g.setMaxResultsPerColumnFamily(1 + rnd.nextInt(2));
                }
                gets.add(g);
            }
            List<String> expected = new ArrayList<>();
            for (Result r : plain.get(gets)) {
                expected.add(describe(r));
            }
            List<String> actual = new ArrayList<>();
            for (Result r : t.get(tx, gets)) {
                actual.add(describe(r));
            }
            assertEquals(expected, actual, where + ": " + gets);
            Get one = gets.get(0);
            assertEquals(plain.exists(one), t.exists(tx, one), where + ": exists " + one);
            return;
        }
        Scan s = new Scan();
        byte[] start = randomRow(rnd);
        byte[] stop = randomRow(rnd);
        boolean reversed = rnd.nextInt(3) == 0;
        if ((Bytes.compareTo(start, stop) > 0) != reversed && start.length > 0 && stop.length > 0) {
            byte[] x = start;
            start = stop;
            stop = x;
        }
        if (rnd.nextBoolean()) {
            s.withStartRow(start, rnd.nextBoolean());
        }
        if (rnd.nextBoolean()) {
            s.withStopRow(stop, rnd.nextBoolean());
        }
        s.setReversed(reversed);
        org.apache.hadoop.hbase.filter.Filter f = rnd.nextInt(3) == 0 ? randomFilter(rnd, false) : null;
        if (f != null) {
            s.setFilter(f);
        }
        if (rnd.nextInt(4) == 0) {
            s.setLimit(1 + rnd.nextInt(4));
        }
        // (HBase's own limit, batch and region boundaries together count batches as rows: not combined here.)
        if (rnd.nextInt(4) == 0 && (f == null || !f.hasFilterRow()) && s.getLimit() <= 0) {
            s.setBatch(1 + rnd.nextInt(2));
        }
        if (rnd.nextInt(3) == 0) {
            s.setCaching(1 + rnd.nextInt(2));
        }
        switch (rnd.nextInt(5)) {
            case 0 -> s.addFamily(rnd.nextBoolean() ? CF : CF2);
            case 1 -> s.addColumn(CF, b("a")).addColumn(CF2, b("b")).addColumn(CF2, b("c"));
            default -> {
            }
        }
        if (rnd.nextInt(6) == 0) {
            s.setMaxResultsPerColumnFamily(1).setRowOffsetPerColumnFamily(rnd.nextInt(2));
        }
        List<String> expected;
        // A region server cannot load families on demand (SingleColumnValueFilter) in a reversed scan.
        try (ResultScanner rs = plain.getScanner(new Scan(s).setLoadColumnFamiliesOnDemand(false))) {
            expected = describe(rs);
        }
        try (ResultScanner rs = t.getScanner(tx, new Scan(s))) {
            assertEquals(expected, describe(rs), where + ": " + s);
        }
    }

    @Test
    void aFamilyAddedAfterTheTTableOpenedCanBeUsedLikeWithAPlainTable() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("advalter", "cf");
        TTable t = new TTable(c.connection(), name);
        Transaction before = buffered.begin();
        TestSupport.put(t, before, "r", "1");
        buffered.commit(before);
        try (Admin admin = c.connection().getAdmin()) {
            admin.addColumnFamily(name, TTable.familyDescriptor(CF2));
        }
        Transaction tx = buffered.begin();
        t.put(tx, new Put(b("r")).addColumn(CF2, b("x"), b("new family")));
        assertEquals("new family", Bytes.toString(t.get(tx, new Get(b("r")).addFamily(CF2)).getValue(CF2, b("x"))));
        buffered.commit(tx);
        Transaction reader = buffered.begin();
        assertEquals("cf/v=1 cf2/x=new family", cells(t.get(reader, new Get(b("r")))));
        assertEquals(List.of("r"), TestSupport.rows(t, reader, new Scan().addFamily(CF2)));
        assertThrows(org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException.class,
                () -> t.put(reader, new Put(b("r")).addColumn(b("nope"), b("x"), b("y"))));
        buffered.commit(reader);
    }

    // ---- misuse ---------------------------------------------------------------------------------------------------

    @Test
    void misuseIsRefusedWithoutCorruptingTheTransaction() throws Exception {
        MiniCluster c = MiniCluster.get();
        TTable t = new TTable(c.connection(), c.createTable("advmisuse", "cf"));
        Transaction tx = buffered.begin();
        assertThrows(IllegalArgumentException.class,
                () -> t.put(tx, new Put(b("r")).addColumn(CF, b("v"), 42L, b("x"))));
        assertThrows(IllegalArgumentException.class, () -> t.put(tx, List.of(
                new Put(b("ok")).addColumn(CF, b("v"), b("fine")), new Put(b("r"), 7L).addColumn(CF, b("v"), b("x")))));
        assertTrue(tx.isReadOnly(), "a rejected batch buffers none of its puts");
        assertThrows(NullPointerException.class, () -> t.get(null, new Get(b("r"))));
        assertThrows(RuntimeException.class, () -> t.put(tx, (Put) null));
        assertThrows(IllegalArgumentException.class, () -> t.get(tx, new Get(b("r")).readAllVersions()));
        assertTrue(t.get(tx, new Get(b("r")).readVersions(1)).isEmpty(), "one version is what a transaction reads");
        assertEquals(0, t.get(tx, new ArrayList<>()).length);
        t.put(tx, new Put(b("r")).addColumn(CF, b("v"), b("1")));
        buffered.commit(tx);
        assertThrows(IllegalStateException.class, () -> buffered.commit(tx));
        assertThrows(IllegalStateException.class, () -> buffered.rollback(tx));
        assertEquals(Transaction.Status.COMMITTED, tx.getStatus());
        Transaction rolledBack = buffered.begin();
        buffered.rollback(rolledBack);
        buffered.rollback(rolledBack);
        assertThrows(IllegalStateException.class, () -> buffered.commit(rolledBack));
        assertEquals(Transaction.Status.ROLLED_BACK, rolledBack.getStatus());
        Transaction foreign = writeThrough.begin();
        assertThrows(IllegalArgumentException.class, () -> buffered.rollback(foreign));
        assertEquals(Transaction.Status.RUNNING, foreign.getStatus());
        writeThrough.rollback(foreign);
        assertThrows(TableNotFoundException.class,
                () -> new TTable(c.connection(), TableName.valueOf("adv_no_such_table")));
        Transaction reader = buffered.begin();
        assertArrayEquals(b("1"), t.get(reader, new Get(b("r"))).getValue(CF, b("v")));
        assertNull(t.get(reader, new Get(b("ok"))).getValue(CF, b("v")));
        buffered.commit(reader);
    }
}
