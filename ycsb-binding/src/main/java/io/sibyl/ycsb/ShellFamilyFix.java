package io.sibyl.ycsb;

import org.apache.hadoop.hbase.HConstants;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptor;
import org.apache.hadoop.hbase.client.TableDescriptor;

import java.util.ArrayList;
import java.util.List;

/**
 * The HBase shell command that makes a table's column families fit for transactions (every version kept, no TTL,
 * NEW_VERSION_BEHAVIOR off): what a YCSB user who created the table as YCSB's HBase instructions say
 * ({@code create 'usertable', 'family'}, one version) has to type.
 */
final class ShellFamilyFix {
    private ShellFamilyFix() {
    }

    /** {@code in the HBase shell: alter 't', {NAME => 'f', VERSIONS => 2147483647}}, or null if nothing is unfit. */
    static String of(TableDescriptor table) {
        List<String> families = new ArrayList<>();
        for (ColumnFamilyDescriptor f : table.getColumnFamilies()) {
            List<String> changes = new ArrayList<>();
            if (f.getMaxVersions() < 2) {
                changes.add("VERSIONS => " + Integer.MAX_VALUE);
            }
            if (f.getTimeToLive() != HConstants.FOREVER) {
                changes.add("TTL => " + HConstants.FOREVER);
            }
            if (f.isNewVersionBehavior()) {
                changes.add("NEW_VERSION_BEHAVIOR => 'false'");
            }
            if (!changes.isEmpty()) {
                families.add("{NAME => '" + f.getNameAsString() + "', " + String.join(", ", changes) + "}");
            }
        }
        return families.isEmpty() ? null : "in the HBase shell: alter '" + table.getTableName().getNameAsString()
                + "', " + String.join(", ", families);
    }
}
