package io.sibyl.oracle;

import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.Properties;
import java.util.Set;

import static io.sibyl.oracle.OracleSettings.RANGE_SWEEP_EXCLUDE;
import static io.sibyl.oracle.OracleSettings.RANGE_SWEEP_HBASE_SITE;
import static io.sibyl.oracle.OracleSettings.RANGE_SWEEP_INTERVAL_MS;
import static io.sibyl.oracle.OracleSettings.RANGE_SWEEP_SETTLE_MS;
import static io.sibyl.oracle.OracleSettings.RANGE_SWEEP_TABLES;

/**
 * The {@code range.sweep.*} settings: whether a leading oracle sweeps the aborted ranges of failovers in the
 * background, which tables, how patiently and against which HBase cluster (docs/operations.md, docs/gc.md).
 *
 * @param tables         {@code range.sweep.tables}: empty = no background sweep; {@code *} = every user table that can
 *                       hold transactional data; else the tables, comma-separated
 * @param excluded       {@code range.sweep.exclude}: tables never scanned
 * @param settleMillis   {@code range.sweep.settle.ms}: how long a range must stay sweepable before it is swept
 * @param intervalMillis {@code range.sweep.interval.ms}: how often the sweep looks for ranges
 * @param hbaseSite      {@code range.sweep.hbase.site}: the HBase cluster's hbase-site.xml; empty: the one in
 *                       {@code $HBASE_CONF_DIR}
 */
public record RangeSweepSettings(String tables, String excluded, long settleMillis, long intervalMillis,
                                 String hbaseSite) {
    /** {@code range.sweep.tables} value that sweeps every table that can hold transactional data. */
    public static final String ALL_TABLES = "*";
    /** The sweeper's own default settle time (bin/sibyl-sweep's), 10 minutes: see docs/gc.md, "Settle". */
    public static final long DEFAULT_SETTLE_MS = 600_000;

    /** No background sweep ({@link OracleSettings}' defaults). */
    public static RangeSweepSettings defaults() {
        return fromProperties(new Properties());
    }

    /** The settings {@code p} gives, defaults for the keys it lacks. */
    static RangeSweepSettings fromProperties(Properties p) {
        return new RangeSweepSettings(RANGE_SWEEP_TABLES.read(p), RANGE_SWEEP_EXCLUDE.read(p),
                RANGE_SWEEP_SETTLE_MS.read(p), RANGE_SWEEP_INTERVAL_MS.read(p), RANGE_SWEEP_HBASE_SITE.read(p));
    }

    public RangeSweepSettings {
        if (tables == null || excluded == null || hbaseSite == null) {
            throw new IllegalArgumentException("range.sweep.tables, range.sweep.exclude and range.sweep.hbase.site"
                    + " are required (empty: none)");
        }
        tables = tables.trim();
        excluded = excluded.trim();
        hbaseSite = hbaseSite.trim();
        RANGE_SWEEP_SETTLE_MS.require(settleMillis);
        RANGE_SWEEP_INTERVAL_MS.require(intervalMillis);
    }

    /** True when a leading oracle sweeps its aborted ranges in the background. */
    public boolean enabled() {
        return !tables.isEmpty();
    }

    /** The tables named; empty for {@link #ALL_TABLES}. */
    public Set<String> tableSet() {
        return ALL_TABLES.equals(tables) ? Set.of() : split(tables);
    }

    /** The tables excluded. */
    public Set<String> excludedSet() {
        return split(excluded);
    }

    private static Set<String> split(String list) {
        Set<String> s = new LinkedHashSet<>();
        Arrays.stream(list.split(",")).map(String::trim).filter(x -> !x.isEmpty()).forEach(s::add);
        return s;
    }
}
