package io.sibyl.client;

import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Consistency;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A randomized differential test: random data is written through {@link TTable} in many transactions (several
 * families, qualifiers, rows with many versions, transactional deletes of columns, families and rows, rolled-back
 * transactions, transactions left open), and the same logical state is written with plain puts into a plain table.
 * Random gets, multi-gets, exists and scans (column selections, ranges, reversed, limits, caching, batching, partial
 * results, per-family limits and offsets, filters) must then return in a fresh transaction exactly what HBase returns
 * from the plain table: the same rows, cells (row, family, qualifier, value, type), order and {@link Result} flags,
 * with each cell's timestamp the start timestamp of the transaction that wrote it. The same holds with the reading
 * transaction's own uncommitted writes mixed in (the plain table then holds them too), while a transaction that
 * committed after the reader began stays invisible. Options TTable refuses (time ranges, versions, raw scans) fail
 * with the documented {@code IllegalArgumentException} and leave the transaction usable.
 *
 * <p>The seed is printed and named in every failure; rerun with {@code -Dsibyl.test.seed=N}.
 */
@ExtendWith(MiniCluster.class)
class ReadsLookLikeHBaseTest {
    private static final long SEED = Long.getLong("sibyl.test.seed", new Random().nextLong());
    private static final String[] FAMILY_NAMES = {"f1", "f2", "f3"};
    private static final byte[][] SPLITS = {Bytes.toBytes("b"), Bytes.toBytes("r15")};
    private static TransactionManager tm;
    /** Sends every write to HBase at once, so that aborted and open transactions leave versions there. */
    private static TransactionManager writeThrough;
    /** Fetches one version per column first, so that reads past invisible versions need follow-up fetches. */
    private static TransactionManager shallow;
    /** A small write buffer: some of a transaction's writes are in HBase, the rest still buffered. */
    private static TransactionManager smallBuffer;
    private static Dataset split;
    private static Dataset single;
    private static final List<Transaction> LEFT_OPEN = new ArrayList<>();

    /** One transactional table, its committed logical state, and how it is split. */
    private static final class Dataset {
        final String label;
        final byte[][] splits;
        final TableName name;
        final TTable table;
        LogicalRows committed = new LogicalRows();

        Dataset(String label, byte[][] splits) throws IOException {
            this.label = label;
            this.splits = splits;
            this.name = MiniCluster.get().createTable(label, splits, FAMILY_NAMES);
            this.table = new TTable(MiniCluster.get().connection(), name);
        }
    }

    @BeforeAll
    static void writeRandomHistories() throws Exception {
        System.out.println("ReadsLookLikeHBaseTest seed " + SEED + " (rerun with -Dsibyl.test.seed=" + SEED + ")");
        MiniCluster c = MiniCluster.get();
        tm = c.manager();
        writeThrough = c.manager(Map.of(TransactionManager.WRITE_BUFFER_BYTES, "0"));
        shallow = c.manager(Map.of(TransactionManager.READ_VERSIONS, "1"));
        smallBuffer = c.manager(Map.of(TransactionManager.WRITE_BUFFER_BYTES, "400"));
        split = new Dataset("diffsplit", SPLITS);
        single = new Dataset("diffsingle", null);
        Random rnd = new Random(SEED);
        for (Dataset d : List.of(split, single)) {
            RandomReadRequests r = new RandomReadRequests(rnd, d.splits == null);
            for (int i = 0; i < 16; i++) {
                TransactionManager m = r.chance(50) ? tm : writeThrough;
                Transaction tx = m.begin();
                LogicalRows view = d.committed.copy();
                writeRandomly(d.table, tx, view, r, r.between(4, 20));
                if (r.chance(20)) {
                    m.rollback(tx);
                } else {
                    m.commit(tx);
                    d.committed = view;
                }
            }
            // Versions of transactions that never finish: newer than every snapshot, and invisible to all of them.
            for (int i = 0; i < 2; i++) {
                Transaction open = writeThrough.begin();
                writeRandomly(d.table, open, d.committed.copy(), r, 8);
                LEFT_OPEN.add(open);
            }
            System.out.printf("%s: %d rows, %d cells%n", d.label, d.committed.rowCount(), d.committed.cellCount());
        }
    }

    @AfterAll
    static void close() {
        for (Transaction open : LEFT_OPEN) {
            writeThrough.rollback(open);
        }
        split.table.close();
        single.table.close();
        tm.close();
        writeThrough.close();
        shallow.close();
        smallBuffer.close();
    }

