package io.sibyl.client;

import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CompareOperator;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.filter.BinaryComparator;
import org.apache.hadoop.hbase.filter.ColumnPaginationFilter;
import org.apache.hadoop.hbase.filter.ColumnPrefixFilter;
import org.apache.hadoop.hbase.filter.ColumnRangeFilter;
import org.apache.hadoop.hbase.filter.FilterList;
import org.apache.hadoop.hbase.filter.FirstKeyOnlyFilter;
import org.apache.hadoop.hbase.filter.InclusiveStopFilter;
import org.apache.hadoop.hbase.filter.KeyOnlyFilter;
import org.apache.hadoop.hbase.filter.MultiRowRangeFilter;
import org.apache.hadoop.hbase.filter.PageFilter;
import org.apache.hadoop.hbase.filter.PrefixFilter;
import org.apache.hadoop.hbase.filter.QualifierFilter;
import org.apache.hadoop.hbase.filter.RegexStringComparator;
import org.apache.hadoop.hbase.filter.RowFilter;
import org.apache.hadoop.hbase.filter.SingleColumnValueFilter;
import org.apache.hadoop.hbase.filter.SubstringComparator;
import org.apache.hadoop.hbase.filter.ValueFilter;
import org.apache.hadoop.hbase.filter.WhileMatchFilter;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

import static io.sibyl.client.TestSupport.b;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;

/**
 * On committed single-version data a transactional scan returns exactly what a plain HBase scan returns, for column
 * selections, ranges, reversed scans, limits, caching, batching, per-family limits and a range of filters; and it
 * keeps returning that while other transactions write, commit and delete (filters see only the snapshot).
 */
@ExtendWith(MiniCluster.class)
class ScanLooksLikeHBaseTest {
    private static final byte[] CF = b("cf");
    private static final byte[] CF2 = b("cf2");
    private static TransactionManager tm;
    private static TransactionManager writeThrough;
    private static TableName name;
    private static TTable t;

    @BeforeAll
    static void data() throws Exception {
        MiniCluster c = MiniCluster.get();
        tm = c.manager();
        writeThrough = c.manager(Map.of(TransactionManager.WRITE_BUFFER_BYTES, "0",
                TransactionManager.READ_VERSIONS, "1"));
        name = c.createTable("scanlike", "cf", "cf2");
        t = new TTable(c.connection(), name);
        Transaction init = tm.begin();
        for (int i = 0; i < 30; i++) {
            String row = String.format("r%02d", i);
            Put p = new Put(b(row));
            for (String q : List.of("a", "b", "c", "d")) {
                if ((i + q.charAt(0)) % 5 != 0) { // some rows miss some columns
                    p.addColumn(CF, b(q), b(q + "-" + (i % 7)));
                }
            }
            p.addColumn(CF2, b("x"), b("x" + i));
            if (i % 3 == 0) {
                p.addColumn(CF2, b("y"), b("y" + i));
            }
            if (i % 4 == 1) { // a qualifier also in cf, where ColumnPrefixFilter("b") skips to the next row after it
                p.addColumn(CF2, b("b"), b("b2-" + i));
            }
            t.put(init, p);
        }
        tm.commit(init);
    }

    @AfterAll
    static void close() {
        t.close();
        tm.close();
        writeThrough.close();
    }

