package io.sibyl.protocol;

import io.netty.buffer.ByteBuf;

/** Decodes decision blocks written by {@link DecisionBlockWriter}. */
public final class DecisionBlockReader {
    private DecisionBlockReader() {
    }

    /** Reads every block in {@code in} (from its reader index to its writer index) into {@code visitor}. */
    public static void readAll(ByteBuf in, DecisionVisitor visitor) {
        while (in.isReadable()) {
            readBlock(in, visitor);
        }
    }

    /** Reads exactly one block. */
    public static void readBlock(ByteBuf in, DecisionVisitor visitor) {
        int length = Varints.readBoundedInt(in, in.readableBytes(), "decision block length");
        int end = in.readerIndex() + length;
        long previous = Varints.readUnsigned(in);
        while (in.readerIndex() < end) {
            long header = Varints.readUnsigned(in);
            long zigzag = header >>> 3;
            long ts = previous + ((zigzag >>> 1) ^ -(zigzag & 1));
            previous = ts;
            switch (DecisionKind.of((int) (header & 7))) {
                case COMMIT -> visitor.onCommit(ts - Varints.readUnsigned(in), ts);
                case ABORT -> visitor.onAbort(ts);
                case FORGET -> visitor.onForget(ts);
                case T_MAX -> visitor.onTmax(ts);
                case RESERVE -> visitor.onReserve(ts);
                case ABORT_RANGE -> visitor.onAbortRange(ts - width(in, ts), ts);
                case FORGET_RANGE -> visitor.onForgetRange(ts - width(in, ts), ts);
                default -> throw new ProtocolException("unhandled decision kind");
            }
        }
        if (in.readerIndex() != end) {
            throw new ProtocolException("decision block overran its length");
        }
        visitor.onBlockEnd();
    }

    private static long width(ByteBuf in, long to) {
        long width = Varints.readUnsigned(in);
        if (width <= 0 || width > to) {
            throw new ProtocolException("aborted range of width " + width + " ending at " + to);
        }
        return width;
    }
}
