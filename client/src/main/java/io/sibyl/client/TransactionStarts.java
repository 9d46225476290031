package io.sibyl.client;

import io.sibyl.client.oracle.OracleClient;

import java.util.concurrent.CompletionException;

/**
 * Begins read-write transactions (one round trip for the start timestamp), waiting out an oracle failover, and
 * latest-row reads.
 */
final class TransactionStarts {
    private final BeginContext context;
    private final ClientMetrics metrics;

    TransactionStarts(BeginContext context, ClientMetrics metrics) {
        this.context = context;
        this.metrics = metrics;
    }

    /** A read-write transaction at {@code isolation}; a begin lost with its connection is sent to the next oracle. */
    HBaseTransaction readWrite(IsolationLevel isolation) {
        context.running().checkOpen();
        long begunNanos = System.nanoTime();
        long deadline = context.failoverDeadline(begunNanos);
        HBaseTransaction tx;
        while (true) {
            OracleClient client = context.oracle().current();
            long sentNanos = System.nanoTime(); // no later than the oracle handing out the timestamp: its age counts
            try {
                tx = new HBaseTransaction(context.manager(), TransactionKind.READ_WRITE, client,
                        context.replies().await(client.begin(), client, "a begin"), sentNanos, isolation);
                break;
            } catch (CompletionException e) {
                if (!BeginContext.retriesOnAnotherOracle(e, client, deadline)) {
                    throw BeginContext.unwrapped(e);
                }
            }
        }
        metrics.begun(begunNanos);
        return context.running().track(tx);
    }

    /** A transaction that reads one row's latest committed state, with no round trip in the common case. */
    HBaseTransaction latestRow() {
        context.running().checkOpen();
        return context.running().track(HBaseTransaction.latestRow(context.manager(), context.oracle().current()));
    }
}