    /** Random puts and transactional deletes in {@code tx}, applied to {@code view} as well. */
    private static void writeRandomly(TTable t, Transaction tx, LogicalRows view, RandomReadRequests r, int operations)
            throws IOException {
        long ts = tx.getStartTimestamp();
        for (int i = 0; i < operations; i++) {
            byte[] row = r.chance(50) ? r.hotRow() : r.pick(RandomReadRequests.ROWS);
            int kind = r.between(0, 9);
            if (kind <= 5) {
                Put p = new Put(row);
                for (int k = r.between(1, 4); k > 0; k--) {
                    byte[] f = r.family();
                    byte[] q = r.qualifier();
                    byte[] v = r.value();
                    p.addColumn(f, q, v);
                    view.put(row, f, q, v, ts);
                }
                t.put(tx, p);
            } else if (kind == 6) {
                byte[] f = r.family();
                byte[] q = r.qualifier();
                Delete d = new Delete(row);
                if (r.chance(50)) {
                    d.addColumn(f, q);
                } else {
                    d.addColumns(f, q);
                }
                t.delete(tx, d);
                view.deleteColumn(row, f, q);
            } else if (kind == 7) {
                byte[] f = r.family();
                t.delete(tx, new Delete(row).addFamily(f));
                view.deleteFamily(row, f);
            } else if (kind == 8) {
                t.delete(tx, new Delete(row));
                view.deleteRow(row);
            } else {
                byte[] f = r.family();
                byte[] f2 = r.family();
                byte[] q = r.qualifier();
                t.delete(tx, new Delete(row).addFamily(f).addColumns(f2, q));
                view.deleteFamily(row, f);
                view.deleteColumn(row, f2, q);
            }
        }
    }

    /** A plain table (split as the dataset's) holding exactly {@code state}, one version per cell. */
    private static Table plainCopy(Dataset d, LogicalRows state) throws IOException {
        MiniCluster c = MiniCluster.get();
        Table plain = c.raw(c.createTable(d.label + "_plain", d.splits, FAMILY_NAMES));
        state.writeTo(plain);
        return plain;
    }

    @Test
    void randomReadsOfCommittedDataInFreshTransactionsMatchPlainHBaseOnTheSameLogicalState() throws Exception {
        Random rnd = new Random(SEED + 1);
        for (Dataset d : List.of(split, single)) {
            try (Table plain = plainCopy(d, d.committed)) {
                RandomReadRequests r = new RandomReadRequests(rnd, d.splits == null);
                Reads reads = new Reads(d, plain, d.committed, r);
                for (int i = 0; i < 250; i++) {
                    TransactionManager m = i % 2 == 0 ? tm : shallow;
                    Transaction reader = m.begin();
                    reads.compareOne(reader, d.label + " request " + i);
                    m.commit(reader);
                }
                reads.assertNoDifferences();
            }
        }
    }

    @Test
    void randomReadsMixingTheTransactionsOwnWritesMatchPlainHBaseWithThoseWritesApplied() throws Exception {
        Random rnd = new Random(SEED + 2);
        for (Dataset d : List.of(split, single)) {
            RandomReadRequests r = new RandomReadRequests(rnd, d.splits == null);
            for (TransactionManager m : List.of(smallBuffer, writeThrough)) {
                // A transaction that commits after the reader began: the reader must not see it.
                LogicalRows before = d.committed;
                Transaction later = writeThrough.begin();
                LogicalRows laterView = before.copy();
                writeRandomly(d.table, later, laterView, r, 10);
                Transaction own = m.begin();
                writeThrough.commit(later);
                d.committed = laterView;
                try {
                    LogicalRows ownView = before.copy();
                    writeRandomly(d.table, own, ownView, r, r.between(10, 25));
                    try (Table plain = plainCopy(d, ownView)) {
                        Reads reads = new Reads(d, plain, ownView, r);
                        for (int i = 0; i < 120; i++) {
                            reads.compareOne(own, d.label + " own writes (" + (m == writeThrough ? "sent" : "partly"
                                    + " buffered") + ") request " + i);
                        }
                        reads.assertNoDifferences();
                    }
                } finally {
                    m.rollback(own);
                }
            }
        }
    }

    /** Runs random read requests through a TTable and a plain table and compares what they return. */
    private static final class Reads {
        private final Dataset d;
        private final Table plain;
        private final LogicalRows state;
        private final RandomReadRequests r;
        private final List<String> differences = new ArrayList<>();

