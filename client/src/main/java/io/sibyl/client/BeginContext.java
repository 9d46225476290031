package io.sibyl.client;

import io.sibyl.client.oracle.OracleClient;
import io.sibyl.client.oracle.OracleConnection;
import io.sibyl.client.oracle.OracleUnavailableException;

import java.util.concurrent.CompletionException;

/**
 * What every way of beginning a transaction uses: the manager its transactions belong to, the link to the oracle,
 * the wait for replies, the settings and the running set; and the rule by which a begin lost with its connection is
 * tried again on the oracle that took over.
 */
record BeginContext(TransactionManager manager, OracleConnection oracle, OracleReplies replies,
                    ClientSettings settings, RunningTransactions running) {

    /** When a begin started at {@code nowNanos} stops waiting for an oracle to take over. */
    long failoverDeadline(long nowNanos) {
        return nowNanos + settings.failoverTimeoutMillis() * 1_000_000L;
    }

    /**
     * True if a begin sent to {@code client} that failed with {@code e} is tried again on the current oracle: the
     * connection was lost under it (which leaves nothing behind: the oracle aborts what a lost connection ran) and
     * the failover timeout is not over.
     */
    static boolean retriesOnAnotherOracle(CompletionException e, OracleClient client, long deadline) {
        boolean lost = e.getCause() instanceof OracleUnavailableException && !client.isOpen();
        return lost && System.nanoTime() <= deadline;
    }

    /** What a failed begin throws: the cause when it is unchecked, as the caller would have met it. */
    static RuntimeException unwrapped(CompletionException e) {
        return e.getCause() instanceof RuntimeException re ? re : e;
    }
}
