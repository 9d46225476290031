package io.sibyl.oracle;

import java.util.Properties;

import static io.sibyl.oracle.OracleSettings.HISTORY_INTERVAL_MS;
import static io.sibyl.oracle.OracleSettings.HISTORY_MAX_BYTES;
import static io.sibyl.oracle.OracleSettings.HISTORY_RETENTION_MS;

/**
 * The {@code history.*} settings: whether, how far back and how finely the oracle keeps points of its past that
 * read-only transactions can read at (reads of the past, docs/user-guide.md), and how much memory they may take.
 *
 * @param retentionMillis {@code history.retention.ms}: how far back a transaction may read (0 = no reads of the
 *                        past); the garbage collector keeps what the oldest point reads, for this long plus
 *                        {@code transaction.max.age.ms}
 * @param intervalMillis  {@code history.interval.ms}: at most one point is recorded per interval while commits
 *                        arrive (a read at a time between two points reads at the earlier one); an idle oracle
 *                        records none, and a read of the present is always exact
 * @param maxBytes        {@code history.max.bytes}: memory the points may take; beyond it the oldest are dropped
 *                        (the retention shrinks, with a warning)
 */
public record HistorySettings(long retentionMillis, long intervalMillis, long maxBytes) {
    /** Longest retention: 30 days. */
    public static final long MAX_RETENTION_MILLIS = 30L * 86_400_000L;

    /** No reads of the past; one point per second and 64 MiB when enabled ({@link OracleSettings}' defaults). */
    public static HistorySettings defaults() {
        return fromProperties(new Properties());
    }

    public HistorySettings {
        HISTORY_RETENTION_MS.require(retentionMillis);
        HISTORY_INTERVAL_MS.require(intervalMillis);
        HISTORY_MAX_BYTES.require(maxBytes);
    }

    /** The settings {@code p} gives, defaults for the keys it lacks. */
    static HistorySettings fromProperties(Properties p) {
        return new HistorySettings(HISTORY_RETENTION_MS.read(p), HISTORY_INTERVAL_MS.read(p),
                HISTORY_MAX_BYTES.read(p));
    }

    /** True when the oracle keeps points of its past. */
    public boolean enabled() {
        return retentionMillis > 0;
    }
}