    private static Map<String, Supplier<Scan>> scans() {
        Map<String, Supplier<Scan>> m = new LinkedHashMap<>();
        m.put("plain", Scan::new);
        m.put("family", () -> new Scan().addFamily(CF2));
        m.put("columns", () -> new Scan().addColumn(CF, b("a")).addColumn(CF2, b("y")));
        m.put("range", () -> new Scan().withStartRow(b("r05")).withStopRow(b("r12")));
        m.put("range inclusive", () -> new Scan().withStartRow(b("r05"), false).withStopRow(b("r12"), true));
        m.put("reversed", () -> new Scan().setReversed(true));
        m.put("reversed range", () -> new Scan().setReversed(true).withStartRow(b("r20")).withStopRow(b("r10")));
        m.put("limit", () -> new Scan().setLimit(4));
        m.put("caching", () -> new Scan().setCaching(2));
        m.put("batch", () -> new Scan().setBatch(2));
        m.put("batch + family", () -> new Scan().addFamily(CF).setBatch(3));
        m.put("row prefix", () -> new Scan().setStartStopRowForPrefixScan(b("r1")));
        m.put("per-family limit and offset", () -> new Scan().setMaxResultsPerColumnFamily(2)
                .setRowOffsetPerColumnFamily(1));
        m.put("PrefixFilter", () -> new Scan().setFilter(new PrefixFilter(b("r2"))));
        m.put("reversed PrefixFilter", () -> new Scan().setReversed(true).setFilter(new PrefixFilter(b("r1"))));
        m.put("SingleColumnValueFilter", () -> {
            SingleColumnValueFilter f = new SingleColumnValueFilter(CF, b("a"), CompareOperator.EQUAL, b("a-3"));
            f.setFilterIfMissing(true);
            return new Scan().setFilter(f);
        });
        m.put("SingleColumnValueFilter keeps rows missing the column", () -> new Scan().setFilter(
                new SingleColumnValueFilter(CF, b("b"), CompareOperator.GREATER, b("b-4"))));
        m.put("ValueFilter", () -> new Scan().setFilter(new ValueFilter(CompareOperator.EQUAL,
                new SubstringComparator("-2"))));
        m.put("QualifierFilter", () -> new Scan().setFilter(new QualifierFilter(CompareOperator.LESS_OR_EQUAL,
                new BinaryComparator(b("b")))));
        m.put("ColumnPrefixFilter", () -> new Scan().setFilter(new ColumnPrefixFilter(b("c"))));
        m.put("ColumnPrefixFilter in both families", () -> new Scan().setFilter(new ColumnPrefixFilter(b("b"))));
        m.put("ColumnRangeFilter", () -> new Scan().setFilter(new ColumnRangeFilter(b("b"), true, b("d"), false)));
        m.put("ColumnPaginationFilter", () -> new Scan().setFilter(new ColumnPaginationFilter(2, 1)));
        m.put("KeyOnlyFilter", () -> new Scan().setFilter(new KeyOnlyFilter()));
        m.put("FirstKeyOnlyFilter", () -> new Scan().setFilter(new FirstKeyOnlyFilter()));
        m.put("PageFilter", () -> new Scan().setFilter(new PageFilter(7)));
        m.put("RowFilter regex", () -> new Scan().setFilter(new RowFilter(CompareOperator.EQUAL,
                new RegexStringComparator("r[12][05]"))));
        m.put("InclusiveStopFilter", () -> new Scan().setFilter(new InclusiveStopFilter(b("r04"))));
        m.put("WhileMatchFilter", () -> new Scan().setFilter(new WhileMatchFilter(new RowFilter(CompareOperator.LESS,
                new BinaryComparator(b("r08"))))));
        m.put("MultiRowRangeFilter (seek hints)", () -> new Scan().setFilter(new MultiRowRangeFilter(
                new ArrayList<>(List.of(new MultiRowRangeFilter.RowRange(b("r03"), true, b("r06"), false),
                        new MultiRowRangeFilter.RowRange(b("r21"), true, b("r23"), true))))));
        m.put("FilterList MUST_PASS_ONE", () -> new Scan().setFilter(new FilterList(
                FilterList.Operator.MUST_PASS_ONE, new PrefixFilter(b("r0")),
                new ValueFilter(CompareOperator.EQUAL, new BinaryComparator(b("x25"))))));
        m.put("FilterList MUST_PASS_ALL + limit", () -> new Scan().setLimit(3).setFilter(new FilterList(
                new ColumnPrefixFilter(b("a")), new ValueFilter(CompareOperator.NOT_EQUAL,
                new BinaryComparator(b("a-0"))))));
        return m;
    }

