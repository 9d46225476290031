package io.sibyl.client.oracle;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;

/**
 * How one oracle connection's frames travel: which thread writes the queued requests and which reads the replies.
 * {@link EventLoopTransport} hands both to a Netty event loop (TLS, shared loops, asynchronous users);
 * {@link WaitingThreadTransport} lets the thread that waits for a reply write its request and read the reply itself.
 */
interface FrameTransport {
    /** Requests were queued in the connection's {@link RequestPipeline}: see that they are written. */
    void requestsQueued();

    /**
     * A request that nobody waits for (a read-only transaction's {@code FINISH}) was queued: it may leave with the
     * next request instead, within a few milliseconds.
     */
    default void oneWayQueued() {
        requestsQueued();
    }

    /** Writes what {@link #oneWayQueued} left, if anything, as the connection is about to close (best effort). */
    default void flushLeftRequests() {
    }

    /**
     * Waits up to {@code timeoutNanos} for {@code reply}, a future of this connection's requests (or one derived from
     * it), as {@link CompletableFuture#get(long, java.util.concurrent.TimeUnit)} does.
     */
    <T> T await(CompletableFuture<T> reply, long timeoutNanos)
            throws InterruptedException, ExecutionException, TimeoutException;

    /** Runs {@code task} on the connection's own thread after {@code delayNanos}; false once it is closed. */
    boolean schedule(Runnable task, long delayNanos);

    /** The socket is connected and not closed. */
    boolean isActive();

    /** Closes the socket and stops the connection's threads; its loss is then reported to the client. */
    void close();
}
