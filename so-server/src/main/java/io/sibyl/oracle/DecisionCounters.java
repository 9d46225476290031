package io.sibyl.oracle;

/**
 * How many decisions of each kind the oracle has made: the counters of {@link OracleStats}, the metrics and
 * {@code bin/sibyl status}. {@link OracleState} counts on the sequencer thread; other threads read without
 * synchronization and get approximate figures, so that nothing on the request path pays for monitoring.
 */
final class DecisionCounters {
    long begins;
    /** BEGINs refused at a limit ({@link Decision#OVERLOADED} and the like). */
    long refusedBegins;
    long commits;
    /** Fast-path tickets handed out ({@link OracleState#ticket}). */
    long tickets;
    /** Every abort; the causes below count those they explain (a client's own abort is counted here only). */
    long aborts;
    long conflictAborts;
    long tooOldAborts;
    long disconnectAborts;
    long expiredAborts;

    /** Transactions with writes committed. */
    long commits() {
        return commits;
    }

    long aborts() {
        return aborts;
    }

    long tickets() {
        return tickets;
    }

    /** The counters with the state's sizes and positions and the server's figures, taken now. */
    OracleStats snapshot(int running, int abortedSet, int abortedRanges, int recentCommits, long lastTimestamp,
                         long tMax, long lowWatermark, int connections, long refusedConnections, long journalBlocks) {
        return new OracleStats(System.currentTimeMillis(), begins, refusedBegins, commits, aborts, conflictAborts,
                tooOldAborts, disconnectAborts, expiredAborts, running, abortedSet, abortedRanges, recentCommits,
                lastTimestamp, tMax, lowWatermark, connections, refusedConnections, journalBlocks);
    }
}
