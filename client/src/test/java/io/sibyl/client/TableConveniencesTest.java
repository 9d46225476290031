package io.sibyl.client;

import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.CheckAndMutate;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.RowMutations;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

import static io.sibyl.client.TestSupport.CF;
import static io.sibyl.client.TestSupport.V;
import static io.sibyl.client.TestSupport.b;
import static io.sibyl.client.TestSupport.put;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The shortcuts a plain HBase Table offers, on TTable: multi-exists, family and column scanners, the descriptor,
 * mutateRow and batch.
 */
@ExtendWith(MiniCluster.class)
class TableConveniencesTest {

    @Test
    void multiExistsAnswersEachRowFromTheSnapshotAndOwnWrites() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("multi_exists", "cf");
        try (TransactionManager tm = c.manager(); TTable t = new TTable(c.connection(), name)) {
            Transaction init = tm.begin();
            put(t, init, "committed", "v");
            put(t, init, "deleted", "v");
            tm.commit(init);
            Transaction other = tm.begin();
            put(t, other, "uncommitted", "v");
            TestSupport.internals(other).flush();

            Transaction tx = tm.begin();
            put(t, tx, "own", "v");
            t.delete(tx, new Delete(b("deleted")));
            boolean[] found = t.exists(tx, List.of(new Get(b("committed")), new Get(b("own")),
                    new Get(b("deleted")), new Get(b("uncommitted")), new Get(b("missing"))));
            assertArrayEquals(new boolean[] {true, true, false, false, false}, found);
            tm.rollback(tx);
            tm.rollback(other);
        }
    }

    @Test
    void familyAndColumnScannersReadTheSnapshotLikeTheirScanEquivalents() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("family_scanner", "cf", "other");
        byte[] other = b("other");
        try (TransactionManager tm = c.manager(); TTable t = new TTable(c.connection(), name)) {
            Transaction init = tm.begin();
            put(t, init, "a", "v", "1");
            put(t, init, "b", "w", "2");
            t.put(init, new org.apache.hadoop.hbase.client.Put(b("c")).addColumn(other, V, b("3")));
            tm.commit(init);
            Transaction running = tm.begin();
            put(t, running, "d", "v", "not yet");
            TestSupport.internals(running).flush();

            Transaction tx = tm.begin();
            assertEquals(List.of("a/v=1", "b/w=2"), cells(t.getScanner(tx, CF)));
            assertEquals(List.of("a/v=1"), cells(t.getScanner(tx, CF, V)));
            assertEquals(List.of("c/v=3"), cells(t.getScanner(tx, other)));
            tm.commit(tx);
            tm.rollback(running);
            try (Admin admin = c.connection().getAdmin()) {
                assertEquals(admin.getDescriptor(name), t.getDescriptor());
            }
        }
    }

    @Test
    void mutateRowAppliesItsPutsAndDeletesInOrderAndCommitsThemWithTheTransaction() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("mutate_row", "cf");
        try (TransactionManager tm = c.manager(); TTable t = new TTable(c.connection(), name)) {
            Transaction init = tm.begin();
            put(t, init, "r", "a", "old a");
            put(t, init, "r", "b", "old b");
            tm.commit(init);

            Transaction tx = tm.begin();
            RowMutations m = RowMutations.of(List.of(
                    new Put(b("r")).addColumn(CF, b("c"), b("new c")),
                    new Delete(b("r")).addColumns(CF, b("a")),
                    new Put(b("r")).addColumn(CF, b("a"), b("new a")))); // after the delete: it stays
            t.mutateRow(tx, m);
            Transaction concurrent = tm.begin();
            assertEquals(List.of("r/a=old a", "r/b=old b"), cells(t.getScanner(concurrent, CF)), "not committed yet");
            assertEquals(List.of("r/a=new a", "r/b=old b", "r/c=new c"), cells(t.getScanner(tx, CF)));
            tm.commit(tx);
            tm.commit(concurrent);
            Transaction after = tm.begin();
            assertEquals(List.of("r/a=new a", "r/b=old b", "r/c=new c"), cells(t.getScanner(after, CF)));
            tm.commit(after);
        }
    }

    @Test
    void batchRunsActionsInListOrderSoAGetSeesTheWritesBeforeIt() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("tx_batch", "cf");
        try (TransactionManager tm = c.manager(); TTable t = new TTable(c.connection(), name)) {
            Transaction init = tm.begin();
            put(t, init, "x", "committed");
            tm.commit(init);

            Transaction tx = tm.begin();
            Result[] r = t.batch(tx, List.of(
                    new Get(b("x")),
                    new Put(b("x")).addColumn(CF, V, b("one")),
                    new Put(b("y")).addColumn(CF, V, b("two")),
                    new Get(b("x")),
                    new Get(b("y")),
                    new Delete(b("x")),
                    RowMutations.of(List.of(new Put(b("z")).addColumn(CF, V, b("three")))),
                    new Get(b("x")),
                    new Get(b("z"))));
            assertEquals(9, r.length);
            assertEquals("committed", Bytes.toString(r[0].getValue(CF, V)));
            assertTrue(r[1].isEmpty() && r[2].isEmpty() && r[5].isEmpty() && r[6].isEmpty(), "writes: empty results");
            assertEquals("one", Bytes.toString(r[3].getValue(CF, V)));
            assertEquals("two", Bytes.toString(r[4].getValue(CF, V)));
            assertTrue(r[7].isEmpty(), "deleted by the action before it");
            assertEquals("three", Bytes.toString(r[8].getValue(CF, V)));
            tm.commit(tx);
            Transaction after = tm.begin();
            assertEquals(List.of("y/v=two", "z/v=three"), cells(t.getScanner(after, CF)));
            tm.commit(after);
        }
    }

    @Test
    void batchWithACheckAndMutateIsRefusedWithoutApplyingTheActionsBeforeIt() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("tx_batch_bad", "cf");
        try (TransactionManager tm = c.manager(); TTable t = new TTable(c.connection(), name)) {
            Transaction tx = tm.begin();
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> t.batch(tx, List.of(
                    new Put(b("a")).addColumn(CF, V, b("1")),
                    CheckAndMutate.newBuilder(b("n")).ifNotExists(CF, V).build(new Put(b("n")).addColumn(CF, V, V)))));
            assertTrue(e.getMessage().contains("checkAndMutate") && e.getMessage().contains("index 1"), e.getMessage());
            assertThrows(IllegalArgumentException.class, () -> t.mutateRow(tx, RowMutations.of(List.of(
                    new Put(b("a")).addColumn(CF, V, b("1")),
                    new Put(b("a")).addColumn(CF, V, 5L, b("user timestamp"))))));
            assertTrue(t.get(tx, new Get(b("a"))).isEmpty(), "nothing of a refused batch was applied");
            assertTrue(tx.isReadOnly(), "and nothing joined the write set");
            tm.commit(tx);
        }
    }

    private static List<String> cells(ResultScanner scanner) throws IOException {
        List<String> out = new ArrayList<>();
        try (scanner) {
            for (Result r : scanner) {
                r.listCells().forEach(cell -> out.add(Bytes.toString(r.getRow()) + "/"
                        + Bytes.toString(cell.getQualifierArray(), cell.getQualifierOffset(), cell.getQualifierLength())
                        + "=" + Bytes.toString(cell.getValueArray(), cell.getValueOffset(), cell.getValueLength())));
            }
        }
        return out;
    }
}
