package io.sibyl.gc;

import io.sibyl.client.TransactionManager;
import org.apache.hadoop.conf.Configuration;

import java.util.Map;

/**
 * The garbage collector's settings, read from the region server's configuration merged with the coprocessor's
 * table-descriptor properties (keys in docs/gc.md). The oracle is found with the client's own keys.
 */
record GcSettings(boolean enabled, String oracleKey, long watermarkTimeoutMillis, long connectTimeoutMillis,
                  long retryMillis, long maxHeldCommits) {
    /** Set to false (e.g. as a coprocessor property of one table) to load the observer but remove nothing. */
    static final String ENABLED = "sibyl.gc.enabled";
    /** How long a flush or compaction waits for the oracle's low watermark (or a connection under way). */
    static final String WATERMARK_TIMEOUT_MS = "sibyl.gc.oracle.timeout.ms";
    /** How long one background attempt to reach the oracle may take. */
    static final String CONNECT_TIMEOUT_MS = "sibyl.gc.connect.timeout.ms";
    /** Pause after a failed attempt before flushes and compactions trigger the next one. */
    static final String RETRY_MS = "sibyl.gc.connect.retry.ms";
    /** How many commits the region server's replica may hold for a long-running transaction (docs/gc.md). */
    static final String MAX_HELD_COMMITS = "sibyl.gc.max.held.commits";

    /**
     * {@code conf} as the coprocessor sees it (the region server's settings under the table descriptor's
     * properties), and those properties alone ({@code tableProperties}), which decide how the oracle is found.
     */
    static GcSettings from(Configuration conf, Map<String, String> tableProperties) {
        return new GcSettings(conf.getBoolean(ENABLED, true), oracleKeyOf(oracleLookup(conf, tableProperties)),
                positive(conf, WATERMARK_TIMEOUT_MS, 2_000), positive(conf, CONNECT_TIMEOUT_MS, 10_000),
                positive(conf, RETRY_MS, 10_000), positive(conf, MAX_HELD_COMMITS, 2_097_152));
    }

    /**
     * The client's oracle keys as {@code conf} resolves them. A plain copy would lose them: a table coprocessor's
     * configuration layers the descriptor's properties over the region server's, and the copy constructor does not
     * see the layers. A table that names its oracle one way (an address, or a ZooKeeper ensemble) overrides the
     * region server's oracle named the other way: layered, both keys would be set, which the client refuses, and the
     * table would go without collection.
     */
    static Configuration oracleLookup(Configuration conf, Map<String, String> tableProperties) {
        Configuration c = new Configuration(false);
        for (String key : new String[] {TransactionManager.ORACLE_ADDRESS, TransactionManager.ORACLE_ZK_CONNECT,
                TransactionManager.ORACLE_LEADER_ZNODE, TransactionManager.ORACLE_ZK_SESSION_TIMEOUT_MS,
                TransactionManager.ORACLE_ZK_AUTH_FILE}) {
            String v = conf.get(key);
            if (v != null) {
                c.set(key, v);
            }
        }
        boolean address = tableProperties.containsKey(TransactionManager.ORACLE_ADDRESS);
        boolean zk = tableProperties.containsKey(TransactionManager.ORACLE_ZK_CONNECT);
        if (address && !zk) {
            c.unset(TransactionManager.ORACLE_ZK_CONNECT);
        } else if (zk && !address) {
            c.unset(TransactionManager.ORACLE_ADDRESS);
        }
        return c;
    }

    /** Names the oracle lookup, so that regions pointing at the same oracle share one connection. */
    private static String oracleKeyOf(Configuration conf) {
        String zk = conf.getTrimmed(TransactionManager.ORACLE_ZK_CONNECT, "");
        if (!zk.isEmpty()) {
            return "zk " + zk + " " + conf.getTrimmed(TransactionManager.ORACLE_LEADER_ZNODE,
                    TransactionManager.DEFAULT_LEADER_ZNODE);
        }
        return "address " + conf.getTrimmed(TransactionManager.ORACLE_ADDRESS, "");
    }

    private static long positive(Configuration conf, String key, long dflt) {
        long v;
        try {
            v = conf.getLong(key, dflt);
        } catch (NumberFormatException e) { // Hadoop's text names the value, not the key
            throw new IllegalArgumentException("invalid value '" + conf.get(key) + "' for " + key + ": must be a"
                    + " whole number (docs/gc.md)");
        }
        if (v < 1) {
            throw new IllegalArgumentException("invalid value " + v + " for " + key + ": must be >= 1 (docs/gc.md)");
        }
        return v;
    }
}
