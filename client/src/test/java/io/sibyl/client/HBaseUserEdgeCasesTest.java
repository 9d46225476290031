package io.sibyl.client;

import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.CompareOperator;
import org.apache.hadoop.hbase.client.Append;
import org.apache.hadoop.hbase.client.CheckAndMutate;
import org.apache.hadoop.hbase.client.CheckAndMutateResult;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Durability;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Increment;
import org.apache.hadoop.hbase.client.Mutation;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.RowMutations;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.filter.FilterList;
import org.apache.hadoop.hbase.filter.IncompatibleFilterException;
import org.apache.hadoop.hbase.filter.KeyOnlyFilter;
import org.apache.hadoop.hbase.filter.PageFilter;
import org.apache.hadoop.hbase.filter.SingleColumnValueFilter;
import org.apache.hadoop.hbase.security.access.Permission;
import org.apache.hadoop.hbase.security.visibility.CellVisibility;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.sibyl.client.TestSupport.CF;
import static io.sibyl.client.TestSupport.V;
import static io.sibyl.client.TestSupport.b;
import static io.sibyl.client.TestSupport.get;
import static io.sibyl.client.TestSupport.put;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Edge cases an HBase user tries on a {@link TTable}, each held against what a plain {@code Table} does: results of
 * the same shape (partial rows, null results), and where HBase refuses an operation at once and leaves the table as
 * it was, a refusal at once that leaves the transaction usable; what cannot be carried (cell TTLs, ACLs, labels) is
 * refused rather than dropped.
 */
@ExtendWith(MiniCluster.class)
class HBaseUserEdgeCasesTest {
    /** HBase's client-side cell size limit ({@code hbase.client.keyvalue.maxsize}), small to keep the test light. */
    private static final int MAX_CELL = 64 * 1024;
    private static TransactionManager tm;

    @BeforeAll
    static void setUp() throws IOException {
        tm = MiniCluster.get().manager(Map.of("hbase.client.keyvalue.maxsize", Integer.toString(MAX_CELL)));
    }

    @AfterAll
    static void close() {
        tm.close();
    }

    private static TTable table(String prefix, String... families) throws IOException {
        MiniCluster c = MiniCluster.get();
        return new TTable(tm.getConnection(), c.createTable(prefix, families));
    }

