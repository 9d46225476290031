package io.sibyl.embedded;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.HBaseTestingUtility;

import java.io.IOException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;

/**
 * An HBase 2.6 minicluster in this JVM (ZooKeeper, one master, one region server) for the tests, the benchmarks and the
 * demos. It runs on the local file system: the HDFS-backed minicluster (Hadoop 2.10) does not start with the library
 * pins BookKeeper needs on the same classpath (../shared/stack-notes.md), and starts slower.
 */
public final class EmbeddedHBase implements AutoCloseable {
    private final HBaseTestingUtility util;

    private EmbeddedHBase(HBaseTestingUtility util) {
        this.util = util;
    }

    /** Starts ZooKeeper and HBase with the base settings; returns once the region server serves. */
    public static EmbeddedHBase start() throws Exception {
        return start(c -> { });
    }

    /**
     * Like {@link #start()}, with {@code settings} applied on top of the base settings before anything starts, so the
     * master and the region server read them too (handler counts, client retries, what a coprocessor looks up).
     */
    public static EmbeddedHBase start(Consumer<Configuration> settings) throws Exception {
        HBaseTestingUtility util = new HBaseTestingUtility();
        Configuration c = util.getConfiguration();
        // The local file system has no hflush/hsync, which the WAL would otherwise insist on.
        c.setBoolean("hbase.unsafe.stream.capability.enforce", false);
        // No web UIs: on JDK 17 they need --add-opens java.base/java.lang, without which the master hangs forever.
        c.setInt("hbase.master.info.port", -1);
        c.setInt("hbase.regionserver.info.port", -1);
        settings.accept(c);
        util.startMiniZKCluster();
        util.startMiniHBaseCluster();
        return new EmbeddedHBase(util);
    }

    /** A fresh copy of the cluster's configuration, for a client connection with settings of its own. */
    public Configuration configuration() {
        return HBaseConfiguration.create(util.getConfiguration());
    }

    /** The client port of the in-process ZooKeeper. */
    public int zkPort() {
        return util.getZkCluster().getClientPort();
    }

    /** HBase's testing utility, for tests that start, move or kill servers or look into regions. */
    public HBaseTestingUtility util() {
        return util;
    }

    /**
     * For programs that print a report on slf4j-simple: sets the level of the minicluster's loggers and of
     * {@code more} (logger name to level) where the command line set none. Call it before anything creates a logger.
     */
    public static void quietLogging(Map<String, String> more) {
        Map<String, String> levels = new LinkedHashMap<>();
        // At INFO and WARN the minicluster talks about itself while it starts and stops (no servers yet, interrupted
        // cleaners...), which would drown the report.
        levels.put("org.apache.hadoop", "error");
        levels.put("SecurityLogger", "error");
        levels.put("org.apache.zookeeper", "error");
        levels.put("org.apache.hbase", "error");
        levels.put("org.eclipse.jetty", "error");
        // At System.exit, HBase's ZooKeeper watcher logs its stopped executor's rejection as an error.
        levels.put("org.apache.zookeeper.ClientCnxn", "off");
        levels.putAll(more);
        levels.forEach((logger, level) -> {
            String key = "org.slf4j.simpleLogger.log." + logger;
            if (System.getProperty(key) == null) {
                System.setProperty(key, level);
            }
        });
    }

    /** Stops HBase and ZooKeeper. */
    @Override
    public void close() throws IOException {
        util.shutdownMiniCluster();
    }
}