        Reads(Dataset d, Table plain, LogicalRows state, RandomReadRequests r) {
            this.d = d;
            this.plain = plain;
            this.state = state;
            this.r = r;
        }

        /** One random request in {@code tx}; a difference is recorded with the request and both answers. */
        void compareOne(Transaction tx, String context) throws IOException {
            int kind = r.between(0, 11);
            if (r.chance(3)) {
                refusedOption(tx, context);
                return;
            }
            if (kind <= 3) {
                Get g = r.get();
                compare(context, "get " + request(g),
                        () -> describe(plain.get(plainCopy(g)), false),
                        () -> describe(d.table.get(tx, new Get(g)), true));
            } else if (kind == 4) {
                List<Get> gets = new ArrayList<>();
                for (int k = r.between(1, 5); k > 0; k--) {
                    gets.add(r.get());
                }
                compare(context, "multi-get " + describeGets(gets),
                        () -> describe(plain.get(plainCopies(gets)), false),
                        () -> describe(d.table.get(tx, copies(gets)), true));
            } else if (kind == 5) {
                Get g = r.get();
                compare(context, "exists " + request(g),
                        () -> String.valueOf(plain.exists(plainCopy(g))),
                        () -> String.valueOf(d.table.exists(tx, new Get(g))));
            } else if (kind == 6) {
                List<Get> gets = new ArrayList<>();
                for (int k = r.between(1, 5); k > 0; k--) {
                    gets.add(r.get());
                }
                compare(context, "exists(List) " + describeGets(gets),
                        () -> Arrays.toString(plain.exists(plainCopies(gets))),
                        () -> Arrays.toString(d.table.exists(tx, copies(gets))));
            } else {
                Scan s = r.scan();
                // A region server also counts heap size when it cuts partial results, so for a size limit above one
                // cell its pieces can be smaller (docs/data-model.md): then compare the rows the pieces make up.
                boolean stitch = s.getAllowPartialResults() && s.getMaxResultSize() > 1
                        && !(s.hasFilter() && s.getFilter().hasFilterRow());
                // HBase marks a piece "may have more cells" when the store still holds cells of the row, also ones
                // the filter, column selection or per-family limit will drop; TTable marks only pieces that more of
                // the row follows (docs/data-model.md). Where the two can differ, compare the flag of pieces that
                // more of their row does follow, and require TTable's flag to be exact.
                boolean exactFlag = !s.hasFilter() && !s.hasFamilies() && s.getMaxResultsPerColumnFamily() < 0
                        && s.getRowOffsetPerColumnFamily() <= 0;
                // A row limit counts rows, also when they come in pieces; HBase's own client miscounts rows cut
                // into pieces across calls (its "assert newLimit >= 0" in ClientScanner fails, or it stops early),
                // so then the expected answer is the unlimited plain scan's first rows.
                int rowLimit = s.getLimit() > 0 && (s.getBatch() > 0 || s.getAllowPartialResults()) ? s.getLimit()
                        : -1;
                compare(context, "scan " + request(s) + (stitch ? " (pieces stitched)" : ""),
                        () -> {
                            Scan unlimited = new Scan(s).setLoadColumnFamiliesOnDemand(false);
                            if (rowLimit > 0) {
                                unlimited.setLimit(-1);
                            }
                            try (ResultScanner rs = plain.getScanner(unlimited)) {
                                return describe(firstRows(rs, rowLimit), stitch, exactFlag, false);
                            }
                        },
                        () -> {
                            try (ResultScanner rs = d.table.getScanner(tx, new Scan(s))) {
                                return describe(firstRows(rs, -1), stitch, exactFlag, true);
                            }
                        });
            }
        }

        /** A read with an option TTable refuses by design (docs/data-model.md) fails at once with the reason. */
        private void refusedOption(Transaction tx, String context) {
            byte[] row = r.row();
            int which = r.between(0, 7);
            IllegalArgumentException e = assertThrows(
                    IllegalArgumentException.class, () -> {
                        switch (which) {
                            case 0 -> d.table.get(tx, new Get(row).setTimeRange(0, 100));
                            case 1 -> d.table.get(tx, new Get(row).setTimestamp(7));
                            case 2 -> d.table.get(tx, new Get(row).readVersions(2));
                            case 3 -> d.table.get(tx, new Get(row).setConsistency(Consistency.TIMELINE));
                            case 4 -> d.table.getScanner(tx, new Scan().setTimeRange(0, 100)).close();
                            case 5 -> d.table.getScanner(tx, new Scan().setRaw(true)).close();
                            case 6 -> d.table.getScanner(tx, new Scan().readAllVersions()).close();
                            default -> d.table.getScanner(tx,
                                    new Scan().setColumnFamilyTimeRange(RandomReadRequests.FAMILIES[0], 0, 9)).close();
                        }
                    }, seed(context) + ": refused option " + which);
            String m = e.getMessage();
            assertTrue(m.contains("time range") || m.contains("version") || m.contains("raw")
                    || m.contains("primary region"), seed(context) + ": the refusal says why: " + m);
        }