    private static List<String> describe(Iterable<Result> results) {
        List<String> out = new ArrayList<>();
        for (Result r : results) {
            StringBuilder s = new StringBuilder(Bytes.toString(r.getRow())).append(':');
            for (Cell c : r.rawCells()) {
                s.append(' ').append(Bytes.toString(c.getFamilyArray(), c.getFamilyOffset(), c.getFamilyLength()))
                        .append('/').append(Bytes.toString(c.getQualifierArray(), c.getQualifierOffset(),
                                c.getQualifierLength()))
                        .append('@').append(c.getTimestamp()).append('=')
                        .append(Bytes.toString(c.getValueArray(), c.getValueOffset(), c.getValueLength()));
            }
            out.add(s.toString());
        }
        return out;
    }

    private static List<String> raw(Scan scan) throws IOException {
        try (Table raw = MiniCluster.get().raw(name); ResultScanner s = raw.getScanner(scan)) {
            return describe(s);
        }
    }

    private static List<String> transactional(Transaction tx, Scan scan) throws IOException {
        try (ResultScanner s = t.getScanner(tx, scan)) {
            return describe(s);
        }
    }

    @Test
    void transactionalScansMatchPlainHBaseScansAndIgnoreLaterWrites() throws Exception {
        Map<String, List<String>> expected = new LinkedHashMap<>();
        for (Map.Entry<String, Supplier<Scan>> e : scans().entrySet()) {
            expected.put(e.getKey(), raw(e.getValue().get()));
            assertFalse(expected.get(e.getKey()).isEmpty(), e.getKey() + " should match something");
        }
        Transaction reader = tm.begin();
        for (Map.Entry<String, Supplier<Scan>> e : scans().entrySet()) {
            assertEquals(expected.get(e.getKey()), transactional(reader, e.getValue().get()), e.getKey());
        }
        // Others now write versions a server-side filter would trip over: uncommitted values that match or unmatch
        // the filters, a committed transaction that started before the reader, deletes, and new rows.
        Transaction startedBefore = writeThrough.begin();
        Transaction reader2 = tm.begin();
        Transaction uncommitted = writeThrough.begin();
        for (int i = 0; i < 30; i += 2) {
            String row = String.format("r%02d", i);
            t.put(uncommitted, new Put(b(row)).addColumn(CF, b("a"), b("a-3")).addColumn(CF2, b("x"), b("x25")));
            t.put(startedBefore, new Put(b(row)).addColumn(CF, b("b"), b("b-9")).addColumn(CF, b("z"), b("new")));
        }
        t.delete(uncommitted, new Delete(b("r01")));
        t.delete(startedBefore, new Delete(b("r03")));
        t.put(uncommitted, new Put(b("r055")).addColumn(CF, b("a"), b("a-3")));
        writeThrough.commit(startedBefore);
        for (Transaction tx : List.of(reader, reader2)) {
            for (Map.Entry<String, Supplier<Scan>> e : scans().entrySet()) {
                assertEquals(expected.get(e.getKey()), transactional(tx, e.getValue().get()), e.getKey());
            }
        }
        // Gets with filters follow the same rules.
        Get g = new Get(b("r06")).setFilter(new ColumnPrefixFilter(b("a")));
        try (Table raw = MiniCluster.get().raw(name)) {
            Result rawBefore = raw.get(new Get(b("r05")).setFilter(new ColumnPrefixFilter(b("a"))));
            assertEquals(describe(List.of(rawBefore)),
                    describe(List.of(t.get(reader, new Get(b("r05")).setFilter(new ColumnPrefixFilter(b("a")))))));
        }
        assertEquals("a-6", Bytes.toString(t.get(reader, g).getValue(CF, b("a"))));
        writeThrough.rollback(uncommitted);
        tm.commit(reader);
        tm.commit(reader2);
    }
}
