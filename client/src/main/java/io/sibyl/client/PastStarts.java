package io.sibyl.client;

import io.sibyl.client.oracle.HistoryPoint;
import io.sibyl.client.oracle.OracleClient;
import io.sibyl.client.oracle.OracleException;
import io.sibyl.protocol.Wire;

import java.time.Instant;
import java.util.concurrent.CompletionException;

/** Begins read-only transactions that read the past, at a point of the oracle's history ({@code beginAt}). */
final class PastStarts {
    private final BeginContext context;

    PastStarts(BeginContext context) {
        this.context = context;
    }

    /** See {@link TransactionManager#beginAt(long)}. */
    HBaseTransaction atTimestamp(long timestamp) {
        if (timestamp <= 0) {
            throw new IllegalArgumentException("timestamp " + timestamp + " is not one the oracle hands out: pass a"
                    + " transaction's start or commit timestamp (positive)");
        }
        return at(Wire.HISTORY_AT_TIMESTAMP, timestamp);
    }

    /** See {@link TransactionManager#beginAt(Instant)}. */
    HBaseTransaction atTime(Instant time) {
        if (time == null) {
            throw new NullPointerException("time is null: pass the Instant whose state to read, e.g."
                    + " Instant.now().minusSeconds(60)");
        }
        long millis = time.toEpochMilli();
        if (millis < 0) {
            throw new IllegalArgumentException("time " + time + " is before 1970: no oracle keeps history that old");
        }
        return at(Wire.HISTORY_AT_TIME, millis);
    }

    private HBaseTransaction at(byte kind, long value) {
        context.running().checkOpen();
        long deadline = context.failoverDeadline(System.nanoTime());
        HBaseTransaction tx;
        while (true) {
            OracleClient client = context.oracle().current();
            // Registered before the oracle answers, so before anything is fetched: the replica keeps aborts it
            // forgets meanwhile for this read (an aborted version fetched before its delete must stay invisible).
            long token = client.replica().pastReaderBegins();
            long sentNanos = System.nanoTime();
            try {
                HistoryPoint point = context.replies().await(client.historyPoint(kind, value), client,
                        "a history query");
                tx = HBaseTransaction.past(context.manager(), client, point, token, sentNanos);
                break;
            } catch (CompletionException e) {
                client.replica().pastReaderEnds(token);
                if (e.getCause() instanceof OracleException oe && oe.code() == Wire.ERR_HISTORY) {
                    throw new HistoryUnavailableException("cannot read the past at " + (kind == Wire.HISTORY_AT_TIME
                            ? "time " + Instant.ofEpochMilli(value) : "timestamp " + value) + ": "
                            + oe.getMessage());
                }
                if (!BeginContext.retriesOnAnotherOracle(e, client, deadline)) {
                    throw BeginContext.unwrapped(e);
                }
            }
        }
        return context.running().track(tx);
    }
}