    /**
     * {@code Table.put} of a cell over {@code hbase.client.keyvalue.maxsize} throws IllegalArgumentException before
     * anything is sent. A buffered put must do the same when it is made, not fail the transaction's commit later (or
     * make it roll-back-only at the next flush) for a put the caller already saw refused.
     */
    @Test
    void aCellOverHBasesSizeLimitIsRefusedAtThePutAndTheTransactionCarriesOn() throws Exception {
        try (TTable t = table("bigcell", "cf")) {
            Transaction tx = tm.begin();
            put(t, tx, "small", "kept");
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> t.put(tx, new Put(b("big")).addColumn(CF, V, new byte[MAX_CELL + 1])));
            assertTrue(e.getMessage().contains("KeyValue size too large"), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> t.mutateRow(tx, RowMutations.of(List.of(
                    new Put(b("big")).addColumn(CF, b("w"), b("fine")),
                    new Put(b("big")).addColumn(CF, V, new byte[MAX_CELL + 1])))));
            assertEquals("kept", get(t, tx, "small"), "the transaction is still usable");
            assertTrue(t.get(tx, new Get(b("big"))).isEmpty(), "nothing of the refused puts was buffered");
            put(t, tx, "after", "also kept");
            tm.commit(tx);
            Transaction r = tm.begin();
            assertEquals("kept", get(t, r, "small"));
            assertEquals("also kept", get(t, r, "after"));
            assertTrue(t.get(r, new Get(b("big"))).isEmpty());
            tm.commit(r);
        }
    }

    /**
     * HBase cannot cut a row into batches when its filter decides on the whole row ({@code hasFilterRow}: a
     * SingleColumnValueFilter, PageFilter, ...): {@code Scan.setBatch} refuses such a filter, and a scan given the
     * filter after the batch is refused by the region server. The transactional scan must not return partial rows
     * that the filter judged as a whole.
     */
    @Test
    void aBatchedScanWithAFilterThatJudgesWholeRowsIsRefusedAsHBaseRefusesIt() throws Exception {
        try (TTable t = table("batchrowfilter", "cf")) {
            Transaction tx = tm.begin();
            Put wide = new Put(b("wide"));
            for (int i = 0; i < 5; i++) {
                wide.addColumn(CF, b("c" + i), b("v" + i));
            }
            t.put(tx, wide);
            SingleColumnValueFilter scvf = new SingleColumnValueFilter(CF, b("c1"), CompareOperator.EQUAL, b("v1"));
            assertThrows(IncompatibleFilterException.class,
                    () -> t.getScanner(tx, new Scan().setBatch(2).setFilter(scvf)).close());
            assertThrows(IncompatibleFilterException.class, () -> t.getScanner(tx, new Scan().setBatch(2)
                    .setFilter(new FilterList(new KeyOnlyFilter(), new PageFilter(1)))).close());
            // A filter that judges cell by cell batches as before.
            try (ResultScanner s = t.getScanner(tx, new Scan().setBatch(2).setFilter(new KeyOnlyFilter()))) {
                assertEquals(List.of(2, 2, 1), sizes(s));
            }
            tm.commit(tx);
        }
    }

    /**
     * A cell TTL, a cell ACL or a visibility label changes what plain HBase stores and who can read it. A transactional
     * write cannot carry them (cell versions are transaction timestamps, not wall-clock time, and the buffered writes
     * are sent as new puts), so they must be refused, not dropped: a dropped ACL or label would leave the cell readable
     * by everyone, a dropped TTL keep it for ever.
     */
    @Test
    void cellTtlAclAndVisibilityLabelsAreRefusedInsteadOfSilentlyDropped() throws Exception {
        try (TTable t = table("cellattrs", "cf")) {
            Transaction tx = tm.begin();
            List<Mutation> refused = List.of(
                    new Put(b("r")).addColumn(CF, V, b("x")).setTTL(1000),
                    new Put(b("r")).addColumn(CF, V, b("x")).setACL("bob", new Permission(Permission.Action.READ)),
                    new Put(b("r")).addColumn(CF, V, b("x")).setCellVisibility(new CellVisibility("secret")),
                    new Delete(b("r")).setCellVisibility(new CellVisibility("secret")),
                    new Increment(b("r")).addColumn(CF, b("n"), 1).setTTL(1000),
                    new Append(b("r")).addColumn(CF, b("s"), b("x")).setACL("bob",
                            new Permission(Permission.Action.READ)));
            for (Mutation m : refused) {
                IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                        () -> t.batch(tx, List.of(m)), m.toString());
                assertTrue(e.getMessage().contains("not supported"), e.getMessage());
            }
            assertThrows(IllegalArgumentException.class,
                    () -> t.put(tx, new Put(b("r")).addColumn(CF, V, b("x")).setTTL(1000)));
            assertThrows(IllegalArgumentException.class, () -> t.checkAndMutate(tx, CheckAndMutate.newBuilder(b("r"))
                    .ifNotExists(CF, V).build(new Put(b("r")).addColumn(CF, V, b("x")).setTTL(1000))));
            assertTrue(tx.isReadOnly(), "nothing of the refused writes joined the transaction");
            // Durability is not a property of the data: a put asking for one is accepted (sent with the table's).
            t.put(tx, new Put(b("r")).addColumn(CF, V, b("kept")).setDurability(Durability.SKIP_WAL));
            tm.commit(tx);
            Transaction r = tm.begin();
            assertEquals("kept", get(t, r, "r"));
            tm.commit(r);
        }
    }

    /**
     * With {@code setAllowPartialResults(true)} HBase hands a row over in pieces once a piece reaches
     * {@code setMaxResultSize}, each but the last marked {@code mayHaveMoreCellsInRow}: with a tiny size, one cell at
     * a time. The transactional scan cuts its resolved rows the same way (own writes and deletes included), and
     * still returns whole rows without the flag, or with a size no row reaches.
     */
    @Test
    void partialResultsAllowedWithATinyMaxResultSizeComeBackCellByCellAsInHBase() throws Exception {
        MiniCluster c = MiniCluster.get();
        try (TTable t = table("partials", "cf", "cf2");
             Table plain = c.raw(c.createTable("partials_plain", "cf", "cf2"))) {
            Transaction init = tm.begin();
            for (String row : List.of("a", "b", "c")) {
                Put p = new Put(b(row)).addColumn(CF, b("q1"), b(row + "1")).addColumn(CF, b("q2"), b(row + "2"))
                        .addColumn(b("cf2"), b("x"), b(row + "x"));
                t.put(init, p);
                plain.put(p);
            }
            tm.commit(init);
            Transaction tx = tm.begin();
            Put own = new Put(b("b")).addColumn(CF, b("q0"), b("own")).addColumn(b("cf2"), b("y"), b("own"));
            t.put(tx, own);
            plain.put(own);
            t.delete(tx, new Delete(b("c")).addColumn(CF, b("q2")));
            plain.delete(new Delete(b("c")).addColumns(CF, b("q2")));
            for (Scan scan : List.of(new Scan().setAllowPartialResults(true).setMaxResultSize(1),
                    new Scan().setAllowPartialResults(true).setMaxResultSize(1).setReversed(true),
                    new Scan().setAllowPartialResults(true).setMaxResultSize(1).addFamily(b("cf2")),
                    new Scan().setAllowPartialResults(true).setMaxResultSize(1).setLimit(2),
                    new Scan().setAllowPartialResults(true).setMaxResultSize(1).setBatch(2),
                    new Scan().setAllowPartialResults(true),
                    new Scan().setMaxResultSize(1))) {
                List<String> expected;
                try (ResultScanner s = plain.getScanner(new Scan(scan))) {
                    expected = pieces(s);
                }
                try (ResultScanner s = t.getScanner(tx, new Scan(scan))) {
                    assertEquals(expected, pieces(s), scan.toString());
                }
            }
            tm.commit(tx);
        }
    }

    /**
     * {@code CheckAndMutateResult.getResult()} is null for an action that returns no values: a put, a delete, and a
     * {@code RowMutations} of only puts and deletes (HBase returns values only for increments and appends in it).
     */
    @Test
    void aCheckAndMutateOfRowMutationsWithoutIncrementsOrAppendsHasNoResultAsInHBase() throws Exception {
        MiniCluster c = MiniCluster.get();
        try (TTable t = table("camrm", "cf");
             Table plain = c.raw(c.createTable("camrm_plain", "cf"))) {
            Transaction tx = tm.begin();
            Put init = new Put(b("r")).addColumn(CF, V, b("1")).addColumn(CF, b("old"), b("x"));
            t.put(tx, init);
            plain.put(init);
            List<CheckAndMutate> checks = List.of(
                    CheckAndMutate.newBuilder(b("r")).ifEquals(CF, V, b("1")).build(RowMutations.of(List.of(
                            new Put(b("r")).addColumn(CF, b("w"), b("1")), new Delete(b("r")).addColumns(CF, b("old"))))),
                    CheckAndMutate.newBuilder(b("r")).ifEquals(CF, V, b("1")).build(RowMutations.of(List.of(
                            new Put(b("r")).addColumn(CF, b("w"), b("2")),
                            new Increment(b("r")).addColumn(CF, b("n"), 5)))));
            for (CheckAndMutate check : checks) {
                CheckAndMutateResult expected = plain.checkAndMutate(check);
                CheckAndMutateResult actual = t.checkAndMutate(tx, check);
                assertEquals(expected.isSuccess(), actual.isSuccess());
                assertEquals(expected.getResult() == null, actual.getResult() == null, check.getAction().toString());
                if (expected.getResult() != null) {
                    assertEquals(Bytes.toLong(expected.getResult().getValue(CF, b("n"))),
                            Bytes.toLong(actual.getResult().getValue(CF, b("n"))));
                }
            }
            tm.commit(tx);
        }
    }

    /** Each result as "row:f/q,f/q..." followed by "+" if more cells of its row follow. */
    private static List<String> pieces(ResultScanner s) throws IOException {
        List<String> out = new ArrayList<>();
        for (Result r : s) {
            StringBuilder piece = new StringBuilder(Bytes.toString(r.getRow())).append(':');
            for (Cell cell : r.rawCells()) {
                piece.append(Bytes.toString(CellUtil.cloneFamily(cell))).append('/')
                        .append(Bytes.toString(CellUtil.cloneQualifier(cell))).append(',');
            }
            out.add(piece + (r.mayHaveMoreCellsInRow() ? "+" : ""));
        }
        return out;
    }

    private static List<Integer> sizes(ResultScanner s) throws IOException {
        List<Integer> out = new ArrayList<>();
        for (Result r : s) {
            out.add(r.size());
        }
        return out;
    }
}
