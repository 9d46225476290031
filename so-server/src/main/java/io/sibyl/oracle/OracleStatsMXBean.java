package io.sibyl.oracle;

/**
 * The status oracle's figures over JMX, as {@code io.sibyl:type=StatusOracle,port=PORT} (see {@link OracleStats} for
 * what each one means). The values of the oracle's meters ({@link OracleMetrics}), as its Prometheus endpoint serves
 * them: read by the oracle's own state owner, at most a quarter of a second old.
 */
public interface OracleStatsMXBean {
    long getBegins();

    long getRefusedBegins();

    long getCommits();

    long getAborts();

    long getConflictAborts();

    long getTooOldAborts();

    long getDisconnectAborts();

    /** Running transactions aborted because they outlived {@code transaction.max.age.ms}. */
    long getExpiredAborts();

    int getRunningTransactions();

    int getAbortedSetSize();

    int getAbortedRanges();

    int getRecentCommits();

    long getLastTimestamp();

    long getTMax();

    long getLowWatermark();

    int getConnections();

    /** Connections refused because {@code max.connections} were open, since this oracle started. */
    long getRefusedConnections();

    long getJournalBlocks();
}
