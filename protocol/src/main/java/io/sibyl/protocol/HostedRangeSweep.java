package io.sibyl.protocol;

import java.util.ServiceLoader;
import java.util.Set;

/**
 * The background sweep of aborted ranges that a leading oracle hosts (docs/gc.md, "Aborted ranges swept by the
 * leader"). Its code is the client's abort sweeper, which needs HBase; the oracle finds it through
 * {@link ServiceLoader}, so that so-server builds without HBase and an oracle that does not sweep never loads it.
 */
public interface HostedRangeSweep {

    /**
     * Starts sweeping in the background; what it returns stops it. The sweep connects to the oracle at
     * {@code settings.oracleHost():oraclePort()} as an admin and reports what it does to {@code progress}.
     */
    AutoCloseable start(Settings settings, Progress progress) throws Exception;

    /** The first implementation on the class path, or null when there is none (an oracle built without the client). */
    static HostedRangeSweep find() {
        return ServiceLoader.load(HostedRangeSweep.class).findFirst().orElse(null);
    }

    /**
     * What the oracle's {@code range.sweep.*} settings say (docs/operations.md).
     *
     * @param oracleHost      host of the oracle that hosts the sweep (its advertised host: the name its TLS
     *                        certificate carries)
     * @param oraclePort      its client port
     * @param adminSecretFile its {@code admin.secret.file}: the sweep reports ranges cleaned up as an admin
     * @param tables          tables to scan; empty: every user table that can hold transactional data
     * @param excluded        tables never to scan
     * @param settleMillis    how long a range must stay a candidate before it is swept (the sweeper's settle time)
     * @param intervalMillis  how often to look for ranges to sweep
     * @param hbaseSite       an {@code hbase-site.xml} naming the HBase cluster (and any {@code sibyl.client.*}
     *                        settings, such as TLS); empty: {@code $HBASE_CONF_DIR/hbase-site.xml}
     */
    record Settings(String oracleHost, int oraclePort, String adminSecretFile, Set<String> tables,
                    Set<String> excluded, long settleMillis, long intervalMillis, String hbaseSite) {
    }

    /** What the sweep is doing, as {@code bin/sibyl status} and the metrics show it (codes are the gauge's values). */
    enum Phase {
        /** No aborted range is waiting. */
        IDLE,
        /** Ranges wait for the low watermark to pass their end (readers of the earlier oracle, reader.grace.ms). */
        WAITING_FOR_WATERMARK,
        /** Candidates found; waiting the settle time before they are taken again. */
        SETTLING,
        /** Scanning tables and deleting the versions of the ranges' in-doubt transactions. */
        SCANNING,
        /** The last attempt failed (logged); it is tried again after the interval. */
        FAILED
    }

    /** Where the sweep reports its progress; called from the sweep's own thread. */
    interface Progress {
        /** The sweep moved to {@code phase}, with {@code ranges} aborted ranges waiting. */
        void phase(Phase phase, int ranges);

        /** A sweep reported {@code ranges} ranges cleaned up, having deleted {@code versions} versions. */
        void swept(int ranges, long versions);
    }
}
