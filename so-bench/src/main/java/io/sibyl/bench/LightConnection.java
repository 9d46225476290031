package io.sibyl.bench;

import io.netty.buffer.ByteBuf;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.SimpleChannelInboundHandler;
import io.sibyl.client.oracle.TransactionAbortedException;
import io.sibyl.protocol.DecisionBlockReader;
import io.sibyl.protocol.DecisionVisitor;
import io.sibyl.protocol.Frames;
import io.sibyl.protocol.ProtocolException;
import io.sibyl.protocol.Varints;
import io.sibyl.protocol.Wire;

import java.io.IOException;
import java.util.Arrays;

/**
 * One oracle connection of so-bench-clients: the real handshake, real {@code BEGIN} and {@code COMMIT} requests and
 * every reply frame the oracle sends, {@code DELTA}s included, read off the socket and decoded message by message;
 * but no replica. A {@code DELTA}'s decision blocks are skipped by their length, or walked record by record with
 * {@code --decode-deltas}, and only counted: a real client's replica applies every commit of every client, which is
 * the work that kept one bench JVM from driving 512 connections (issue 18), and it is measured on its own.
 *
 * <p>Confined to the channel's event loop: requests are sent from there (by the slots, which run there) and replies
 * arrive there, so nothing here is synchronised. Requests made during one turn of the loop leave in one frame.
 */
final class LightConnection extends SimpleChannelInboundHandler<ByteBuf> {
    /** Gets the outcome of the one request a slot has outstanding; called on the event loop. */
    interface Replies {
        void started(long startTs);

        void committed(long commitTs);

        void aborted(TransactionAbortedException.Reason reason);

        /** An {@code ERROR} for this request (the connection stays open). */
        void refused(byte code, String text);
    }

    /** Hears when the connection is ready, or why it failed or was lost. */
    interface Events {
        void ready(LightConnection connection);

        void failed(LightConnection connection, String why);
    }

    private final ReceiveCounters counters;
    private final boolean decodeDeltas;
    private final Events events;
    private final Runnable flushTask = this::flushRequests;
    /** Slot {@code i} uses request id {@code i + 1}: a slot has one request outstanding at a time. */
    private Replies[] slots = new Replies[0];
    private Channel channel;
    private ByteBuf requests;
    private boolean helloSeen;
    private boolean failed;

    LightConnection(ReceiveCounters counters, boolean decodeDeltas, Events events) {
        this.counters = counters;
        this.decodeDeltas = decodeDeltas;
        this.events = events;
    }

    /** Registers the slots that will use this connection, before the load starts; returns their request ids. */
    int addSlot(Replies slot) {
        Replies[] grown = Arrays.copyOf(slots, slots.length + 1);
        grown[slots.length] = slot;
        slots = grown;
        return slots.length;
    }

    Channel channel() {
        return channel;
    }

    boolean isOpen() {
        return channel != null && channel.isActive() && !failed;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        channel = ctx.channel();
        // Protocol version 6 without an identity token: every connection is a client of its own, as a thousand
        // application servers would be.
        ByteBuf handshake = ctx.alloc().buffer(Wire.LENGTH_FIELD_BYTES + 6);
        handshake.writeInt(6).writeInt(Wire.MAGIC).writeShort(Wire.VERSION);
        ctx.writeAndFlush(handshake);
        ctx.fireChannelActive();
    }

    void begin(int requestId) {
        ByteBuf out = requestBuffer();
        out.writeByte(Wire.BEGIN);
        Varints.writeUnsigned(out, requestId);
    }

    void commit(int requestId, long startTs, long[] rows) {
        ByteBuf out = requestBuffer();
        out.writeByte(Wire.COMMIT);
        Varints.writeUnsigned(out, requestId);
        Varints.writeUnsigned(out, startTs);
        Varints.writeUnsigned(out, rows.length);
        for (long row : rows) {
            out.writeLong(row);
        }
    }

    /** The frame the requests of this turn of the event loop go into; it leaves when the turn ends. */
    private ByteBuf requestBuffer() {
        if (requests == null) {
            requests = Frames.begin(channel.alloc(), 256);
            channel.eventLoop().execute(flushTask);
        }
        return requests;
    }

    private void flushRequests() {
        ByteBuf frame = requests;
        requests = null;
        if (frame == null) {
            return;
        }
        if (!isOpen()) {
            frame.release();
            return;
        }
        channel.writeAndFlush(Frames.end(frame), channel.voidPromise());
    }

    @Override
    protected void channelRead0(ChannelHandlerContext ctx, ByteBuf frame) {
        counters.frame(Wire.LENGTH_FIELD_BYTES + frame.readableBytes());
        try {
            while (frame.isReadable() && !failed) {
                readMessage(frame);
            }
        } catch (ProtocolException | IndexOutOfBoundsException e) {
            fail("could not decode a frame from the oracle: " + e);
        }
    }

