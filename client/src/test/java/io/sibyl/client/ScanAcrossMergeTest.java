package io.sibyl.client;

import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static io.sibyl.client.TestSupport.CF;
import static io.sibyl.client.TestSupport.V;
import static io.sibyl.client.TestSupport.b;
import static io.sibyl.client.TestSupport.put;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A scan still open while the region it reads is merged with its neighbour. HBase's client reopens a scanner that
 * the region server dropped (the region closed for the merge) in the region that now holds the next row, and sends
 * along the MVCC read point of the region the scan first opened in. Read points are per region: in the merged
 * region, cells that came from the neighbour carry the neighbour's sequence ids, which can be far above that read
 * point although they were written long before the scan began. With HBase's default read-committed isolation those
 * cells were skipped, and the snapshot read older versions of the neighbour's rows (a slow audit under region churn
 * summed to a wrong total: RegionChurnTest).
 */
@ExtendWith(MiniCluster.class)
class ScanAcrossMergeTest {
    /** Versions written to the busy region's row, to push its sequence ids far above the quiet region's. */
    private static final int BUSY_VERSIONS = 60;

    private static TransactionManager tm;

    @BeforeAll
    static void manager() throws IOException {
        tm = MiniCluster.get().manager();
    }

    @AfterAll
    static void close() {
        tm.close();
    }

    @ParameterizedTest(name = "reversed={0}")
    @ValueSource(booleans = {false, true})
    void scanReopenedInAMergedRegionSeesTheNeighboursCommittedVersions(boolean reversed) throws Exception {
        MiniCluster c = MiniCluster.get();
        // Region [, m) holds a1 and a2, region [m, ) holds n1 and n2. The scan starts in the quiet region (the first
        // forwards, the second backwards) and crosses into the busy one's rows only after the merge.
        TableName name = c.createTable("scan-merge", new byte[][] {b("m")}, "cf");
        List<String> quietRows = reversed ? List.of("n2", "n1") : List.of("a1", "a2");
        List<String> busyRows = reversed ? List.of("a2", "a1") : List.of("n1", "n2");
        try (TTable t = new TTable(c.connection(), name); Admin admin = c.connection().getAdmin()) {
            Transaction init = tm.begin();
            for (String row : List.of("a1", "a2", "n1", "n2")) {
                put(t, init, row, row + "-0");
            }
            tm.commit(init);
            for (int i = 1; i <= BUSY_VERSIONS; i++) {
                Transaction tx = tm.begin();
                for (String row : busyRows) {
                    put(t, tx, row, row + "-" + i);
                }
                tm.commit(tx);
            }
            Map<String, String> expected = new LinkedHashMap<>();
            quietRows.forEach(r -> expected.put(r, r + "-0"));
            busyRows.forEach(r -> expected.put(r, r + "-" + BUSY_VERSIONS));

            Transaction reader = tm.begin();
            Map<String, String> seen = new LinkedHashMap<>();
            Scan scan = new Scan().setCaching(1).setReversed(reversed);
            try (ResultScanner s = t.getScanner(reader, scan)) {
                Result first = s.next(); // the scanner is open in the quiet region, at its first row
                seen.put(Bytes.toString(first.getRow()), Bytes.toString(first.getValue(CF, V)));
                List<RegionInfo> regions = new ArrayList<>(admin.getRegions(name));
                regions.sort(Comparator.comparing(RegionInfo::getStartKey, Bytes::compareTo));
                admin.mergeRegionsAsync(new byte[][] {regions.get(0).getEncodedNameAsBytes(),
                        regions.get(1).getEncodedNameAsBytes()}, false).get(60, TimeUnit.SECONDS);
                for (Result r : s) { // HBase reopens the scanner in the merged region
                    seen.put(Bytes.toString(r.getRow()), Bytes.toString(r.getValue(CF, V)));
                }
            }
            assertEquals(expected, seen, "the snapshot of a scan that crossed a region merge");
            tm.commit(reader);
        }
    }
}
