package io.sibyl.client;

import io.sibyl.embedded.EmbeddedHBase;
import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseTestingUtility;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.IOException;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One HBase minicluster ({@link EmbeddedHBase}: no HDFS) and one in-process oracle for the whole test JVM, started by
 * the first test class that uses this extension and stopped when JUnit finishes. Test classes get it with
 * {@link #get()} and isolate themselves with their own tables.
 */
public final class MiniCluster implements BeforeAllCallback, ExtensionContext.Store.CloseableResource {
    private static volatile MiniCluster instance;
    private static final AtomicInteger TABLES = new AtomicInteger();

    private final EmbeddedHBase hbase;
    private final OracleServer oracle;
    private final Connection connection;

    /** For JUnit's {@code @ExtendWith}: the real instance is created in {@link #beforeAll}. */
    public MiniCluster() {
        hbase = null;
        oracle = null;
        connection = null;
    }

    private MiniCluster(boolean start) throws Exception {
        long t0 = System.nanoTime();
        hbase = EmbeddedHBase.start(c -> {
            c.setInt("hbase.regionserver.handler.count", 16);
            c.setInt("hbase.master.handler.count", 8);
            c.setInt("hbase.client.retries.number", 10);
        });
        oracle = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(1 << 18, 1 << 18, 1 << 14));
        connection = ConnectionFactory.createConnection(configuration());
        System.out.printf("minicluster and oracle up in %.1f s (oracle port %d)%n", (System.nanoTime() - t0) / 1e9,
                oracle.port());
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        context.getRoot().getStore(ExtensionContext.Namespace.GLOBAL).getOrComputeIfAbsent(MiniCluster.class, k -> {
            try {
                MiniCluster m = new MiniCluster(true);
                instance = m;
                return m;
            } catch (Exception e) {
                throw new IllegalStateException("could not start the HBase minicluster and the oracle", e);
            }
        }, MiniCluster.class);
    }

    /** The running cluster (call from tests of a class annotated {@code @ExtendWith(MiniCluster.class)}). */
    public static MiniCluster get() {
        MiniCluster m = instance;
        if (m == null) {
            throw new IllegalStateException("annotate the test class with @ExtendWith(MiniCluster.class)");
        }
        return m;
    }

    /** A fresh copy of the client configuration, with {@value TransactionManager#ORACLE_ADDRESS} set. */
    public Configuration configuration() {
        Configuration c = hbase.configuration();
        c.set(TransactionManager.ORACLE_ADDRESS, "127.0.0.1:" + oracle.port());
        return c;
    }

    /** The shared HBase connection (do not close it). */
    public Connection connection() {
        return connection;
    }

    public OracleServer oracle() {
        return oracle;
    }

    /** A manager on the shared connection. */
    public TransactionManager manager() throws IOException {
        return TransactionManager.create(connection, "127.0.0.1", oracle.port());
    }

    /** A manager with its own connection and extra settings (e.g. a tiny read batch or write buffer). */
    public TransactionManager manager(Map<String, String> settings) throws IOException {
        Configuration c = configuration();
        settings.forEach(c::set);
        return TransactionManager.create(c);
    }

    /** Creates a table with a unique name (prefix + counter) whose families keep every version. */
    public TableName createTable(String prefix, String... families) throws IOException {
        return createTable(prefix, null, families);
    }

    /** Like {@link #createTable(String, String...)}, pre-split at {@code splitKeys} (null: one region). */
    public TableName createTable(String prefix, byte[][] splitKeys, String... families) throws IOException {
        TableName name = TableName.valueOf(prefix + "_" + TABLES.incrementAndGet());
        TableDescriptorBuilder b = TableDescriptorBuilder.newBuilder(name);
        for (String f : families) {
            b.setColumnFamily(TTable.familyDescriptor(f));
        }
        try (Admin admin = connection.getAdmin()) {
            if (splitKeys == null) {
                admin.createTable(b.build());
            } else {
                admin.createTable(b.build(), splitKeys);
            }
        }
        return name;
    }

    /** The HBase testing utility, for tests that start, move or kill servers (put everything back afterwards). */
    public HBaseTestingUtility util() {
        return hbase.util();
    }

    /** Plain HBase access to a table (to look at raw versions). */
    public Table raw(TableName name) throws IOException {
        return connection.getTable(name);
    }

    @Override
    public void close() throws Throwable {
        try {
            connection.close();
        } finally {
            oracle.close();
            hbase.close();
        }
    }
}
