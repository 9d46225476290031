package io.sibyl.client;

import org.apache.hadoop.hbase.CompareOperator;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.filter.BinaryComparator;
import org.apache.hadoop.hbase.filter.BinaryPrefixComparator;
import org.apache.hadoop.hbase.filter.ByteArrayComparable;
import org.apache.hadoop.hbase.filter.ColumnPaginationFilter;
import org.apache.hadoop.hbase.filter.ColumnPrefixFilter;
import org.apache.hadoop.hbase.filter.ColumnRangeFilter;
import org.apache.hadoop.hbase.filter.Filter;
import org.apache.hadoop.hbase.filter.FilterList;
import org.apache.hadoop.hbase.filter.FirstKeyOnlyFilter;
import org.apache.hadoop.hbase.filter.KeyOnlyFilter;
import org.apache.hadoop.hbase.filter.PageFilter;
import org.apache.hadoop.hbase.filter.PrefixFilter;
import org.apache.hadoop.hbase.filter.QualifierFilter;
import org.apache.hadoop.hbase.filter.RegexStringComparator;
import org.apache.hadoop.hbase.filter.RowFilter;
import org.apache.hadoop.hbase.filter.SingleColumnValueFilter;
import org.apache.hadoop.hbase.filter.SubstringComparator;
import org.apache.hadoop.hbase.filter.ValueFilter;
import org.apache.hadoop.hbase.util.Bytes;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;

/**
 * Random rows, columns, values, {@link Get}s, {@link Scan}s and filters over one small key space, for reading the
 * same logical data through {@link TTable} and a plain HBase table. Everything comes from the given {@link Random}, so
 * a seed reproduces a run.
 */
final class RandomReadRequests {
    static final byte[][] FAMILIES = {Bytes.toBytes("f1"), Bytes.toBytes("f2"), Bytes.toBytes("f3")};
    /** Qualifiers, among them the empty one and prefixes of each other. */
    static final byte[][] QUALIFIERS = bytes("", "a", "ab", "b", "c1", "c10", "c2", "z");
    /** Values: a few, so that value filters match often; an empty one and a long one among them. */
    static final byte[][] VALUES = bytes("", "v0", "v1", "v2", "v3", "v33", "w", "x".repeat(300));
    /** Rows that are written (a dense run and keys that are prefixes of each other, one with a 0xff byte). */
    static final byte[][] ROWS;
    /** Rows never written, asked for by gets and used as scan bounds. */
    static final byte[][] MISSING_ROWS = bytes("aa", "q", "r025", "r99", "0");
    /** Row prefixes, for PrefixFilter and prefix scans. */
    private static final byte[][] ROW_PREFIXES = bytes("r0", "r1", "r2", "a", "ab", "b", "zz");
    private static final byte[][] QUALIFIER_PREFIXES = bytes("", "a", "c", "c1", "z", "y");
    private static final CompareOperator[] OPERATORS = {CompareOperator.EQUAL, CompareOperator.NOT_EQUAL,
            CompareOperator.LESS, CompareOperator.LESS_OR_EQUAL, CompareOperator.GREATER,
            CompareOperator.GREATER_OR_EQUAL};

