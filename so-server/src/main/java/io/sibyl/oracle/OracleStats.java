package io.sibyl.oracle;

/**
 * The status oracle's counters and state sizes at one moment, taken by the thread that owns the state (so they agree
 * with each other): what {@code so-server} logs every {@code stats.log.interval.ms} and exposes over JMX.
 *
 * @param takenAtMillis     wall-clock time of the snapshot
 * @param begins            start timestamps handed out since this oracle started
 * @param refusedBegins     BEGINs refused because max.running.transactions were running, or their connection held
 *                          max.running.transactions.per.connection
 * @param commits           transactions with writes committed (read-only ones commit at their clients)
 * @param aborts            transactions aborted, for every reason below and at their clients' request
 * @param conflictAborts    aborts for a write-write conflict
 * @param tooOldAborts      aborts because T_max passed the start timestamp (conflict-table or commit-window eviction)
 * @param disconnectAborts  running transactions aborted because their client's connection was lost
 * @param expiredAborts     running transactions aborted because they outlived transaction.max.age.ms
 * @param running           transactions started and not yet finished
 * @param abortedSet        aborted transactions the oracle (and every replica) still remembers
 * @param abortedRanges     ranges of transactions in doubt at earlier oracles' crashes, kept as aborted
 * @param recentCommits     commits remembered above T_max
 * @param lastTimestamp     the last timestamp handed out
 * @param tMax              T_max: below it, a writer that is not aborted counts as committed
 * @param lowWatermark      the oldest snapshot still readable; the garbage collector keeps what it needs
 * @param connections       open client connections
 * @param refusedConnections connections refused since this oracle started because max.connections were open
 * @param journalBlocks     decision blocks the journal accepted
 */
public record OracleStats(long takenAtMillis, long begins, long refusedBegins, long commits, long aborts,
                          long conflictAborts, long tooOldAborts, long disconnectAborts, long expiredAborts,
                          int running, int abortedSet,
                          int abortedRanges, int recentCommits, long lastTimestamp, long tMax, long lowWatermark,
                          int connections, long refusedConnections, long journalBlocks) {

    /** One log line: these figures, with per-second rates since {@code earlier} (or none when it is null). */
    public String describe(OracleStats earlier) {
        StringBuilder b = new StringBuilder();
        double seconds = earlier == null ? 0 : (takenAtMillis - earlier.takenAtMillis) / 1000.0;
        if (seconds > 0) {
            b.append(String.format("%.0f begins/s, %.0f commits/s, %.0f aborts/s (%d conflicts, %d too old,"
                            + " %d on disconnect, %d past the max age, %d refused begins in %.0f s); ",
                    (begins - earlier.begins) / seconds, (commits - earlier.commits) / seconds,
                    (aborts - earlier.aborts) / seconds, conflictAborts - earlier.conflictAborts,
                    tooOldAborts - earlier.tooOldAborts, disconnectAborts - earlier.disconnectAborts,
                    expiredAborts - earlier.expiredAborts,
                    refusedBegins - earlier.refusedBegins, seconds));
        }
        b.append("totals: ").append(begins).append(" begins, ").append(commits).append(" commits, ").append(aborts)
                .append(" aborts; now: ").append(running).append(" running, ").append(abortedSet)
                .append(" in the aborted set, ").append(abortedRanges).append(" aborted ranges, ")
                .append(recentCommits).append(" recent commits, ").append(connections).append(" connections (")
                .append(refusedConnections).append(" refused in all);")
                .append(" last timestamp ").append(lastTimestamp).append(", T_max ").append(tMax)
                .append(", low watermark ").append(lowWatermark).append(", ").append(journalBlocks)
                .append(" journal blocks");
        return b.toString();
    }
}
