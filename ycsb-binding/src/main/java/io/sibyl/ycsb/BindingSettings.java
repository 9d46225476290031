package io.sibyl.ycsb;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;

import java.util.Map;
import java.util.Properties;
import java.util.TreeMap;

/**
 * The YCSB properties {@link SibylClient} reads: the table and column family, and every {@code hbase.*},
 * {@code zookeeper.*} and {@code sibyl.*} property, passed as is into the HBase {@link Configuration} that the
 * {@code TransactionManager} is built from (where it finds HBase and the oracle). {@code connectionKey} names those
 * passed-through properties, so that clients with the same ones can tell they would connect the same way.
 */
public record BindingSettings(String table, String family, Configuration hbase, String connectionKey,
                              boolean latestReads, boolean readOnlyScans, boolean singleRowWrites) {
    /** YCSB's own property for the table (CoreWorkload reads it too). */
    public static final String TABLE = "table";
    /** Default of {@value #TABLE}, as in YCSB's CoreWorkload. */
    public static final String DEFAULT_TABLE = "usertable";
    /** The column family holding YCSB's fields; the same property name as YCSB's HBase bindings. */
    public static final String COLUMN_FAMILY = "columnfamily";
    /** Default of {@value #COLUMN_FAMILY}. */
    public static final String DEFAULT_COLUMN_FAMILY = "family";
    /**
     * How a read outside a transaction scope runs: {@code latest} (default) with {@code TTable.getLatest}, the
     * fast path (linearizable, no round trip to the oracle in the common case), or {@code transaction}: a transaction
     * of its own (a begin round trip).
     */
    public static final String READS = "sibyl.ycsb.reads";
    /**
     * How a scan outside a transaction scope runs: {@code transaction} (default), a transaction of its own, or
     * {@code readonly}: a read-only transaction from the client's replica (no begin round trip, staleness bounded by
     * sibyl.client.readonly.max.staleness.ms).
     */
    public static final String SCANS = "sibyl.ycsb.scans";
    /**
     * How an insert, update or delete outside a transaction scope runs: {@code single-row} (default), committed by
     * the region server when the table loads the fast-path coprocessor (else as below), or {@code transaction}: a
     * transaction of its own (a begin and a commit round trip).
     */
    public static final String WRITES = "sibyl.ycsb.writes";

    private static final String[] PASSED_THROUGH = {"hbase.", "zookeeper.", "sibyl."};

    /** Reads the settings from YCSB's properties (the {@code -P} files and {@code -p} overrides). */
    public static BindingSettings from(Properties p) {
        Configuration conf = HBaseConfiguration.create();
        Map<String, String> passed = new TreeMap<>();
        for (String key : p.stringPropertyNames()) {
            for (String prefix : PASSED_THROUGH) {
                if (key.startsWith(prefix)) {
                    conf.set(key, p.getProperty(key));
                    passed.put(key, p.getProperty(key));
                }
            }
        }
        String family = p.getProperty(COLUMN_FAMILY, DEFAULT_COLUMN_FAMILY).trim();
        if (family.isEmpty()) {
            throw new IllegalArgumentException(COLUMN_FAMILY + " is empty: name the column family of the YCSB fields");
        }
        boolean latestReads = choice(p, READS, "latest", "transaction").equals("latest");
        boolean readOnlyScans = choice(p, SCANS, "transaction", "readonly").equals("readonly");
        boolean singleRowWrites = choice(p, WRITES, "single-row", "transaction").equals("single-row");
        return new BindingSettings(p.getProperty(TABLE, DEFAULT_TABLE).trim(), family, conf, passed.toString(),
                latestReads, readOnlyScans, singleRowWrites);
    }

    /** The value of {@code key}: {@code dflt} when unset, else one of {@code dflt} and {@code other}. */
    private static String choice(Properties p, String key, String dflt, String other) {
        String v = p.getProperty(key, dflt).trim().toLowerCase(java.util.Locale.ROOT);
        if (!v.equals(dflt) && !v.equals(other)) {
            throw new IllegalArgumentException("invalid value '" + v + "' for " + key + ": must be " + dflt + " or "
                    + other + " (docs/ycsb.md)");
        }
        return v;
    }

    /** Where HBase is, for messages: the ZooKeeper quorum and client port. */
    public String hbaseLocation() {
        return hbase.get("hbase.zookeeper.quorum", "localhost") + " (ZooKeeper client port "
                + hbase.get("hbase.zookeeper.property.clientPort", "2181") + ")";
    }

    /** Where the oracle is looked up, for messages: the ZooKeeper ensemble or the single address, as set. */
    public String oracleLocation() {
        String zk = hbase.getTrimmed("sibyl.oracle.zk.connect", "");
        String address = hbase.getTrimmed("sibyl.oracle.address", "");
        return !zk.isEmpty() ? "ZooKeeper " + zk : !address.isEmpty() ? address : "(neither sibyl.oracle.address nor"
                + " sibyl.oracle.zk.connect set)";
    }
}
