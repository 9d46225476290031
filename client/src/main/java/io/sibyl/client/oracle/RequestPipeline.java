package io.sibyl.client.oracle;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.EventLoop;
import io.netty.util.collection.LongObjectHashMap;
import io.netty.util.internal.PlatformDependent;
import io.sibyl.protocol.Frames;
import io.sibyl.protocol.Varints;
import io.sibyl.protocol.Wire;

import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The requests of one connection: queued from any thread, written by the connection's event loop (many per frame
 * when several wait), and kept by id until their reply comes. Once closed, it refuses new requests with the reason.
 */
final class RequestPipeline {
    private final Queue<OracleRequest> outgoing = PlatformDependent.newMpscQueue();
    private final AtomicBoolean flushScheduled = new AtomicBoolean();
    private final Runnable flushTask = this::flushOutgoing;
    /** Why the connection closed; null while it is open. Set once, never changed afterwards. */
    private volatile String closedReason;
    // Set by attach before any request is submitted; published with the client that owns this pipeline.
    private Channel channel;
    private EventLoop loop;
    // Event-loop confined:
    private final LongObjectHashMap<OracleRequest> inflight = new LongObjectHashMap<>();
    private long nextId = 1;
    private int maxOutboundFrame = 1 << 20;

    /** Writes to {@code connected} from now on (once it is connected, before the first request). */
    void attach(Channel connected) {
        this.channel = connected;
        this.loop = connected.eventLoop();
    }

    /** Why the connection closed, or null while it is open. */
    String closedReason() {
        return closedReason;
    }

    /** Refuses requests from now on with {@code reason}, unless a reason was given already. */
    void closeBecause(String reason) {
        if (closedReason == null) {
            closedReason = reason;
        }
    }

    /** The largest frame the oracle reads (from its HELLO, at most 1 MiB). On the event loop. */
    void limitFrameTo(int bytes) {
        maxOutboundFrame = bytes;
    }

    /** Queues {@code r} to be written on the event loop; its future fails at once if the connection closed. */
    @SuppressWarnings("unchecked")
    <T> CompletableFuture<T> submit(OracleRequest r) {
        String reason = closedReason;
        if (reason != null) {
            return CompletableFuture.failedFuture(new OracleUnavailableException(reason));
        }
        outgoing.offer(r);
        if (!flushScheduled.get() && flushScheduled.compareAndSet(false, true)) {
            try {
                loop.execute(flushTask);
            } catch (RejectedExecutionException e) {
                flushScheduled.set(false); // closed meanwhile: failed just below
            }
        }
        String late = closedReason;
        if (late != null) {
            // Closed while this was queued: it may or may not have left, and nothing will answer it now.
            r.future.completeExceptionally(new OracleUnavailableException(late
                    + "; a request made as it closed has an unknown outcome"));
        }
        return (CompletableFuture<T>) r.future;
    }

    /** The request {@code id} answers, no longer awaited; null if none. On the event loop. */
    OracleRequest answered(long id) {
        return inflight.remove(id);
    }

    /** Fails every request written and not answered with {@code e}, and every one still queued. On the event loop. */
    void failAll(OracleUnavailableException e) {
        for (OracleRequest r : inflight.values()) {
            r.future.completeExceptionally(e);
        }
        inflight.clear();
        failQueued();
    }

    private void flushOutgoing() {
        flushScheduled.set(false);
        if (closedReason != null) {
            failQueued();
            return;
        }
        ByteBuf frame = null;
        OracleRequest r;
        long now = System.nanoTime(); // before the frame leaves, so no later than the oracle reading the requests
        while ((r = outgoing.poll()) != null) {
            r.sentNanos = now;
            int size = 24 + (r.rows == null ? 0 : r.rows.length * 8) + (r.reads == null ? 0 : r.reads.length * 8)
                    + (r.granules == null ? 0 : r.granules.length * 8);
            if (frame != null && frame.readableBytes() + size > maxOutboundFrame) {
                channel.write(Frames.end(frame), channel.voidPromise());
                frame = null;
            }
            if (frame == null) {
                frame = Frames.begin(channel.alloc(), Math.min(maxOutboundFrame, Math.max(256, size)));
            }
            long id = nextId++;
            write(frame, id, r);
            if (r.type != Wire.FINISH) {
                inflight.put(id, r);
            }
        }
        if (frame != null) {
            channel.writeAndFlush(Frames.end(frame), channel.voidPromise());
        }
    }

    /** Encodes request {@code r} as {@code id} into {@code frame}, in the layout docs/protocol.md gives its type. */
    private static void write(ByteBuf frame, long id, OracleRequest r) {
        frame.writeByte(r.type);
        Varints.writeUnsigned(frame, id);
        if (r.type == Wire.AUTHENTICATE) {
            frame.writeByte((int) r.ts); // the role
            for (long word : r.rows) {
                frame.writeLong(word); // the proof
            }
        } else if (r.type == Wire.HISTORY_QUERY) {
            frame.writeByte((int) r.rows[0]); // the kind
            Varints.writeUnsigned(frame, r.ts);
        } else if (r.type != Wire.BEGIN && r.type != Wire.WATERMARK_QUERY && r.type != Wire.TICKET) {
            Varints.writeUnsigned(frame, r.ts);
        }
        if (r.type == Wire.RANGE_CLEANED_UP) {
            Varints.writeUnsigned(frame, r.rows[0]); // the range's end (ts is its start)
        } else if (r.type == Wire.COMMIT) {
            writeRows(frame, r.rows);
        } else if (r.type == Wire.COMMIT_CERTIFIED) {
            writeRows(frame, r.rows);
            writeRows(frame, r.reads);
            writeRows(frame, r.granules);
        } else if (r.type == Wire.TICKET) {
            writeRows(frame, r.rows);
            writeRows(frame, r.granules);
        }
    }

    private static void writeRows(ByteBuf frame, long[] rows) {
        Varints.writeUnsigned(frame, rows.length);
        for (long row : rows) {
            frame.writeLong(row);
        }
    }

    private void failQueued() {
        OracleRequest r;
        while ((r = outgoing.poll()) != null) {
            r.future.completeExceptionally(new OracleUnavailableException(closedReason));
        }
    }
}
