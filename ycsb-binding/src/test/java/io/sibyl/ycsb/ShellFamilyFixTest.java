package io.sibyl.ycsb;

import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** The HBase shell command {@link ShellFamilyFix} gives for families that cannot hold transactions. */
class ShellFamilyFixTest {

    @Test
    void everyUnfitSettingOfEveryUnfitFamilyIsChangedInOneAlter() {
        var table = TableDescriptorBuilder.newBuilder(TableName.valueOf("ns", "t"))
                .setColumnFamily(ColumnFamilyDescriptorBuilder.of("a"))
                .setColumnFamily(ColumnFamilyDescriptorBuilder.newBuilder(Bytes.toBytes("b"))
                        .setMaxVersions(Integer.MAX_VALUE).build())
                .setColumnFamily(ColumnFamilyDescriptorBuilder.newBuilder(Bytes.toBytes("c"))
                        .setMaxVersions(Integer.MAX_VALUE).setTimeToLive(3600).setNewVersionBehavior(true).build())
                .build();
        assertEquals("in the HBase shell: alter 'ns:t', {NAME => 'a', VERSIONS => 2147483647}, {NAME => 'c',"
                + " TTL => 2147483647, NEW_VERSION_BEHAVIOR => 'false'}", ShellFamilyFix.of(table));
    }

    @Test
    void familiesFitForTransactionsNeedNoCommand() {
        var table = TableDescriptorBuilder.newBuilder(TableName.valueOf("t"))
                .setColumnFamily(io.sibyl.client.TTable.familyDescriptor("family")).build();
        assertNull(ShellFamilyFix.of(table));
    }
}
