package io.sibyl.gc;

import io.sibyl.client.TTable;
import io.sibyl.client.TransactionManager;
import io.sibyl.embedded.EmbeddedHBase;
import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseTestingUtility;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.CompactionState;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.CoprocessorDescriptor;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.regionserver.HRegion;
import org.apache.hadoop.hbase.regionserver.HStore;
import org.apache.hadoop.hbase.regionserver.HStoreFile;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The test JVM's one HBase minicluster ({@link EmbeddedHBase}: no HDFS) and one in-process oracle whose region
 * server configuration names that oracle, so the collector finds it as it would in production. The oracle's commit
 * window is tiny, so T_max moves after a few dozen commits and commit timestamps get forgotten as in a busy system.
 */
public final class GcCluster implements BeforeAllCallback, ExtensionContext.Store.CloseableResource {
    /** Commits the oracle remembers before T_max passes the oldest (the window is a fixed ring). */
    static final int COMMIT_WINDOW = 64;
    /**
     * The oracle's reader.grace.ms: short, so that a test can wait for a lost reader's hold to end, but not so short
     * that a busy machine breaks other tests. Clients stop reading after half of it without a frame from the oracle
     * (heartbeats come every tenth of it): at 1.5 s a 750 ms stall of this JVM (minicluster, compactions, GC) failed
     * any test's read with SnapshotExpiredException, and a compaction slower than 750 ms ran past a lost reader's
     * hold.
     */
    static final long READER_GRACE_MS = 6000;
    /**
     * How long a flush or compaction of the collected tables waits for the oracle's low watermark (production
     * default 2 s). A busy test machine may miss 2 s, and then the compaction removes nothing and a test that
     * expects removal fails; tests of an unreachable oracle set their own short timeouts per table.
     */
    static final long WATERMARK_TIMEOUT_MS = 30_000;
    private static volatile GcCluster instance;
    private static final AtomicInteger TABLES = new AtomicInteger();

    private final EmbeddedHBase hbase;
    private final OracleServer oracle;
    private final Connection connection;

    /** For JUnit's {@code @ExtendWith}; the cluster itself starts in {@link #beforeAll}. */
    public GcCluster() {
        hbase = null;
        oracle = null;
        connection = null;
    }

    private GcCluster(boolean start) throws Exception {
        long t0 = System.nanoTime();
        oracle = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(1 << 12, COMMIT_WINDOW, 1 << 10).withReaderGrace(READER_GRACE_MS));
        hbase = EmbeddedHBase.start(c -> {
            c.setInt("hbase.client.retries.number", 10);
            c.setLong(GcSettings.WATERMARK_TIMEOUT_MS, WATERMARK_TIMEOUT_MS);
            c.set(TransactionManager.ORACLE_ADDRESS, "127.0.0.1:" + oracle.port()); // what hbase-site.xml would say
        });
        connection = ConnectionFactory.createConnection(configuration());
        System.out.printf("minicluster and oracle up in %.1f s (oracle port %d)%n", (System.nanoTime() - t0) / 1e9,
                oracle.port());
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        context.getRoot().getStore(ExtensionContext.Namespace.GLOBAL).getOrComputeIfAbsent(GcCluster.class, k -> {
            try {
                GcCluster g = new GcCluster(true);
                instance = g;
                return g;
            } catch (Exception e) {
                throw new IllegalStateException("could not start the HBase minicluster and the oracle", e);
            }
        }, GcCluster.class);
    }

    /** The cluster of this test JVM, once a class that extends with it started it. */
    public static GcCluster get() {
        return instance;
    }

    public Configuration configuration() {
        return hbase.configuration();
    }

    public OracleServer oracle() {
        return oracle;
    }

    /** The minicluster (its region servers can be started and killed). */
    public EmbeddedHBase hbase() {
        return hbase;
    }

    public int oraclePort() {
        return oracle.port();
    }

    TransactionManager manager() throws IOException {
        return TransactionManager.create(connection, "127.0.0.1", oracle.port());
    }

    public Connection connection() {
        return connection;
    }

    /** A table with one family keeping every version and, unless null, the given coprocessor. */
    TableName createTable(String prefix, CoprocessorDescriptor coprocessor) throws IOException {
        TableName name = TableName.valueOf(prefix + "_" + TABLES.incrementAndGet());
        TableDescriptorBuilder b = TableDescriptorBuilder.newBuilder(name)
                .setColumnFamily(TTable.familyDescriptor("f"));
        if (coprocessor != null) {
            b.setCoprocessor(coprocessor);
        }
        try (Admin admin = connection.getAdmin()) {
            admin.createTable(b.build());
        }
        return name;
    }

    void flush(TableName table) throws IOException {
        try (Admin admin = connection.getAdmin()) {
            admin.flush(table);
        }
    }

    /** Asks HBase for a major compaction and waits until every store of the table has been rewritten. */
    void majorCompact(TableName table) throws Exception {
        Set<String> before = storeFiles(table);
        if (before.isEmpty()) {
            return;
        }
        try (Admin admin = connection.getAdmin()) {
            admin.majorCompact(table);
            long deadline = System.nanoTime() + 60_000_000_000L;
            while (admin.getCompactionState(table) != CompactionState.NONE || !rewritten(before, storeFiles(table))) {
                if (System.nanoTime() > deadline) {
                    throw new AssertionError("major compaction of " + table + " did not finish in 60 s");
                }
                Thread.sleep(50);
            }
        }
    }

    private static boolean rewritten(Set<String> before, Set<String> now) {
        for (String f : now) {
            if (before.contains(f)) {
                return false;
            }
        }
        return true;
    }

    private Set<String> storeFiles(TableName table) {
        Set<String> files = new TreeSet<>();
        for (HRegion r : hbase.util().getMiniHBaseCluster().getRegions(table)) {
            for (HStore s : r.getStores()) {
                for (HStoreFile f : s.getStorefiles()) {
                    files.add(f.getPath().getName());
                }
            }
        }
        return files;
    }

    /** The timestamps of the versions HBase returns for one column, newest first. */
    List<Long> versions(TableName table, byte[] row, byte[] family, byte[] qualifier) throws IOException {
        List<Long> ts = new ArrayList<>();
        try (var t = connection.getTable(table)) {
            var result = t.get(new Get(row).addColumn(family, qualifier).readAllVersions());
            for (var cell : result.rawCells()) {
                ts.add(cell.getTimestamp());
            }
        }
        return ts;
    }

    HBaseTestingUtility util() {
        return hbase.util();
    }

    @Override
    public void close() throws Throwable {
        try {
            connection.close();
        } finally {
            try {
                hbase.close();
            } finally {
                oracle.close();
            }
        }
    }
}