    private void readMessage(ByteBuf in) {
        byte type = in.readByte();
        switch (type) {
            case Wire.HELLO -> readHello(in);
            case Wire.DELTA -> readDelta(in);
            case Wire.STARTED -> {
                Replies slot = slot(Varints.readUnsigned(in));
                long startTs = Varints.readUnsigned(in);
                counters.reply(true);
                slot.started(startTs);
            }
            case Wire.COMMITTED -> {
                Replies slot = slot(Varints.readUnsigned(in));
                long commitTs = Varints.readUnsigned(in);
                counters.reply(false);
                slot.committed(commitTs);
            }
            case Wire.ABORTED -> {
                Replies slot = slot(Varints.readUnsigned(in));
                byte reason = in.readByte();
                counters.reply(false);
                slot.aborted(reasonOf(reason));
            }
            case Wire.ERROR -> {
                long id = Varints.readUnsigned(in);
                byte code = in.readByte();
                String text = Frames.readString(in, Frames.MAX_ERROR_TEXT);
                counters.reply(false);
                if (id == 0) {
                    fail("the oracle closed the connection with ERROR code " + code + ": " + text);
                } else {
                    slot(id).refused(code, text);
                }
            }
            default -> throw new ProtocolException("message type " + type + ", which so-bench-clients never asks for");
        }
    }

    private Replies slot(long requestId) {
        if (requestId < 1 || requestId > slots.length) {
            throw new ProtocolException("a reply to request " + requestId + ", which this connection never sent");
        }
        return slots[(int) requestId - 1];
    }

    private static TransactionAbortedException.Reason reasonOf(byte reason) {
        return switch (reason) {
            case Wire.ABORT_CONFLICT -> TransactionAbortedException.Reason.CONFLICT;
            case Wire.ABORT_TOO_OLD -> TransactionAbortedException.Reason.TOO_OLD;
            case Wire.ABORT_ALREADY_ABORTED -> TransactionAbortedException.Reason.ALREADY_ABORTED;
            case Wire.ABORT_READ_CONFLICT -> TransactionAbortedException.Reason.READ_CONFLICT;
            default -> throw new ProtocolException("abort reason " + reason);
        };
    }

    /** Reads the whole HELLO (its layout is in docs/protocol.md) so that a DELTA after it in the frame is found. */
    private void readHello(ByteBuf in) {
        short version = in.readShort();
        if (version != Wire.VERSION) {
            fail("the oracle speaks protocol version " + version + ", this build " + Wire.VERSION);
            return;
        }
        in.skipBytes(Wire.NONCE_BYTES);
        if ((in.readByte() & Wire.HELLO_CLIENT_SECRET_REQUIRED) != 0) {
            fail("the oracle requires a client secret (client.secret.file); so-bench-clients does not authenticate:"
                    + " drive an oracle without one");
            return;
        }
        for (int i = 0; i < 6; i++) {
            Varints.readUnsigned(in); // T_init, T_max, max write set, max frame, reader grace, max transaction age
        }
        for (int list = 0; list < 3; list++) {
            skipVarints(in, count(in)); // the aborted set: snapshot, added, removed
        }
        long ranges = count(in);
        for (long r = 0; r < ranges; r++) {
            Varints.readUnsigned(in); // from, as the distance from the previous range
            Varints.readUnsigned(in); // width
            skipVarints(in, count(in)); // the range's committed start timestamps
        }
        helloSeen = true;
        events.ready(this);
    }

    private static long count(ByteBuf in) {
        return Varints.readBoundedInt(in, in.readableBytes(), "list length");
    }

    private static void skipVarints(ByteBuf in, long n) {
        for (long i = 0; i < n; i++) {
            Varints.readUnsigned(in);
        }
    }

    private void readDelta(ByteBuf in) {
        int length = Varints.readBoundedInt(in, in.readableBytes(), "DELTA length");
        if (decodeDeltas) {
            RecordCounter records = new RecordCounter();
            DecisionBlockReader.readAll(in.readSlice(length), records);
            counters.delta(length, records.count);
        } else {
            in.skipBytes(length);
            counters.delta(length, 0);
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        fail(helloSeen ? "the oracle closed the connection" : "the oracle closed the connection before its HELLO");
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        fail(cause instanceof IOException ? cause.toString() : "unexpected: " + cause);
    }

    private void fail(String why) {
        if (failed) {
            return;
        }
        failed = true;
        events.failed(this, why);
        if (channel != null) {
            channel.close();
        }
    }

    /** Counts the records of decision blocks: the decoding a replica does, without the replica. */
    private static final class RecordCounter implements DecisionVisitor {
        long count;

        @Override
        public void onCommit(long startTs, long commitTs) {
            count++;
        }

        @Override
        public void onAbort(long startTs) {
            count++;
        }

        @Override
        public void onForget(long startTs) {
            count++;
        }

        @Override
        public void onTmax(long tMax) {
            count++;
        }
    }
}
