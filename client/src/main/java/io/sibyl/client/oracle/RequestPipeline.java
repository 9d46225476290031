package io.sibyl.client.oracle;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.util.collection.LongObjectHashMap;
import io.netty.util.internal.PlatformDependent;
import io.sibyl.protocol.Frames;
import io.sibyl.protocol.Varints;
import io.sibyl.protocol.Wire;

import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;

/**
 * The requests of one connection: queued from any thread, encoded by whichever thread writes for the connection's
 * {@link FrameTransport} (many per frame when several wait), and kept by id until their reply comes. Once closed, it
 * refuses new requests with the reason.
 */
final class RequestPipeline {
    /** Where encoded frames go: the transport's socket. */
    interface FrameSink {
        /** Writes {@code frame} (and releases it); {@code last}: the last of this flush, so send what was written. */
        void write(ByteBuf frame, boolean last);
    }

    private final Queue<OracleRequest> outgoing = PlatformDependent.newMpscQueue();
    /** Why the connection closed; null while it is open. Set once, never changed afterwards. */
    private volatile String closedReason;
    // Set by attach before any request is submitted; published with the client that owns this pipeline.
    private FrameTransport transport;
    /** Written by the thread that writes, answered by the thread that reads: guarded by itself. */
    private final LongObjectHashMap<OracleRequest> inflight = new LongObjectHashMap<>();
    // Confined to the thread that writes (one at a time):
    private long nextId = 1;
    /** Set by the thread that reads the HELLO. */
    private volatile int maxOutboundFrame = 1 << 20;

    /** Writes through {@code t} from now on (once it is connected, before the first request). */
    void attach(FrameTransport t) {
        this.transport = t;
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

    /** The largest frame the oracle reads (from its HELLO, at most 1 MiB). */
    void limitFrameTo(int bytes) {
        maxOutboundFrame = bytes;
    }

    /** Queues {@code r} to be written; its future fails at once if the connection closed. */
    @SuppressWarnings("unchecked")
    <T> CompletableFuture<T> submit(OracleRequest r) {
        String reason = closedReason;
        if (reason != null) {
            return CompletableFuture.failedFuture(new OracleUnavailableException(reason));
        }
        outgoing.offer(r);
        if (r.type == Wire.FINISH) {
            transport.oneWayQueued();
        } else {
            transport.requestsQueued();
        }
        String late = closedReason;
        if (late != null) {
            // Closed while this was queued: it may or may not have left, and nothing will answer it now.
            r.future.completeExceptionally(new OracleUnavailableException(late
                    + "; a request made as it closed has an unknown outcome"));
        }
        return (CompletableFuture<T>) r.future;
    }

    /** The request {@code id} answers, no longer awaited; null if none. By the thread that reads. */
    OracleRequest answered(long id) {
        synchronized (inflight) {
            return inflight.remove(id);
        }
    }

    /** True while a request written awaits its reply. */
    boolean awaitsReplies() {
        synchronized (inflight) {
            return !inflight.isEmpty();
        }
    }

    /** True while requests wait to be written. */
    boolean hasQueued() {
        return !outgoing.isEmpty();
    }

    /** Fails every request written and not answered with {@code e}, and every one still queued. */
    void failAll(OracleUnavailableException e) {
        List<OracleRequest> unanswered;
        synchronized (inflight) {
            unanswered = new ArrayList<>(inflight.values());
            inflight.clear();
        }
        for (OracleRequest r : unanswered) {
            r.future.completeExceptionally(e);
        }
        failQueued();
    }

    /**
     * Encodes the queued requests into frames of at most the oracle's limit and hands them to {@code sink}. By one
     * thread at a time: the transport's writer.
     */
    void flushOutgoing(ByteBufAllocator alloc, FrameSink sink) {
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
            int limit = maxOutboundFrame;
            if (frame != null && frame.readableBytes() + size > limit) {
                sink.write(Frames.end(frame), false);
                frame = null;
            }
            if (frame == null) {
                frame = Frames.begin(alloc, Math.min(limit, Math.max(256, size)));
            }
            long id = nextId++;
            write(frame, id, r);
            if (r.type != Wire.FINISH) {
                synchronized (inflight) { // before the frame leaves: its reply may come at once
                    inflight.put(id, r);
                }
            }
        }
        if (frame != null) {
            sink.write(Frames.end(frame), true);
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
