package io.sibyl.admin;

import io.sibyl.client.FastPathRequest;
import io.sibyl.client.TTable;
import org.apache.hadoop.hbase.HConstants;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptor;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.CoprocessorDescriptor;
import org.apache.hadoop.hbase.client.CoprocessorDescriptorBuilder;
import org.apache.hadoop.hbase.client.TableDescriptor;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.Callable;

/**
 * {@code bin/sibyl enable-table}: makes an HBase table fit for transactions (docs/user-guide.md): every family keeps
 * every version with no TTL and without NEW_VERSION_BEHAVIOR, and the garbage collector (docs/gc.md) is loaded on it.
 */
@Command(name = "enable-table", mixinStandardHelpOptions = true,
        header = "Creates or alters a table for transactions, with the collector.",
        description = {"Makes TABLE transactional: creates it with the --family families if it does not exist;"
                + " otherwise adds the --family families and changes every family to keep every version with no"
                + " TTL and without NEW_VERSION_BEHAVIOR (cell versions are transaction timestamps). Loads the"
                + " garbage collector (io.sibyl.gc.SibylGcCoprocessor) on it unless --no-gc, and the fast path of"
                + " single-row transactions (io.sibyl.gc.SibylFastPathCoprocessor) unless --no-fast-path, from"
                + " --gc-jar or the region servers' lib/. Running it again changes nothing. Needs HBase's settings"
                + " (hbase-site.xml in $HBASE_CONF_DIR, or -D hbase.zookeeper.quorum=...).",
                "Exit status: 0 the table is transactional, 1 HBase refused or failed, 2 wrong options."})
final class EnableTableCommand implements Callable<Integer> {
    /** The collector's region observer (module hbase-gc-coprocessor), named, since the CLI does not ship its classes. */
    static final String GC_COPROCESSOR = "io.sibyl.gc.SibylGcCoprocessor";
    /** The region observer that commits single-row transactions (same jar), named for the same reason. */
    static final String FAST_PATH_COPROCESSOR = FastPathRequest.COPROCESSOR;

    @Mixin
    ClusterOptions cluster;
    @Spec
    CommandSpec spec;

    @Parameters(paramLabel = "TABLE", description = "the table ([namespace:]name)")
    String table;
    @Option(names = "--family", split = ",", paramLabel = "CF[,CF2]",
            description = "families to create the table with, or to add to it")
    List<String> families = new ArrayList<>();
    @Option(names = "--gc-jar", paramLabel = "URI",
            description = "where region servers load the collector's jar (hdfs:///hbase/lib/sibyl-hbase-gc-"
                    + "coprocessor-VERSION.jar, file:///...); default: their lib/ directory")
    String gcJar;
    @Option(names = "--gc-setting", paramLabel = "KEY=VALUE",
            description = "a collector setting on this table (sibyl.oracle.zk.connect=..., sibyl.gc.enabled=false;"
                    + " docs/gc.md, Settings)")
    Map<String, String> gcSettings = new LinkedHashMap<>();
    @Option(names = "--no-gc", description = "do not load the collector (every version then stays for ever)")
    boolean noGc;
    @Option(names = "--no-fast-path", description = "do not load the fast path of single-row transactions"
            + " (io.sibyl.gc.SibylFastPathCoprocessor, the same jar; docs/user-guide.md)")
    boolean noFastPath;

