package io.sibyl.client;

import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.SlowLocatingConnection;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;

import static io.sibyl.client.TestSupport.put;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * A batch whose region location lookup takes longer than the time left in the read window (hbase:meta slow, or its
 * server failing over) must not be sent after the window ends: HBase's single-row put starts its operation timeout
 * before the lookup and, out of time after it, still sends the put (with a 1 ms RPC timeout, "trying anyway"), which a
 * region server that is not busy applies; the multi-action path checks the time left just before each RPC.
 */
@ExtendWith(MiniCluster.class)
class SlowRegionLookupWriteTest {
    /** The oracle's reader grace: a read window of 2 s. */
    private static final long GRACE_MS = 4000;

    @Test
    void aSingleRowWriteWhoseRegionLookupOutlastsTheReadWindowIsNotSentAfterIt() throws Exception {
        lookupOutlastsTheWindow(1, "slow_lookup_row");
    }

    @Test
    void aBatchWhoseRegionLookupOutlastsTheReadWindowIsNotSentAfterIt() throws Exception {
        lookupOutlastsTheWindow(3, "slow_lookup_batch");
    }

    private void lookupOutlastsTheWindow(int rows, String prefix) throws Exception {
        TableName name = TableName.valueOf(prefix + "_" + System.nanoTime());
        try (Admin admin = MiniCluster.get().connection().getAdmin()) {
            admin.createTable(TableDescriptorBuilder.newBuilder(name).setColumnFamily(TTable.familyDescriptor("cf"))
                    .build());
        }
        Configuration conf = MiniCluster.get().configuration();
        conf.set(TransactionManager.ORACLE_TIMEOUT_MS, "1000");
        conf.set(TransactionManager.FAILOVER_TIMEOUT_MS, "1000");
        conf.set("hbase.client.connection.impl", SlowLocatingConnection.class.getName());
        try (OracleServer oracle = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(1 << 16, 1 << 16, 1 << 10).withReaderGrace(GRACE_MS));
             ReplyProxy proxy = new ReplyProxy(oracle.port());
             Connection hbase = ConnectionFactory.createConnection(conf);
             TransactionManager tm = TransactionManager.create(hbase, "127.0.0.1", proxy.port());
             TTable t = new TTable(hbase, name)) {
            Transaction tx = tm.begin();
            for (int i = 0; i < rows; i++) {
                put(t, tx, "row" + i, "must not land after the window");
            }
            long window = TestSupport.internals(tx).begunOn().readWindowMillis();
            assertEquals(GRACE_MS / 2, window);
            proxy.dropReplies(); // the oracle falls silent
            SlowLocatingConnection.slowTable = name;
            SlowLocatingConnection.delayMillis = window + 1000; // the lookup ends a second after the window
            try {
                IOException failure = assertThrows(IOException.class, TestSupport.internals(tx)::flush,
                        "the write succeeded after its read window ended");
                assertInstanceOf(SnapshotExpiredException.class, failure, String.valueOf(failure));
            } finally {
                SlowLocatingConnection.delayMillis = 0;
            }
            Thread.sleep(500);
            assertEquals(0, TestSupport.versionsAt(name, tx.getStartTimestamp()),
                    "a version landed after the read window ended");
            tm.rollback(tx);
        }
    }
}
