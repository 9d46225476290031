package io.sibyl.protocol;

import io.netty.buffer.ByteBuf;

/** LEB128 variable-length encoding of non-negative and zig-zag signed longs on Netty buffers. */
public final class Varints {
    private Varints() {
    }

    /** Writes {@code value} (treated as unsigned) in 1 to 10 bytes. */
    public static void writeUnsigned(ByteBuf out, long value) {
        while ((value & ~0x7FL) != 0) {
            out.writeByte((int) ((value & 0x7F) | 0x80));
            value >>>= 7;
        }
        out.writeByte((int) value);
    }

    /** Reads a value written by {@link #writeUnsigned}; throws {@link ProtocolException} on truncation or overflow. */
    public static long readUnsigned(ByteBuf in) {
        long result = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            if (!in.isReadable()) {
                throw new ProtocolException("truncated varint");
            }
            byte b = in.readByte();
            if (shift == 63 && (b & 0x7E) != 0) {
                // The tenth byte holds bit 63 only: more was dropped silently, so that a value beyond 64 bits read
                // as another one (an overlong timestamp as a small valid one, say).
                throw new ProtocolException("varint overflows 64 bits");
            }
            result |= (long) (b & 0x7F) << shift;
            if (b >= 0) {
                return result;
            }
        }
        throw new ProtocolException("varint longer than 10 bytes");
    }

    /** Reads an unsigned varint that must fit in a non-negative int no larger than {@code max}. */
    public static int readBoundedInt(ByteBuf in, int max, String what) {
        long v = readUnsigned(in);
        if (v < 0 || v > max) {
            throw new ProtocolException(what + " " + Long.toUnsignedString(v) + " exceeds the limit of " + max);
        }
        return (int) v;
    }

    /** Writes a signed value so that small magnitudes of either sign stay short. */
    public static void writeSigned(ByteBuf out, long value) {
        writeUnsigned(out, (value << 1) ^ (value >> 63));
    }

    /** Reads a value written by {@link #writeSigned}. */
    public static long readSigned(ByteBuf in) {
        long raw = readUnsigned(in);
        return (raw >>> 1) ^ -(raw & 1);
    }

    /** Number of bytes {@link #writeUnsigned} uses for {@code value}. */
    public static int unsignedSize(long value) {
        int size = 1;
        while ((value & ~0x7FL) != 0) {
            size++;
            value >>>= 7;
        }
        return size;
    }
}