    @Override
    public Integer call() throws Exception {
        TableName name;
        try {
            name = TableName.valueOf(table);
        } catch (IllegalArgumentException e) {
            throw new CliException("'" + table + "' is not a valid table name: " + e.getMessage(), CliException.USAGE);
        }
        PrintWriter out = spec.commandLine().getOut();
        try (Connection connection = ConnectionFactory.createConnection(cluster.hbaseConfiguration());
             Admin admin = connection.getAdmin()) {
            List<String> changes = new ArrayList<>();
            if (!admin.tableExists(name)) {
                if (families.isEmpty()) {
                    throw new CliException("table " + name + " does not exist: give --family=cf[,cf2] to create it",
                            CliException.USAGE);
                }
                TableDescriptorBuilder b = TableDescriptorBuilder.newBuilder(name);
                for (String f : new LinkedHashSet<>(families)) {
                    b.setColumnFamily(TTable.familyDescriptor(f));
                }
                setCoprocessor(b, GC_COPROCESSOR, noGc, null, changes, "garbage collector");
                setCoprocessor(b, FAST_PATH_COPROCESSOR, noFastPath, null, changes, "fast path");
                admin.createTable(b.build());
                out.println("created " + name + " with families " + families);
            } else {
                TableDescriptor current = admin.getDescriptor(name);
                TableDescriptorBuilder b = TableDescriptorBuilder.newBuilder(current);
                for (ColumnFamilyDescriptor f : current.getColumnFamilies()) {
                    if (!holdsTransactionalData(f)) {
                        b.modifyColumnFamily(ColumnFamilyDescriptorBuilder.newBuilder(f)
                                .setMaxVersions(Integer.MAX_VALUE).setTimeToLive(HConstants.FOREVER)
                                .setNewVersionBehavior(false).build());
                        changes.add("family " + f.getNameAsString() + " now keeps every version, with no TTL (was "
                                + f.getMaxVersions() + " versions, TTL " + ttl(f) + ")");
                    }
                }
                Set<String> added = new LinkedHashSet<>(families);
                for (ColumnFamilyDescriptor f : current.getColumnFamilies()) {
                    added.remove(f.getNameAsString());
                }
                for (String f : added) {
                    b.setColumnFamily(TTable.familyDescriptor(f));
                    changes.add("family " + f + " added");
                }
                setCoprocessor(b, GC_COPROCESSOR, noGc, loaded(current, GC_COPROCESSOR), changes,
                        "garbage collector");
                setCoprocessor(b, FAST_PATH_COPROCESSOR, noFastPath, loaded(current, FAST_PATH_COPROCESSOR), changes,
                        "fast path");
                if (!changes.isEmpty()) {
                    admin.modifyTable(b.build());
                }
                out.println(changes.isEmpty() ? "table " + name + " is transactional already: nothing changed"
                        : "table " + name + " changed:");
            }
            for (String c : changes) {
                out.println("  " + c);
            }
            // The client's own check, so that what this command calls transactional is what TTable accepts.
            new TTable(connection, name).close();
        } catch (IllegalArgumentException e) {
            throw new CliException("table " + name + " is still not fit for transactions: " + e.getMessage());
        }
        return 0;
    }

    /** As TTable requires: more than one version, no TTL, no NEW_VERSION_BEHAVIOR; and every version, to be sure. */
    private static boolean holdsTransactionalData(ColumnFamilyDescriptor f) {
        return f.getMaxVersions() == Integer.MAX_VALUE && f.getTimeToLive() == HConstants.FOREVER
                && !f.isNewVersionBehavior();
    }

    private static String ttl(ColumnFamilyDescriptor f) {
        return f.getTimeToLive() == HConstants.FOREVER ? "none" : f.getTimeToLive() + " s";
    }

    private static Optional<CoprocessorDescriptor> loaded(TableDescriptor table, String coprocessor) {
        return table.getCoprocessorDescriptors().stream().filter(c -> c.getClassName().equals(coprocessor))
                .findFirst();
    }

    /**
     * Sets one of the jar's coprocessors unless {@code skip}; one already loaded is replaced only when the jar or
     * settings asked for differ, so that running the command again leaves the table (and its regions) alone.
     */
    private void setCoprocessor(TableDescriptorBuilder b, String coprocessor, boolean skip,
                                Optional<CoprocessorDescriptor> loaded, List<String> changes, String what) {
        if (skip) {
            return;
        }
        CoprocessorDescriptorBuilder wanted = CoprocessorDescriptorBuilder.newBuilder(coprocessor)
                .setProperties(gcSettings);
        if (gcJar != null && !gcJar.isBlank()) {
            wanted.setJarPath(gcJar);
        }
        CoprocessorDescriptor w = wanted.build();
        if (loaded != null && loaded.isPresent()) {
            CoprocessorDescriptor have = loaded.get();
            boolean sameJar = have.getJarPath().equals(w.getJarPath());
            if (sameJar && (gcSettings.isEmpty() || have.getProperties().equals(w.getProperties()))) {
                return;
            }
            b.removeCoprocessor(coprocessor);
        }
        try {
            b.setCoprocessor(w);
        } catch (java.io.IOException e) {
            throw new CliException("cannot set the " + what + " on the table: " + e.getMessage());
        }
        changes.add(what + " " + coprocessor + " loaded from " + w.getJarPath()
                .orElse("the region servers' lib/") + (gcSettings.isEmpty() ? "" : " with " + gcSettings));
    }
}
