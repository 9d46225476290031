package io.sibyl.client.oracle;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;

import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A connection whose Netty event loop writes the queued requests (many per frame when several wait) and reads the
 * replies, completing their futures on its thread: the transport for TLS, for clients sharing an event loop group,
 * and for clients that mostly do not wait for their replies (the region servers' tickets).
 */
final class EventLoopTransport implements FrameTransport {
    private final Channel channel;
    private final EventLoop loop;
    private final RequestPipeline requests;
    /** The loop of this connection alone, shut down with it; null when the loop is shared. */
    private final EventLoopGroup ownGroup;
    private final OracleClient client;
    private final AtomicBoolean flushScheduled = new AtomicBoolean();
    private final Runnable flushTask = this::flush;
    private final RequestPipeline.FrameSink sink;

    EventLoopTransport(Channel channel, EventLoopGroup ownGroup, RequestPipeline requests, OracleClient client) {
        this.channel = channel;
        this.loop = channel.eventLoop();
        this.ownGroup = ownGroup;
        this.requests = requests;
        this.client = client;
        this.sink = (ByteBuf frame, boolean last) -> {
            if (last) {
                channel.writeAndFlush(frame, channel.voidPromise());
            } else {
                channel.write(frame, channel.voidPromise());
            }
        };
    }

    /** Sends {@code frame} as it is (the handshake, before any request). */
    void sendNow(ByteBuf frame) {
        channel.writeAndFlush(frame);
    }

    @Override
    public void requestsQueued() {
        if (!flushScheduled.get() && flushScheduled.compareAndSet(false, true)) {
            try {
                loop.execute(flushTask);
            } catch (RejectedExecutionException e) {
                flushScheduled.set(false); // closed meanwhile: the pipeline fails the request
            }
        }
    }

    private void flush() {
        flushScheduled.set(false);
        requests.flushOutgoing(channel.alloc(), sink);
    }

    @Override
    public <T> T await(CompletableFuture<T> reply, long timeoutNanos)
            throws InterruptedException, ExecutionException, TimeoutException {
        return reply.get(timeoutNanos, TimeUnit.NANOSECONDS);
    }

    @Override
    public boolean schedule(Runnable task, long delayNanos) {
        try {
            loop.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
            return true;
        } catch (RejectedExecutionException e) {
            return false;
        }
    }

    @Override
    public boolean isActive() {
        return channel.isActive();
    }

    @Override
    public void close() {
        channel.close().awaitUninterruptibly();
        try {
            loop.execute(() -> client.connectionLost(requests.closedReason()));
        } catch (RejectedExecutionException e) {
            client.connectionLost(requests.closedReason()); // the loop is gone: nothing else touches its state
        }
        shutdown(ownGroup);
    }

    /** Stops {@code group}'s threads, if it is a connection's own. */
    static void shutdown(EventLoopGroup group) {
        if (group != null) {
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }
}