        private void compare(String context, String request, IoSupplier expected, IoSupplier actual) {
            String want;
            try {
                want = expected.get();
            } catch (IOException | RuntimeException e) {
                // HBase refused the request: TTable must refuse it too.
                try {
                    String got = actual.get();
                    differences.add(context + ": " + request + "\n  HBase failed with " + e + "\n  TTable returned "
                            + got);
                } catch (IOException | RuntimeException expectedToo) {
                    return;
                }
                return;
            }
            String got;
            try {
                got = actual.get();
            } catch (IOException | RuntimeException e) {
                throw new AssertionError(seed(context) + ": " + request + ": TTable failed where HBase returned "
                        + want, e);
            }
            if (!want.equals(got)) {
                differences.add(context + ": " + request + "\n  HBase:\n" + want + "  TTable:\n" + got);
            }
        }

        /** Fails listing every difference found (the first few in full), naming the seed. */
        void assertNoDifferences() {
            if (differences.isEmpty()) {
                return;
            }
            StringBuilder s = new StringBuilder("seed " + SEED + " (rerun with -Dsibyl.test.seed=" + SEED + "): "
                    + differences.size() + " requests read differently through TTable and plain HBase:\n");
            for (int i = 0; i < differences.size(); i++) {
                String diff = differences.get(i);
                s.append(i < 3 ? diff : diff.substring(0, diff.indexOf('\n'))).append('\n');
            }
            fail(s.toString());
        }

        /** The results of the first {@code rows} rows (all of them if {@code rows} is not positive). */
        private static List<Result> firstRows(ResultScanner rs, int rows) throws IOException {
            List<Result> results = new ArrayList<>();
            int seen = 0;
            byte[] last = null;
            for (Result res : rs) {
                if (last == null || !Bytes.equals(last, res.getRow())) {
                    if (rows > 0 && seen == rows) {
                        break;
                    }
                    seen++;
                    last = res.getRow();
                }
                results.add(res);
            }
            return results;
        }

        private String describe(List<Result> results, boolean stitch, boolean exactFlag, boolean transactional) {
            for (int i = 0; i < results.size(); i++) {
                Result res = results.get(i);
                boolean more = i + 1 < results.size() && Bytes.equals(res.getRow(), results.get(i + 1).getRow());
                if (transactional) {
                    assertEquals(more, res.mayHaveMoreCellsInRow(), "seed " + SEED + ": TTable's piece " + i
                            + " of row " + Bytes.toStringBinary(res.getRow()) + " says whether more of it follows");
                } else if (!exactFlag && res.mayHaveMoreCellsInRow() && !more) {
                    results.set(i, Result.create(res.rawCells(), res.getExists(), res.isStale(), false));
                }
            }
            if (stitch) {
                List<Result> whole = new ArrayList<>();
                List<Cell> pending = new ArrayList<>();
                for (Result res : results) {
                    pending.addAll(Arrays.asList(res.rawCells()));
                    if (!res.mayHaveMoreCellsInRow()) {
                        whole.add(Result.create(pending));
                        pending = new ArrayList<>();
                    }
                }
                if (!pending.isEmpty()) {
                    whole.add(Result.create(pending, null, false, true));
                }
                results = whole;
            }
            return describe(results.toArray(new Result[0]), transactional);
        }

        private String describe(Result[] results, boolean transactional) {
            StringBuilder s = new StringBuilder();
            for (Result res : results) {
                s.append(describe(res, transactional)).append('\n');
            }
            return s.toString();
        }

