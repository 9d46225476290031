package io.sibyl.oracle;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelOutboundBuffer;
import io.sibyl.protocol.Frames;
import io.sibyl.protocol.Varints;
import io.sibyl.protocol.Wire;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.security.SecureRandom;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * One client connection as the oracle sees it: the replies the sequencer is collecting for it in the current block,
 * and (on the connection's event loop) the pointer into the {@link ReplicationLog} of the last metadata it was sent.
 */
final class ClientSession {
    private static final Logger LOG = LoggerFactory.getLogger(ClientSession.class);
    /** Frames queued to the sequencer above which the connection stops reading (back-pressure). */
    static final int MAX_QUEUED_FRAMES = 64;
    static final int RESUME_QUEUED_FRAMES = 16;
    /**
     * Least number of bytes queued to the sequencer above which the connection stops reading: frames may be up to
     * max.frame.bytes each, so counting frames alone would let one client queue 64 of them (a gigabyte by default).
     */
    static final long MIN_MAX_QUEUED_BYTES = 4L << 20;

    /** Nonces and identities must be unpredictable: they keep strangers from the admin role and others' transactions. */
    private static final SecureRandom RANDOM = new SecureRandom();

    /** Shared by every connection: direct memory is one pool for all of them. */
    private static final DirectMemoryGuard DIRECT_MEMORY = new DirectMemoryGuard();

    final int id;
    final Channel channel;
    /** Random bytes sent in this connection's HELLO; an {@code AUTHENTICATE} proof is computed over them. */
    final byte[] nonce = new byte[Wire.NONCE_BYTES];
    /**
     * The client this connection belongs to: its certificate's identity and the token of its handshake, or a random
     * token when it sent none. Set on the event loop before the handshake is queued to the sequencer, read by the
     * sequencer after.
     */
    volatile ClientIdentity identity;
    private final ReplicationLog log;
    private final long maxLagBytes;
    private final long pushIntervalNanos;
    private final long heartbeatNanos;
    private final AtomicInteger queuedFrames = new AtomicInteger();
    private final AtomicLong queuedBytes = new AtomicLong();
    /** Bytes queued to the sequencer at which reading stops: max.frame.bytes, at least MIN_MAX_QUEUED_BYTES. */
    private final long maxQueuedBytes;
    /** Set while the sequencer has too much of this connection's input queued; input is not read meanwhile. */
    private final AtomicBoolean sequencerBacklogged = new AtomicBoolean();
    /**
     * Reply frames the sequencer has sealed for this connection that {@link #deliver} has not sent yet. Counted before
     * the block is handed to the journal (so before it is published), uncounted by {@code deliver} on the event loop.
     * While it is above zero no push leaves: a push would carry blocks published with or after those replies (for
     * instance STARTED(T_s)'s block, then a later commit and a higher T_max) ahead of the replies themselves, and the
     * client would trim a commit above T_s before it registers T_s as a reader. The pending delivery carries the delta.
     */
    private final AtomicInteger pendingDeliveries = new AtomicInteger();

    // Owned by the sequencer thread.
    /** The connection proved the admin secret. */
    boolean admin;
    /** The connection proved the client (or admin) secret; only asked for when the oracle has a client secret. */
    boolean authenticated;
    ByteBuf pendingReplies;
    ReplicationLog.Node startCursor;
    boolean disconnected;
    /** A FINISH of another connection's transaction was ignored and logged: not logged again. */
    boolean warnedForeignFinish;
    /** A BEGIN was refused for this connection's quota of running transactions and logged: not logged again. */
    boolean warnedQuota;
    /** A request was refused as forbidden and logged: not logged again. */
    boolean warnedForbidden;
    /** Set by the sequencer: close the connection once the replies sealed so far are out (refused whole). */
    volatile boolean closeAfterReplies;
    /** When its last frame arrived (event loop writes, the idle check reads). */
    volatile long lastFrameNanos = System.nanoTime();
    /** The hot standby's watch: idle by design, never closed for it. */
    volatile boolean watch;

    // Owned by the channel's event loop.
    private ReplicationLog.Node cursor;
    private boolean closing;
    private boolean inputRefused;
    private long lastSendNanos = System.nanoTime();
    private long replyFrames;
    private long deltaBytes;
    private final LongAdder deltaBytesWithReplies;
    private final LongAdder deltaBytesPushed;

    /** A connection whose metadata bytes are counted nowhere (tests of the session alone). */
    ClientSession(int id, Channel channel, ReplicationLog log, OracleConfig config) {
        this(id, channel, log, config, new LongAdder(), new LongAdder());
    }

    /**
     * {@code deltaBytesWithReplies} and {@code deltaBytesPushed} add up the commit metadata this connection sends
     * with replies and in pushes (shared by every connection of the oracle: {@link OracleMetrics#DELTA_BYTES}).
     */
    ClientSession(int id, Channel channel, ReplicationLog log, OracleConfig config, LongAdder deltaBytesWithReplies,
                  LongAdder deltaBytesPushed) {
        this.deltaBytesWithReplies = deltaBytesWithReplies;
        this.deltaBytesPushed = deltaBytesPushed;
        this.id = id;
        this.channel = channel;
        this.log = log;
        this.maxLagBytes = config.maxLagBytes();
        this.maxQueuedBytes = Math.max(MIN_MAX_QUEUED_BYTES, config.maxFrameBytes());
        this.pushIntervalNanos = config.pushIntervalMillis() * 1_000_000L;
        // Clients stop reading half a grace period after they last heard from the oracle: send often enough that a
        // live connection never gets near that.
        this.heartbeatNanos = Math.min(1000, config.readerGraceMillis() / 10) * 1_000_000L;
        RANDOM.nextBytes(nonce);
        identity = ClientIdentity.unnamed();
    }

    /** A fresh identity: never 0 (no client) nor Long.MIN_VALUE (the oracle's maps' empty value). */
    static long randomIdentity() {
        long v;
        do {
            v = RANDOM.nextLong();
        } while (v == 0 || v == Long.MIN_VALUE);
        return v;
    }

    /** Called by the sequencer for each reply buffer it seals, before the block goes to the journal. */
    void deliveryScheduled() {
        pendingDeliveries.incrementAndGet();
    }

    /**
     * Sends replies released by the journal with every durable decision the client has not seen up to
     * {@code upTo}, the block the replies were decided in (or the newest published before it): a later block may
     * hold a commit after a start timestamp among these replies, which the client must learn first. Each call must
     * follow one {@link #deliveryScheduled}.
     */
    void deliver(ByteBuf replies, ReplicationLog.Node handshakeCursor, ReplicationLog.Node upTo) {
        if (!channel.eventLoop().inEventLoop()) {
            channel.eventLoop().execute(() -> deliver(replies, handshakeCursor, upTo));
            return;
        }
        pendingDeliveries.decrementAndGet();
        if (handshakeCursor != null) {
            cursor = handshakeCursor;
        }
        if (!channel.isActive() || cursor == null) {
            replies.release();
            return;
        }
        // A push may have sent past upTo already (only blocks whose replies were all delivered): nothing to add then.
        ReplicationLog.Node published = upTo.endOffset() < cursor.endOffset() ? cursor : upTo;
        if (notReadingReplies() || lagging(published)) {
            replies.release();
            return;
        }
        int deltaSize = (int) (published.endOffset() - cursor.endOffset());
        ByteBuf frame;
        try {
            frame = Frames.begin(channel.alloc(), replies.readableBytes() + deltaSize + 8);
        } catch (OutOfMemoryError e) {
            // No buffer for these replies: the client must not wait for them for ever. Closing tells it at once
            // (its requests in flight fail as of unknown outcome, and it asks again on a new connection).
            replies.release();
            failDelivery(e);
            return;
        }
        frame.writeBytes(replies);
        replies.release();
        writeDelta(frame, published, deltaSize, deltaBytesWithReplies);
        if (closeAfterReplies) {
            closing = true;
            channel.writeAndFlush(Frames.end(frame)).addListener(ChannelFutureListener.CLOSE);
            return;
        }
        send(frame);
    }

    /**
     * Pushes pending metadata to a connection that has been silent for the push interval, or an empty frame (a
     * heartbeat) when there is none and it has been silent for the heartbeat interval; closes laggards.
     */
    void pushIfSilent() {
        if (cursor == null || !channel.isActive() || notReadingReplies()) {
            return;
        }
        // The tail first, then the pending count: a block is counted for its connections before it is published, so
        // a block in this tail whose replies have not left yet is seen as pending below (checked the other way
        // round, it could be sealed and published between the two reads and pushed ahead of its replies).
        ReplicationLog.Node published = log.tail();
        boolean deliveryPending = pendingDeliveries.get() > 0; // it brings the metadata after its replies
        if (published == cursor || deliveryPending) {
            // A heartbeat carries no metadata, so it may go out while a delivery is pending.
            if (System.nanoTime() - lastSendNanos >= heartbeatNanos && !closing) {
                send(Frames.begin(channel.alloc(), 0));
            }
            return;
        }
        if (lagging(published)) {
            return;
        }
        if (System.nanoTime() - lastSendNanos >= pushIntervalNanos) {
            int deltaSize = (int) (published.endOffset() - cursor.endOffset());
            ByteBuf frame = Frames.begin(channel.alloc(), deltaSize + 8);
            writeDelta(frame, published, deltaSize, deltaBytesPushed);
            send(frame);
        }
    }

    /**
     * Reads the connection's input only while its client reads the replies (the channel is writable: below the
     * max.lag.bytes high-water mark) and the sequencer keeps up with it: a client that sends without reading can then
     * make the oracle hold no more than the replies to what it sent before it stopped being read. Event loop only.
     */
    void updateReading() {
        channel.config().setAutoRead(!closing && !inputRefused && channel.isWritable() && !sequencerBacklogged.get());
    }

    /**
     * Event loop: a frame of {@code bytes} goes to the sequencer. Stops reading when this connection has
     * MAX_QUEUED_FRAMES frames or maxQueuedBytes bytes waiting for the sequencer.
     */
    void frameQueued(int bytes) {
        lastFrameNanos = System.nanoTime();
        int frames = queuedFrames.incrementAndGet();
        long queued = queuedBytes.addAndGet(bytes);
        if (frames < MAX_QUEUED_FRAMES && queued < maxQueuedBytes) {
            return;
        }
        sequencerBacklogged.set(true);
        updateReading();
        // The sequencer may have drained the queue before the flag was set, and then saw no reason to resume us.
        if (sequencerCaughtUp() && sequencerBacklogged.compareAndSet(true, false)) {
            updateReading();
        }
    }

    /**
     * Sequencer thread: a frame of {@code bytes} was handled. Resumes reading once the queue is down to a quarter of
     * the frames and half of the bytes (whoever clears the flag resumes: this thread or {@link #frameQueued}).
     */
    void frameHandled(int bytes) {
        queuedFrames.decrementAndGet();
        queuedBytes.addAndGet(-bytes);
        if (sequencerCaughtUp() && sequencerBacklogged.compareAndSet(true, false)) {
            channel.eventLoop().execute(this::updateReading); // still off while the client does not read replies
        }
    }

    private boolean sequencerCaughtUp() {
        return queuedFrames.get() <= RESUME_QUEUED_FRAMES && queuedBytes.get() <= maxQueuedBytes / 2;
    }

    /** The connection is being failed: read nothing more from it, whatever happens to its writability. */
    void refuseInput() {
        inputRefused = true;
        updateReading();
    }

    /**
     * Closes a connection whose replies, not yet taken by its client, exceed max.lag.bytes in the oracle's outbound
     * buffer: requests that publish nothing (QUERY, WATERMARK_QUERY, refused BEGINs) leave lag at zero, so
     * {@link #lagging} alone would let such replies pile up without bound. Closed at once: an ERROR frame would queue
     * behind the replies the client does not read.
     */
    private boolean notReadingReplies() {
        if (closing) {
            return true;
        }
        ChannelOutboundBuffer outbound = channel.unsafe().outboundBuffer();
        long pending = outbound == null ? 0 : outbound.totalPendingWriteBytes();
        if (pending <= maxLagBytes) {
            if (!DIRECT_MEMORY.shouldClose(pending)) {
                return false;
            }
            LOG.warn("closing {}: the oracle's direct memory is {} of {} bytes used, and this client leaves {} bytes"
                    + " of replies unread (slow readers are closed first, so the others keep being served)",
                    channel.remoteAddress(), DIRECT_MEMORY.usedBytes(), DIRECT_MEMORY.limit(), pending);
        } else {
            LOG.warn("closing {}: client is not reading its replies ({} bytes of replies pending, max.lag.bytes={})",
                    channel.remoteAddress(), pending, maxLagBytes);
        }
        closing = true;
        cursor = log.tail();
        channel.close();
        return true;
    }

    private boolean lagging(ReplicationLog.Node published) {
        if (closing) {
            return true;
        }
        long lag = published.endOffset() - cursor.endOffset();
        if (lag <= maxLagBytes && (channel.isWritable() || lag == 0)) {
            return false;
        }
        closing = true;
        cursor = log.tail(); // drop references to old blocks at once
        if (channel.isWritable()) {
            String reason = "connection fell " + lag + " bytes of commit metadata behind (max.lag.bytes=" + maxLagBytes
                    + "); it was closed so that the oracle's memory stays bounded: reconnect";
            LOG.warn("closing {}: {}", channel.remoteAddress(), reason);
            channel.writeAndFlush(Frames.errorFrame(channel.alloc(), Wire.ERR_FELL_BEHIND, reason))
                    .addListener(ChannelFutureListener.CLOSE);
        } else {
            // An error frame would queue behind the backlog the client is not reading: close at once.
            LOG.warn("closing {}: client is not reading its replies ({} bytes of metadata pending)",
                    channel.remoteAddress(), lag);
            channel.close();
        }
        return true;
    }

    private void failDelivery(OutOfMemoryError e) {
        closing = true;
        cursor = log.tail();
        LOG.error("closing {}: no memory for its replies ({}); its requests in flight get no answer on this"
                + " connection", channel.remoteAddress(), e.toString());
        channel.close();
    }

    /** Appends the metadata after the cursor up to {@code published}, and adds its size to {@code sentBytes}. */
    private void writeDelta(ByteBuf frame, ReplicationLog.Node published, int deltaSize, LongAdder sentBytes) {
        if (deltaSize == 0) {
            cursor = published;
            return;
        }
        frame.writeByte(Wire.DELTA);
        Varints.writeUnsigned(frame, deltaSize);
        ReplicationLog.Node n = cursor;
        while (n != published) {
            n = n.next;
            frame.writeBytes(n.block);
        }
        cursor = published;
        deltaBytes += deltaSize;
        sentBytes.add(deltaSize);
    }

    private void send(ByteBuf frame) {
        lastSendNanos = System.nanoTime();
        replyFrames++;
        channel.writeAndFlush(Frames.end(frame), channel.voidPromise());
    }

    long deltaBytesSent() {
        return deltaBytes;
    }

    long replyFramesSent() {
        return replyFrames;
    }
}
