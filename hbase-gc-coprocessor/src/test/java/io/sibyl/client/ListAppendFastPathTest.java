package io.sibyl.client;

import io.sibyl.gc.GcCluster;
import io.sibyl.gc.SibylFastPathCoprocessor;
import io.sibyl.gc.SibylGcCoprocessor;
import io.sibyl.protocol.Timestamps;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.MiniHBaseCluster;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.CoprocessorDescriptorBuilder;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.util.JVMClusterUtil.RegionServerThread;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * List-append histories in which a quarter of the attempts are single appends committed by the region server (the
 * fast path), beside ordinary, read-only and latest-row transactions of two clients, while the table's regions move
 * to a second region server, split, and that server is killed: the history must be snapshot isolation, with
 * real-time order, like the histories of ListAppendIsolationTest without the fast path.
 */
@ExtendWith(GcCluster.class)
class ListAppendFastPathTest {

    @Test
    void listAppendHistoryWithFastPathAppendsAcrossMovesSplitsAndARegionServerKillIsSnapshotIsolation()
            throws Exception {
        GcCluster c = GcCluster.get();
        MiniHBaseCluster hbase = c.hbase().util().getMiniHBaseCluster();
        TableName name = TableName.valueOf("elle_fastpath");
        try (Admin admin = c.connection().getAdmin()) {
            admin.createTable(TableDescriptorBuilder.newBuilder(name)
                    .setColumnFamily(TTable.familyDescriptor(ListAppendIsolationTest.CF))
                    .setCoprocessor(CoprocessorDescriptorBuilder.of(SibylFastPathCoprocessor.class.getName()))
                    .setCoprocessor(CoprocessorDescriptorBuilder.of(SibylGcCoprocessor.class.getName()))
                    .build(), ListAppendIsolationTest.SPLITS);
            boolean balancerWasOn = admin.balancerSwitch(false, true); // nothing moves but what this test moves
            ServerName original = hbase.getRegionServer(0).getServerName();
            RegionServerThread extra = hbase.startRegionServer();
            ServerName second = extra.getRegionServer().getServerName();
            boolean killed = false;
            try (TransactionManager buffered = manager(c, ListAppendIsolationTest.crashSettings(false));
                 TransactionManager writeThrough = manager(c, ListAppendIsolationTest.crashSettings(true));
                 ListAppendIsolationTest.Workload w = new ListAppendIsolationTest.Workload(name,
                         List.of(buffered, writeThrough))) {
                w.singleRowAppendPercent = 25;
                w.run(16_000L, () -> {
                    Thread.sleep(3_000);
                    for (RegionInfo r : admin.getRegions(name)) {
                        admin.move(r.getEncodedNameAsBytes(), second);
                    }
                    Thread.sleep(3_000);
                    admin.split(name, ListAppendIsolationTest.row(2));
                    Thread.sleep(3_000);
                    hbase.killRegionServer(second);
                    ListAppendIsolationTest.WITHIN_A_MINUTE.alias("the regions to reopen on " + original).until(
                            () -> admin.getRegions(name).stream().allMatch(r -> isOn(admin, original, r)));
                    Thread.sleep(3_000);
                });
                killed = true;
                w.checkSnapshotIsolation(buffered, "fast-path appends, moves, a split, a region server killed");
                long fast = w.history.stream().filter(t -> t.outcome() == SiHistory.Outcome.COMMITTED
                        && Timestamps.isSelfCommitted(t.startTs())).count();
                assertTrue(fast > 50, "too few appends committed by the region server to mean anything: " + fast);
            } finally {
                if (!killed) {
                    hbase.killRegionServer(second);
                }
                extra.join(60_000);
                ListAppendIsolationTest.WITHIN_A_MINUTE.alias("the master to finish recovering " + second).until(
                        () -> !hbase.getMaster().getServerManager().areDeadServersInProgress());
                admin.balancerSwitch(balancerWasOn, true);
            }
        }
    }

    private static boolean isOn(Admin admin, ServerName server, RegionInfo region) {
        try {
            return admin.getRegions(server).contains(region);
        } catch (IOException e) {
            return false;
        }
    }

    /** A client of the test's oracle with {@code settings}. */
    private static TransactionManager manager(GcCluster c, Map<String, String> settings) throws IOException {
        Configuration conf = new Configuration(c.configuration());
        conf.set(TransactionManager.ORACLE_ADDRESS, "127.0.0.1:" + c.oraclePort());
        settings.forEach(conf::set);
        return TransactionManager.create(conf);
    }
}
