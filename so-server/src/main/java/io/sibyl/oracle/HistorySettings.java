package io.sibyl.oracle;

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

    /** No reads of the past; one point per second and 64 MiB when enabled. */
    public static HistorySettings defaults() {
        return new HistorySettings(0, 1000, 64L << 20);
    }

    public HistorySettings {
        if (retentionMillis < 0 || retentionMillis > MAX_RETENTION_MILLIS) {
            throw new IllegalArgumentException("invalid value " + retentionMillis + " for history.retention.ms: must"
                    + " be 0 (no reads of the past) to " + MAX_RETENTION_MILLIS + " (see docs/operations.md)");
        }
        if (intervalMillis < 1 || intervalMillis > 3_600_000L) {
            throw new IllegalArgumentException("invalid value " + intervalMillis + " for history.interval.ms: must"
                    + " be 1 to 3600000 (see docs/operations.md)");
        }
        if (maxBytes < (1 << 20) || maxBytes > (1L << 40)) {
            throw new IllegalArgumentException("invalid value " + maxBytes + " for history.max.bytes: must be "
                    + (1 << 20) + " to " + (1L << 40) + " (see docs/operations.md)");
        }
    }

    /** True when the oracle keeps points of its past. */
    public boolean enabled() {
        return retentionMillis > 0;
    }
}
