package io.sibyl.client;

import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
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

/** The shortcuts a plain HBase Table offers, on TTable: multi-exists, family and column scanners, the descriptor. */
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
            other.flush();

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
            running.flush();

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
