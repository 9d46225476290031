package io.sibyl.client;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.util.Bytes;

/**
 * The client {@link KilledClientTest} kills: begins a transaction, sends writes and a delete to HBase, prints
 * {@code WRITTEN <startTs>} and waits to be killed with SIGKILL.
 * Arguments: zkQuorum zkPort oracleAddress table rows.
 */
public final class KilledClientMain {
    private KilledClientMain() {
    }

    public static void main(String[] args) throws Exception {
        Configuration conf = HBaseConfiguration.create();
        conf.set("hbase.zookeeper.quorum", args[0]);
        conf.set("hbase.zookeeper.property.clientPort", args[1]);
        conf.set(TransactionManager.ORACLE_ADDRESS, args[2]);
        conf.set(TransactionManager.WRITE_BUFFER_BYTES, "1024"); // several early batches
        int rows = Integer.parseInt(args[4]);
        TransactionManager tm = TransactionManager.create(conf);
        TTable table = new TTable(tm.getConnection(), TableName.valueOf(args[3]));
        Transaction tx = tm.begin();
        for (int i = 0; i < rows; i++) {
            table.put(tx, new Put(Bytes.toBytes(String.format("new%04d", i)))
                    .addColumn(TestSupport.CF, TestSupport.V, Bytes.toBytes("from the killed client")));
        }
        table.put(tx, new Put(Bytes.toBytes("existing")).addColumn(TestSupport.CF, TestSupport.V,
                Bytes.toBytes("overwritten by the killed client")));
        table.delete(tx, new Delete(Bytes.toBytes("doomed")));
        TestSupport.internals(tx).flush(); // everything is in HBase now, uncommitted
        System.out.println("WRITTEN " + tx.getStartTimestamp());
        System.out.flush();
        Thread.sleep(Long.MAX_VALUE);
    }
}
