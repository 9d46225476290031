package io.sibyl.oracle;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.management.ManagementFactory;
import java.util.function.Supplier;
import javax.management.JMException;
import javax.management.MBeanServer;
import javax.management.ObjectName;

/** Serves {@link OracleStatsMXBean} from one snapshot per quarter second: a console reading every attribute asks once. */
final class OracleStatsMBean implements OracleStatsMXBean {
    private static final Logger LOG = LoggerFactory.getLogger(OracleStatsMBean.class);
    private static final long FRESH_NANOS = 250_000_000L;

    private final Supplier<OracleStats> source;
    private OracleStats cached; // guarded by this
    private long cachedAtNanos;

    OracleStatsMBean(Supplier<OracleStats> source) {
        this.source = source;
    }

    /** The name the oracle listening on {@code port} registers under. */
    static ObjectName name(int port) {
        try {
            return new ObjectName("io.sibyl:type=StatusOracle,port=" + port);
        } catch (JMException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Registers the statistics of {@code server}; returns the name, or null if JMX refused (logged, not fatal). */
    static ObjectName register(OracleServer server, int port) {
        ObjectName name = name(port);
        try {
            MBeanServer mbeans = ManagementFactory.getPlatformMBeanServer();
            if (mbeans.isRegistered(name)) {
                mbeans.unregisterMBean(name); // left by an oracle of this JVM that was not closed (tests)
            }
            mbeans.registerMBean(new OracleStatsMBean(server::stats), name);
            return name;
        } catch (JMException e) {
            LOG.warn("oracle statistics not available over JMX as {}: {}", name, e.toString());
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

    private synchronized OracleStats stats() {
        long now = System.nanoTime();
        if (cached == null || now - cachedAtNanos > FRESH_NANOS) {
            cached = source.get();
            cachedAtNanos = now;
        }
        return cached;
    }

    @Override
    public long getBegins() {
        return stats().begins();
    }

    @Override
    public long getRefusedBegins() {
        return stats().refusedBegins();
    }

    @Override
    public long getCommits() {
        return stats().commits();
    }

    @Override
    public long getAborts() {
        return stats().aborts();
    }

    @Override
    public long getConflictAborts() {
        return stats().conflictAborts();
    }

    @Override
    public long getTooOldAborts() {
        return stats().tooOldAborts();
    }

    @Override
    public long getDisconnectAborts() {
        return stats().disconnectAborts();
    }

    @Override
    public long getExpiredAborts() {
        return stats().expiredAborts();
    }

    @Override
    public int getRunningTransactions() {
        return stats().running();
    }

    @Override
    public int getAbortedSetSize() {
        return stats().abortedSet();
    }

    @Override
    public int getAbortedRanges() {
        return stats().abortedRanges();
    }

    @Override
    public int getRecentCommits() {
        return stats().recentCommits();
    }

    @Override
    public long getLastTimestamp() {
        return stats().lastTimestamp();
    }

    @Override
    public long getTMax() {
        return stats().tMax();
    }

    @Override
    public long getLowWatermark() {
        return stats().lowWatermark();
    }

    @Override
    public int getConnections() {
        return stats().connections();
    }

    @Override
    public long getRefusedConnections() {
        return stats().refusedConnections();
    }

    @Override
    public long getJournalBlocks() {
        return stats().journalBlocks();
    }
}