        /**
         * What a caller sees of a result: row, cells (family, qualifier, value, type; the timestamp only checked
         * against its writer), emptiness, existence, partial-row flag, and getValue of every column.
         */
        private String describe(Result res, boolean transactional) {
            StringBuilder s = new StringBuilder();
            s.append("row=").append(res.getRow() == null ? "null" : Bytes.toStringBinary(res.getRow()))
                    .append(" empty=").append(res.isEmpty()).append(" size=").append(res.size())
                    .append(" exists=").append(res.getExists())
                    .append(" partial=").append(res.mayHaveMoreCellsInRow())
                    .append(" stale=").append(res.isStale())
                    .append(" cursor=").append(res.isCursor());
            Cell[] cells = res.rawCells();
            s.append(" listCells=").append(res.listCells() == null ? "null" : "list");
            if (cells == null) {
                s.append(" cells=null");
            } else {
                s.append(" cells=[");
                for (Cell c : cells) {
                    s.append(' ').append(Bytes.toStringBinary(CellUtil.cloneRow(c))).append('/')
                            .append(Bytes.toStringBinary(CellUtil.cloneFamily(c))).append(':')
                            .append(Bytes.toStringBinary(CellUtil.cloneQualifier(c))).append('=')
                            .append(Bytes.toStringBinary(CellUtil.cloneValue(c))).append(' ').append(c.getType());
                    if (transactional) {
                        checkWriter(c);
                    }
                }
                s.append(" ]");
            }
            // Result.getValue searches the cells: every column of the key space, to catch cells out of order.
            s.append(" getValue:");
            for (byte[] f : RandomReadRequests.FAMILIES) {
                for (byte[] q : RandomReadRequests.QUALIFIERS) {
                    byte[] v = res.getValue(f, q);
                    if (v != null || res.containsColumn(f, q)) {
                        s.append(' ').append(Bytes.toString(f)).append(':').append(Bytes.toString(q)).append('=')
                                .append(v == null ? "null" : Bytes.toStringBinary(v));
                    }
                }
            }
            return s.toString();
        }

        /** A transactional cell's timestamp is the start timestamp of the transaction whose value it carries. */
        private void checkWriter(Cell c) {
            LogicalRows.Written w = state.at(CellUtil.cloneRow(c), CellUtil.cloneFamily(c),
                    CellUtil.cloneQualifier(c));
            if (w == null) {
                fail("seed " + SEED + ": TTable returned a cell the logical state does not hold: " + c);
            }
            assertEquals(w.writer(), c.getTimestamp(), "seed " + SEED + ": timestamp of " + c
                    + " should be its writer's start timestamp");
        }
    }

    private interface IoSupplier {
        String get() throws IOException;
    }

    /**
     * The request for the plain table, with loading column families on demand off: TTable filters whole rows on the
     * client, as a region server does without that optimization (docs/data-model.md), which otherwise refuses a
     * reversed scan with a SingleColumnValueFilter and drops a row whose filter family a per-family offset empties.
     */
    private static Get plainCopy(Get g) {
        return new Get(g).setLoadColumnFamiliesOnDemand(false);
    }

    private static List<Get> plainCopies(List<Get> gets) {
        List<Get> out = new ArrayList<>(gets.size());
        for (Get g : gets) {
            out.add(plainCopy(g));
        }
        return out;
    }

    private static List<Get> copies(List<Get> gets) {
        List<Get> out = new ArrayList<>(gets.size());
        for (Get g : gets) {
            out.add(new Get(g));
        }
        return out;
    }

    private static String describeGets(List<Get> gets) {
        StringBuilder s = new StringBuilder("[");
        for (Get g : gets) {
            s.append(request(g)).append("; ");
        }
        return s.append(']').toString();
    }

    private static String request(Get g) {
        return g + " filter=" + g.getFilter() + " maxPerFamily=" + g.getMaxResultsPerColumnFamily()
                + " offsetPerFamily=" + g.getRowOffsetPerColumnFamily() + " existenceOnly="
                + g.isCheckExistenceOnly();
    }

    private static String request(Scan s) {
        return s + " filter=" + s.getFilter() + " startInclusive=" + s.includeStartRow() + " stopInclusive="
                + s.includeStopRow() + " limit=" + s.getLimit() + " caching=" + s.getCaching() + " batch="
                + s.getBatch() + " partial=" + s.getAllowPartialResults() + " maxResultSize=" + s.getMaxResultSize()
                + " maxPerFamily=" + s.getMaxResultsPerColumnFamily() + " offsetPerFamily="
                + s.getRowOffsetPerColumnFamily();
    }

    private static String seed(String context) {
        return "seed " + SEED + " (-Dsibyl.test.seed=" + SEED + "), " + context;
    }
}