    static {
        List<byte[]> rows = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            rows.add(Bytes.toBytes(String.format("r%02d", i)));
        }
        for (String s : List.of("a", "ab", "abc", "b", "r1", "r10x", "z")) {
            rows.add(Bytes.toBytes(s));
        }
        rows.add(new byte[] {'b', 0});
        rows.add(new byte[] {(byte) 0xff, 'x'});
        ROWS = rows.toArray(new byte[0][]);
    }

    private final Random rnd;
    /** Whether PageFilter may be used: only on a one-region table, where HBase applies it once (docs/data-model.md). */
    private final boolean pageFilter;

    RandomReadRequests(Random rnd, boolean pageFilter) {
        this.rnd = rnd;
        this.pageFilter = pageFilter;
    }

    private static byte[][] bytes(String... s) {
        byte[][] out = new byte[s.length][];
        for (int i = 0; i < s.length; i++) {
            out[i] = Bytes.toBytes(s[i]);
        }
        return out;
    }

    <T> T pick(T[] from) {
        return from[rnd.nextInt(from.length)];
    }

    /** A written row most of the time, else a row that never was. */
    byte[] row() {
        return rnd.nextInt(6) == 0 ? pick(MISSING_ROWS) : pick(ROWS);
    }

    /** A row of the first ten, which the writers pick often, so that they pile up versions. */
    byte[] hotRow() {
        return ROWS[rnd.nextInt(10)];
    }

    byte[] family() {
        // f3 is rarely written, so families are missing from many rows.
        return rnd.nextInt(5) == 0 ? FAMILIES[2] : FAMILIES[rnd.nextInt(2)];
    }

    byte[] qualifier() {
        return pick(QUALIFIERS);
    }

    byte[] value() {
        return pick(VALUES);
    }

    boolean chance(int percent) {
        return rnd.nextInt(100) < percent;
    }

    int between(int low, int high) {
        return low + rnd.nextInt(high - low + 1);
    }

    /** A random Get: columns, filter, per-family limit and offset, sometimes existence only. */
    Get get() {
        Get g = new Get(row());
        int selection = rnd.nextInt(4);
        for (int i = 0; i < selection; i++) {
            if (chance(40)) {
                g.addFamily(family());
            } else {
                g.addColumn(family(), qualifier());
            }
        }
        if (chance(50)) {
            g.setFilter(filter(2));
        }
        if (chance(15)) {
            g.setMaxResultsPerColumnFamily(between(0, 3));
        }
        if (chance(15)) {
            g.setRowOffsetPerColumnFamily(between(0, 3));
        }
        if (chance(10)) {
            g.setCheckExistenceOnly(true);
        }
        return g;
    }

    /** A random Scan: range, direction, columns, limits, caching, batching, partial results and a filter. */
    Scan scan() {
        Scan s = new Scan();
        int selection = chance(50) ? 0 : rnd.nextInt(4);
        for (int i = 0; i < selection; i++) {
            if (chance(40)) {
                s.addFamily(family());
            } else {
                s.addColumn(family(), qualifier());
            }
        }
        if (chance(10)) {
            s.setStartStopRowForPrefixScan(pick(ROW_PREFIXES));
        } else {
            if (chance(50)) {
                s.withStartRow(chance(80) ? pick(ROWS) : pick(MISSING_ROWS), chance(70));
            }
            if (chance(50)) {
                s.withStopRow(chance(80) ? pick(ROWS) : pick(MISSING_ROWS), chance(30));
            }
        }
        if (chance(30)) {
            s.setReversed(true);
        }
        if (chance(50)) {
            s.setFilter(filter(2));
        }
        if (chance(25)) {
            s.setLimit(between(1, 12));
        }
        if (chance(25)) {
            s.setCaching(between(1, 5));
        }
        if (chance(20) && !(s.hasFilter() && s.getFilter().hasFilterRow())) {
            s.setBatch(between(1, 4)); // HBase refuses a batch with a filter that judges whole rows
        }
        if (chance(20)) {
            s.setAllowPartialResults(true);
        }
        if (chance(20)) {
            s.setMaxResultSize(chance(50) ? 1 : between(20, 400));
        }
        if (chance(15)) {
            s.setMaxResultsPerColumnFamily(between(0, 3));
        }
        if (chance(15)) {
            s.setRowOffsetPerColumnFamily(between(0, 3));
        }
        return s;
    }

    /** A random filter, a FilterList of up to {@code depth} levels among them. */
    Filter filter(int depth) {
        int kinds = depth > 0 ? 14 : 13;
        switch (rnd.nextInt(kinds)) {
            case 0:
            case 1: {
                SingleColumnValueFilter f = new SingleColumnValueFilter(family(), qualifier(), pick(OPERATORS),
                        comparator());
                f.setFilterIfMissing(chance(50));
                return f;
            }
            case 2:
                return new PrefixFilter(pick(ROW_PREFIXES));
            case 3:
                return new ColumnPrefixFilter(pick(QUALIFIER_PREFIXES));
            case 4:
                return new QualifierFilter(pick(OPERATORS), new BinaryComparator(qualifier()));
            case 5:
                return new ValueFilter(pick(OPERATORS), comparator());
            case 6:
                return new FirstKeyOnlyFilter();
            case 7:
                return new KeyOnlyFilter(chance(50));
            case 8:
                return pageFilter ? new PageFilter(between(1, 8)) : new FirstKeyOnlyFilter();
            case 9:
                return new RowFilter(pick(OPERATORS), new BinaryComparator(row()));
            case 10:
                return new RowFilter(CompareOperator.EQUAL, new RegexStringComparator("r[0-2][13579]|a.*"));
            case 11:
                return new ColumnPaginationFilter(between(1, 3), between(0, 2));
            case 12:
                return new ColumnRangeFilter(qualifier(), chance(50), qualifier(), chance(50));
            default: {
                FilterList.Operator op = chance(50) ? FilterList.Operator.MUST_PASS_ALL
                        : FilterList.Operator.MUST_PASS_ONE;
                List<Filter> parts = new ArrayList<>();
                for (int i = between(1, 3); i > 0; i--) {
                    parts.add(filter(depth - 1));
                }
                return new FilterList(op, parts);
            }
        }
    }

    private ByteArrayComparable comparator() {
        return switch (rnd.nextInt(3)) {
            case 0 -> new SubstringComparator(chance(50) ? "v" : "3");
            case 1 -> new BinaryPrefixComparator(Bytes.toBytes("v"));
            default -> new BinaryComparator(value());
        };
    }
}
