package io.sibyl.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;

import java.nio.charset.StandardCharsets;

/** Helpers to build length-prefixed frames and the messages both sides share. */
public final class Frames {
    /** Longest error text sent on the wire; longer texts are cut. */
    public static final int MAX_ERROR_TEXT = 4096;

    private Frames() {
    }

    /** Allocates a buffer with room reserved for the length prefix. */
    public static ByteBuf begin(ByteBufAllocator alloc, int expectedBodyBytes) {
        ByteBuf buf = alloc.buffer(Wire.LENGTH_FIELD_BYTES + expectedBodyBytes);
        buf.writeInt(0);
        return buf;
    }

    /** Fills in the length prefix of a frame started with {@link #begin}. */
    public static ByteBuf end(ByteBuf frame) {
        frame.setInt(frame.readerIndex(), frame.readableBytes() - Wire.LENGTH_FIELD_BYTES);
        return frame;
    }

    /** Writes an ERROR message; request id 0 means the error concerns the whole connection. */
    public static void writeError(ByteBuf out, long requestId, byte code, String text) {
        out.writeByte(Wire.ERROR);
        Varints.writeUnsigned(out, requestId);
        out.writeByte(code);
        writeString(out, text.length() > MAX_ERROR_TEXT ? text.substring(0, MAX_ERROR_TEXT) : text);
    }

    public static void writeString(ByteBuf out, String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        Varints.writeUnsigned(out, bytes.length);
        out.writeBytes(bytes);
    }

    public static String readString(ByteBuf in, int maxBytes) {
        int len = Varints.readBoundedInt(in, Math.min(maxBytes, in.readableBytes()), "string length");
        byte[] bytes = new byte[len];
        in.readBytes(bytes);
        return new String(bytes, StandardCharsets.UTF_8);
    }

    /** A complete frame holding one connection-level ERROR. */
    public static ByteBuf errorFrame(ByteBufAllocator alloc, byte code, String text) {
        ByteBuf frame = begin(alloc, 64 + text.length());
        writeError(frame, 0, code, text);
        return end(frame);
    }
}
