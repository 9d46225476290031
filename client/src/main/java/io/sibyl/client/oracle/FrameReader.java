package io.sibyl.client.oracle;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sibyl.protocol.Wire;

import java.io.EOFException;
import java.io.IOException;
import java.io.InputStream;
import java.net.SocketTimeoutException;

/**
 * Cuts the oracle's length-prefixed frames out of a blocking socket's input, reading as much as the socket holds at
 * once. A read that times out leaves what arrived buffered, so the next call, by any thread that holds the reading
 * role, goes on from there. Not thread-safe.
 */
final class FrameReader {
    private final InputStream in;
    private final int maxFrameBytes;
    private byte[] buf = new byte[64 << 10];
    private int start;
    private int end;

    FrameReader(InputStream in, int maxFrameBytes) {
        this.in = in;
        this.maxFrameBytes = maxFrameBytes;
    }

    /**
     * The next frame's body, valid until the next call; null if the socket's read timeout passed before a whole frame
     * arrived.
     *
     * @throws EOFException when the oracle closed the connection
     * @throws IOException when the socket failed, or a frame announces more than the largest frame accepted
     */
    ByteBuf next() throws IOException {
        while (true) {
            int buffered = end - start;
            int needed = Wire.LENGTH_FIELD_BYTES;
            if (buffered >= Wire.LENGTH_FIELD_BYTES) {
                int length = (buf[start] & 0xff) << 24 | (buf[start + 1] & 0xff) << 16 | (buf[start + 2] & 0xff) << 8
                        | buf[start + 3] & 0xff;
                if (length < 0 || length > maxFrameBytes) {
                    throw new IOException("the oracle sent a frame of " + Integer.toUnsignedString(length)
                            + " bytes, above the " + maxFrameBytes + " accepted");
                }
                needed += length;
                if (buffered >= needed) {
                    ByteBuf frame = Unpooled.wrappedBuffer(buf, start + Wire.LENGTH_FIELD_BYTES, length);
                    start += needed;
                    return frame;
                }
            }
            makeRoom(needed);
            int n;
            try {
                n = in.read(buf, end, buf.length - end);
            } catch (SocketTimeoutException e) {
                return null;
            }
            if (n < 0) {
                throw new EOFException("the oracle closed the connection");
            }
            end += n;
        }
    }

    /** True if a frame, or part of one, has arrived and not been returned. */
    boolean hasInput() throws IOException {
        return end > start || in.available() > 0;
    }

    /** Makes room for a frame of {@code frameBytes} (length field included) from {@code start} on. */
    private void makeRoom(int frameBytes) {
        if (buf.length - start >= frameBytes && end < buf.length) {
            return;
        }
        byte[] target = frameBytes > buf.length ? new byte[Math.max(frameBytes, buf.length * 2)] : buf;
        System.arraycopy(buf, start, target, 0, end - start);
        end -= start;
        start = 0;
        buf = target;
    }
}
