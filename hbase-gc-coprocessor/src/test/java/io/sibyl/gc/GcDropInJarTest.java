package io.sibyl.gc;

import io.sibyl.client.TTable;
import io.sibyl.client.Transaction;
import io.sibyl.client.TransactionManager;
import org.apache.hadoop.fs.Path;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.CoprocessorDescriptorBuilder;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.coprocessor.RegionCoprocessor;
import org.apache.hadoop.hbase.regionserver.HRegion;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.File;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNotSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/**
 * The shaded jar is a drop-in: a region server loads the collector from the jar file alone and it collects. Runs in
 * the integration-test phase, after 'package' built the jar (gc.dropin=true); skipped in the unit-test phase.
 */
@ExtendWith(GcCluster.class)
class GcDropInJarTest {
    private static final byte[] F = Bytes.toBytes("f");
    private static final byte[] Q = Bytes.toBytes("q");
    private static final byte[] ROW = Bytes.toBytes("row");

    private static File shadedJar() {
        assumeTrue(Boolean.getBoolean("gc.dropin"), "runs in the integration-test phase, once the jar is built");
        File jar = new File(System.getProperty("gc.jar"));
        assertTrue(jar.isFile(), "no shaded jar at " + jar);
        return jar;
    }

    @Test
    void shadedJarShipsNoUnrelocatedThirdPartyClasses() throws Exception {
        List<String> foreign = new ArrayList<>();
        boolean relocatedNetty = false;
        try (JarFile jar = new JarFile(shadedJar())) {
            for (JarEntry e : Collections.list(jar.entries())) {
                String n = e.getName();
                if (!n.endsWith(".class")) {
                    continue;
                }
                relocatedNetty |= n.startsWith("io/sibyl/gc/shaded/io/netty/");
                if (!n.startsWith("io/sibyl/")) {
                    foreign.add(n);
                }
            }
        }
        assertTrue(relocatedNetty, "the oracle client's Netty is inside, relocated");
        assertEquals(List.of(), foreign.subList(0, Math.min(20, foreign.size())),
                "only io.sibyl classes (and relocated ones beneath io/sibyl/gc/shaded): no io.netty, com.google,...");
    }

    @Test
    void regionServerLoadsTheCollectorFromTheJarAndItCollects() throws Exception {
        File jar = shadedJar();
        GcCluster cluster = GcCluster.get();
        TableName table = cluster.createTable("dropin", CoprocessorDescriptorBuilder
                .newBuilder(SibylGcCoprocessor.class.getName())
                .setJarPath(new Path(jar.toURI()).toString())
                .build());
        HRegion region = cluster.util().getMiniHBaseCluster().getRegions(table).get(0);
        RegionCoprocessor loaded = region.getCoprocessorHost().findCoprocessor(SibylGcCoprocessor.class.getName());
        assertNotNull(loaded, "the region server loaded the coprocessor from " + jar);
        assertNotSame(SibylGcCoprocessor.class, loaded.getClass(), "it came from the jar's class loader, not ours");

        long second;
        try (TransactionManager tm = cluster.manager(); TTable t = new TTable(cluster.connection(), table)) {
            for (String v : new String[] {"v1", "v2"}) {
                Transaction tx = tm.begin();
                t.put(tx, new Put(ROW).addColumn(F, Q, Bytes.toBytes(v)));
                tm.commit(tx);
            }
            second = 0;
            for (long ts : cluster.versions(table, ROW, F, Q)) {
                second = Math.max(second, ts);
            }
        }
        cluster.flush(table);
        cluster.majorCompact(table);
        assertEquals(List.of(second), cluster.versions(table, ROW, F, Q));
    }
}
