package io.sibyl.oracle;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.management.ManagementFactory;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/**
 * Serves {@link OracleStatsMXBean} from the oracle's meters ({@link OracleMetrics}): JMX and the Prometheus endpoint
 * show the same figures, read from the sequencer at most every quarter second.
 */
final class OracleStatsMBean implements OracleStatsMXBean {
    private static final Logger LOG = LoggerFactory.getLogger(OracleStatsMBean.class);

    private final OracleMetrics metrics;

    OracleStatsMBean(OracleMetrics metrics) {
        this.metrics = metrics;
    }

    /** The name the oracle listening on {@code port} registers under. */
    static ObjectName name(int port) {
        return objectName("io.sibyl:type=StatusOracle,port=" + port);
    }

    /** {@code name} as a JMX name; the names here are constants and a port, always valid. */
    static ObjectName objectName(String name) {
        try {
            return new ObjectName(name);
        } catch (JMException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Registers the figures of {@code metrics}; returns the name, or null if JMX refused (logged, not fatal). */
    static ObjectName register(OracleMetrics metrics, int port) {
        return register(new OracleStatsMBean(metrics), name(port));
    }

    /** Registers {@code bean} as {@code name}; returns the name, or null if JMX refused (logged, not fatal). */
    static ObjectName register(Object bean, ObjectName name) {
        try {
            MBeanServer mbeans = ManagementFactory.getPlatformMBeanServer();
            if (mbeans.isRegistered(name)) {
                mbeans.unregisterMBean(name); // left by an oracle of this JVM that was not closed (tests)
            }
            mbeans.registerMBean(bean, name);
            return name;
        } catch (JMException e) {
            LOG.warn("oracle figures not available over JMX as {}: {}", name, e.toString());
            return null;
        }
    }

    static void unregister(ObjectName name) {
        if (name == null) {
            return;
        }
        try {
            ManagementFactory.getPlatformMBeanServer().unregisterMBean(name);
        } catch (JMException e) {
            LOG.debug("unregistering {}: {}", name, e.toString());
        }
    }

    private long count(String name, String... tags) {
        return (long) metrics.value(name, tags);
    }

    @Override
    public long getBegins() {
        return count(OracleMetrics.BEGINS);
    }

    @Override
    public long getRefusedBegins() {
        return count(OracleMetrics.BEGINS_REFUSED);
    }

    @Override
    public long getCommits() {
        return count(OracleMetrics.COMMITS);
    }

    @Override
    public long getAborts() {
        return (long) metrics.sum(OracleMetrics.ABORTS);
    }

    @Override
    public long getConflictAborts() {
        return count(OracleMetrics.ABORTS, "reason", "conflict");
    }

    @Override
    public long getTooOldAborts() {
        return count(OracleMetrics.ABORTS, "reason", "too_old");
    }

    @Override
    public long getDisconnectAborts() {
        return count(OracleMetrics.ABORTS, "reason", "disconnect");
    }

    @Override
    public long getExpiredAborts() {
        return count(OracleMetrics.ABORTS, "reason", "expired");
    }

    @Override
    public int getRunningTransactions() {
        return (int) count(OracleMetrics.RUNNING);
    }

    @Override
    public int getAbortedSetSize() {
        return (int) count(OracleMetrics.ABORTED);
    }

    @Override
    public int getAbortedRanges() {
        return (int) count(OracleMetrics.ABORTED_RANGES);
    }

    @Override
    public int getRecentCommits() {
        return (int) count(OracleMetrics.RECENT_COMMITS);
    }

    @Override
    public long getLastTimestamp() {
        return count(OracleMetrics.TIMESTAMP_LAST);
    }

    @Override
    public long getTMax() {
        return count(OracleMetrics.TMAX);
    }

    @Override
    public long getLowWatermark() {
        return count(OracleMetrics.LOW_WATERMARK);
    }

    @Override
    public int getConnections() {
        return (int) count(OracleMetrics.CONNECTIONS);
    }

    @Override
    public long getRefusedConnections() {
        return count(OracleMetrics.CONNECTIONS_REFUSED);
    }

    @Override
    public long getJournalBlocks() {
        return count(OracleMetrics.JOURNAL_BLOCKS);
    }
}
