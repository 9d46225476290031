package io.sibyl.client;

import io.sibyl.client.oracle.OracleClient;
import io.sibyl.client.oracle.OracleUnavailableException;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

/** Waits for the oracle's replies, for at most {@value TransactionManager#ORACLE_TIMEOUT_MS} each. */
final class OracleReplies {
    private final long timeoutMillis;

    OracleReplies(long timeoutMillis) {
        this.timeoutMillis = timeoutMillis;
    }

    /**
     * Waits for the oracle's reply (reading it on this thread where {@code client} lets it:
     * {@link OracleClient#await}), as {@code join} would, but for at most {@code sibyl.client.oracle.timeout.ms}. An
     * oracle that stays silent that long is treated as lost (frozen, or cut off with its connection still open): the
     * connection is dropped, so this and every other request on it fail as after a lost connection (begins retry
     * elsewhere, commits are resolved as in doubt) and the next request connects to whichever oracle leads.
     *
     * @throws CompletionException with the failure, an {@link OracleUnavailableException} on timeout
     */
    <T> T await(CompletableFuture<T> reply, OracleClient client, String what) {
        long deadline = System.nanoTime() + timeoutMillis * 1_000_000L;
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return client.await(reply, Math.max(0, deadline - System.nanoTime()));
                } catch (InterruptedException e) {
                    interrupted = true; // like join: the reply decides what happened, so keep waiting for it
                } catch (ExecutionException e) {
                    throw new CompletionException(e.getCause());
                } catch (TimeoutException e) {
                    String reason = "the oracle at " + client.address() + " did not answer " + what + " within "
                            + timeoutMillis + " ms (" + TransactionManager.ORACLE_TIMEOUT_MS + "), so the connection"
                            + " to it was dropped";
                    TransactionManager.LOG.warn(reason);
                    client.closeBecause(reason);
                    throw new CompletionException(new OracleUnavailableException(reason));
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
