package io.sibyl.ycsb;

import io.sibyl.client.FastPathRequest;
import io.sibyl.client.TTable;
import io.sibyl.client.TransactionManager;
import io.sibyl.embedded.EmbeddedHBase;
import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.CoprocessorDescriptorBuilder;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

import java.io.IOException;
import java.util.List;

/**
 * Everything a YCSB run needs, in one JVM: the no-HDFS HBase minicluster ({@link EmbeddedHBase}) and an in-process
 * status oracle (in-memory journal), with the YCSB tables created. {@code bin/sibyl-ycsb} runs its {@link #main} and
 * YCSB's Client in another process; the tests start one per test JVM.
 */
public final class EmbeddedStack implements AutoCloseable {
    private final EmbeddedHBase hbase;
    private final OracleServer oracle;
    private final Connection connection;

    private EmbeddedStack(EmbeddedHBase hbase, OracleServer oracle, Connection connection) {
        this.hbase = hbase;
        this.oracle = oracle;
        this.connection = connection;
    }

    /** Starts HBase and the oracle; returns once both serve. */
    public static EmbeddedStack start() throws Exception {
        EmbeddedHBase hbase = EmbeddedHBase.start(c -> c.setInt("hbase.regionserver.handler.count", 16));
        OracleServer oracle = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(1 << 20, 1 << 18, 1 << 16));
        return new EmbeddedStack(hbase, oracle, ConnectionFactory.createConnection(hbase.configuration()));
    }

    /** The ZooKeeper client port of HBase (YCSB: {@code -p hbase.zookeeper.property.clientPort=...}). */
    public int zkPort() {
        return hbase.zkPort();
    }

    /** {@code host:port} of the oracle (YCSB: {@code -p sibyl.oracle.address=...}). */
    public String oracleAddress() {
        return "127.0.0.1:" + oracle.port();
    }

    /** The properties that point a YCSB client at this stack. */
    public List<String> ycsbProperties() {
        return List.of("hbase.zookeeper.quorum=127.0.0.1", "hbase.zookeeper.property.clientPort=" + zkPort(),
                "sibyl.oracle.address=" + oracleAddress());
    }

    /** A plain HBase connection to the minicluster (shared; do not close it). */
    public Connection connection() {
        return connection;
    }

    /**
     * Creates {@code table} with one family fit for transactions (every version kept, no TTL), and the fast path of
     * single-row transactions when its observer is on the class path (the region server finds the oracle through the
     * coprocessor's properties: it started before the oracle).
     */
    public void createTable(String table, String family) throws IOException {
        TableDescriptorBuilder b = TableDescriptorBuilder.newBuilder(TableName.valueOf(table))
                .setColumnFamily(TTable.familyDescriptor(family));
        if (fastPathAvailable()) {
            b.setCoprocessor(CoprocessorDescriptorBuilder.newBuilder(FastPathRequest.COPROCESSOR)
                    .setProperty(TransactionManager.ORACLE_ADDRESS, oracleAddress()).build());
        }
        try (Admin admin = connection.getAdmin()) {
            admin.createTable(b.build());
        }
    }

    /** A region server that cannot load a table's coprocessor aborts: look before naming it. */
    private static boolean fastPathAvailable() {
        try {
            Class.forName(FastPathRequest.COPROCESSOR, false, EmbeddedStack.class.getClassLoader());
            return true;
        } catch (ClassNotFoundException e) {
            return false;
        }
    }

    @Override
    public void close() throws IOException {
        try {
            connection.close();
        } finally {
            oracle.close();
            hbase.close();
        }
    }

    /** The command line of {@link #main}: what bin/sibyl-ycsb passes, and --help. */
    @Command(name = "EmbeddedStack", usageHelpWidth = 110,
            description = {"Starts the no-HDFS HBase minicluster and an in-process status oracle, creates the tables,"
                    + " prints 'READY zk=127.0.0.1:<port> oracle=127.0.0.1:<port> ...' and serves until killed"
                    + " (bin/sibyl-ycsb runs it)."})
    static final class StackFlags {
        @Option(names = "--family", paramLabel = "FAMILY",
                description = "column family of every table created [${DEFAULT-VALUE}]")
        String family = BindingSettings.DEFAULT_COLUMN_FAMILY;

        @Option(names = "--tables", paramLabel = "TABLE", split = ",", splitSynopsisLabel = ",",
                description = "tables to create [" + BindingSettings.DEFAULT_TABLE + "]")
        List<String> tables = List.of(BindingSettings.DEFAULT_TABLE);

        @Option(names = {"-h", "--help"}, usageHelp = true, description = "this text")
        boolean help;

        /** The tables named, each once, blanks left out: bin/sibyl-ycsb appends the user's list to its own. */
        List<String> tablesToCreate() {
            return tables.stream().map(String::trim).filter(t -> !t.isEmpty()).distinct().toList();
        }
    }

    /**
     * Starts the stack, creates the tables, prints {@code READY zk=127.0.0.1:<port> oracle=127.0.0.1:<port>} and
     * serves until the process is killed. Flags: {@code [--family family] [--tables usertable,accounts]}; exit
     * status 2 for a bad one.
     */
    public static void main(String[] args) {
        StackFlags flags = new StackFlags();
        CommandLine commandLine = new CommandLine(flags);
        try {
            commandLine.parseArgs(args);
        } catch (ParameterException e) {
            System.err.println("embedded stack: " + e.getMessage());
            commandLine.usage(System.err);
            System.exit(2);
        }
        if (flags.help) {
            commandLine.usage(System.out);
            System.exit(0);
        }
        String family = flags.family;
        List<String> tables = flags.tablesToCreate();
        try {
            long t0 = System.nanoTime();
            EmbeddedStack stack = start();
            for (String t : tables) {
                stack.createTable(t, family);
            }
            System.out.printf("READY zk=127.0.0.1:%d oracle=%s tables=%s family=%s (up in %.1f s)%n", stack.zkPort(),
                    stack.oracleAddress(), String.join(",", tables), family, (System.nanoTime() - t0) / 1e9);
            System.out.flush();
            Thread.currentThread().join(); // serves until killed; the minicluster's data dir goes with the run
        } catch (Throwable t) {
            System.err.println("embedded stack: failed to start: " + t);
            t.printStackTrace();
            System.exit(1); // a half-started minicluster leaves threads that never end
        }
    }
}
