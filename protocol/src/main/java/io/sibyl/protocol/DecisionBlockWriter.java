package io.sibyl.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;

/**
 * Encodes the oracle's decisions into blocks. A block is the unit that is journaled, acknowledged and replicated:
 * {@code varint length, varint base, records...}. Each record is a varint {@code zigzag(ts - previous) << 3 | kind}
 * (a commit adds {@code varint commitTs - startTs}), so a commit usually costs 3 to 4 bytes.
 *
 * <p>Owned by one thread (the sequencer). Reuses its buffer across blocks.
 */
public final class DecisionBlockWriter {
    /** Timestamps stay below this (a millennium at a million per second) so deltas and packed replies cannot overflow. */
    public static final long MAX_TIMESTAMP = 1L << 55;

    private final ByteBuf body = Unpooled.buffer(64 * 1024);
    private long previous;
    private long base;
    private int records;

    /** Starts a new block whose deltas are relative to {@code base}. */
    public void start(long base) {
        body.clear();
        this.base = base;
        this.previous = base;
        this.records = 0;
    }

    public void commit(long startTs, long commitTs) {
        header(commitTs, DecisionKind.COMMIT);
        Varints.writeUnsigned(body, commitTs - startTs);
    }

    public void abort(long startTs) {
        header(startTs, DecisionKind.ABORT);
    }

    public void forget(long startTs) {
        header(startTs, DecisionKind.FORGET);
    }

    public void tMax(long tMax) {
        header(tMax, DecisionKind.T_MAX);
    }

    public void reserve(long limit) {
        header(limit, DecisionKind.RESERVE);
    }

    /**
     * Aborts every start timestamp in {@code (from, to]} without a COMMIT record: the transactions that were running
     * when the previous oracle stopped. Encoded like a commit: {@code ts = to}, then {@code varint (to - from)}.
     */
    public void abortRange(long from, long to) {
        if (from < 0 || to <= from) {
            throw new IllegalArgumentException("empty or negative abort range (" + from + ", " + to + "]");
        }
        header(to, DecisionKind.ABORT_RANGE);
        Varints.writeUnsigned(body, to - from);
    }

    /** Forgets the aborted range {@code (from, to]}; encoded like {@link #abortRange}. */
    public void forgetRange(long from, long to) {
        if (from < 0 || to <= from) {
            throw new IllegalArgumentException("empty or negative range (" + from + ", " + to + "]");
        }
        header(to, DecisionKind.FORGET_RANGE);
        Varints.writeUnsigned(body, to - from);
    }

    private void header(long ts, DecisionKind kind) {
        if (ts < 0 || ts >= MAX_TIMESTAMP) {
            // Out of range, the zigzag delta below overflows and the block decodes to other timestamps.
            throw new IllegalArgumentException(kind + " record at timestamp " + ts + ", outside [0, 2^55)");
        }
        long delta = ts - previous;
        previous = ts;
        Varints.writeUnsigned(body, (((delta << 1) ^ (delta >> 63)) << 3) | kind.ordinal());
        records++;
    }

    public int records() {
        return records;
    }

    public boolean isEmpty() {
        return records == 0;
    }

    /** Bytes the block would take if sealed now. */
    public int encodedSize() {
        int rest = Varints.unsignedSize(base) + body.readableBytes();
        return Varints.unsignedSize(rest) + rest;
    }

    /** Returns the finished block as an array that can be journaled and shared read-only by many connections. */
    public byte[] seal() {
        int rest = Varints.unsignedSize(base) + body.readableBytes();
        byte[] out = new byte[Varints.unsignedSize(rest) + rest];
        ByteBuf wrapped = Unpooled.wrappedBuffer(out);
        wrapped.writerIndex(0);
        Varints.writeUnsigned(wrapped, rest);
        Varints.writeUnsigned(wrapped, base);
        wrapped.writeBytes(body, body.readerIndex(), body.readableBytes());
        return out;
    }
}
