package io.sibyl.bench.fuzz;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sibyl.protocol.Varints;
import io.sibyl.protocol.Wire;

/** Builds the body of one request frame, message by message, and hands it out with its length prefix. */
final class RequestWriter {
    private final ByteBuf body = Unpooled.buffer(256);

    /** A request of {@code type} whose body is {@code args} as varints (BEGIN, ABORT, QUERY, RANGE_CLEANED_UP...). */
    RequestWriter request(byte type, long id, long... args) {
        body.writeByte(type);
        Varints.writeUnsigned(body, id);
        for (long a : args) {
            Varints.writeUnsigned(body, a);
        }
        return this;
    }

    RequestWriter commit(long id, long startTs, long[] rows) {
        request(Wire.COMMIT, id, startTs, rows.length);
        for (long r : rows) {
            body.writeLong(r);
        }
        return this;
    }

    RequestWriter authenticate(long id, byte[] proof) {
        body.writeByte(Wire.AUTHENTICATE);
        Varints.writeUnsigned(body, id);
        body.writeByte(Wire.AUTH_ADMIN);
        body.writeBytes(proof);
        return this;
    }

    /** Raw bytes in the body: a handshake sent again, a cut message, an overlong varint. */
    RequestWriter raw(byte[] bytes) {
        body.writeBytes(bytes);
        return this;
    }

    RequestWriter rawByte(int b) {
        body.writeByte(b);
        return this;
    }

    int size() {
        return body.readableBytes();
    }

    /** The body without its length prefix. */
    byte[] body() {
        byte[] b = new byte[body.readableBytes()];
        body.getBytes(body.readerIndex(), b);
        return b;
    }

    /** The whole frame: the 4-byte length prefix, then the body. */
    byte[] frame() {
        return withPrefix(body());
    }

    /** {@code body} under a length prefix that matches it. */
    static byte[] withPrefix(byte[] body) {
        byte[] f = new byte[Wire.LENGTH_FIELD_BYTES + body.length];
        Unpooled.wrappedBuffer(f).writerIndex(0).writeInt(body.length).writeBytes(body);
        return f;
    }

    /** Two frames back to back, sent in one write. */
    static byte[] concat(byte[] a, byte[] b) {
        byte[] both = java.util.Arrays.copyOf(a, a.length + b.length);
        System.arraycopy(b, 0, both, a.length, b.length);
        return both;
    }
}
