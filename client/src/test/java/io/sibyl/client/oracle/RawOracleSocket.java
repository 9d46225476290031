package io.sibyl.client.oracle;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sibyl.protocol.Frames;
import io.sibyl.protocol.Varints;
import io.sibyl.protocol.Wire;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;

/**
 * A hand-written oracle client on a plain {@link Socket}: it sends exactly the bytes a test asks for and parses every
 * reply frame (length prefix, then messages), so tests can speak malformed protocol or refuse to read at all.
 */
final class RawOracleSocket implements AutoCloseable {
    /** One message of a reply frame. Fields not carried by the message type are 0 / null. */
    record Message(byte type, long id, long value, byte code, String text, long[] hello, byte[] delta) {
        @Override
        public String toString() {
            return switch (type) {
                case Wire.HELLO -> "HELLO" + java.util.Arrays.toString(hello);
                case Wire.DELTA -> "DELTA(" + delta.length + " bytes)";
                case Wire.ERROR -> "ERROR(id=" + id + ", code=" + code + ", '" + text + "')";
                default -> "type " + type + "(id=" + id + ", value=" + value + ", code=" + code + ")";
            };
        }
    }

    final Socket socket;
    private final DataInputStream in;
    private final DataOutputStream out;
    /** Messages of frames already read but not yet consumed by {@link #expect}. */
    private final java.util.ArrayDeque<Message> pending = new java.util.ArrayDeque<>();

    private RawOracleSocket(Socket socket) throws IOException {
        this.socket = socket;
        this.in = new DataInputStream(socket.getInputStream());
        this.out = new DataOutputStream(socket.getOutputStream());
    }

    static RawOracleSocket connect(int port) throws IOException {
        return connect(port, 0);
    }

    /** Connects to the oracle on localhost; a positive {@code receiveBuffer} shrinks the socket's receive buffer. */
    static RawOracleSocket connect(int port, int receiveBuffer) throws IOException {
        Socket s = new Socket();
        if (receiveBuffer > 0) {
            s.setReceiveBufferSize(receiveBuffer); // before connect, so the advertised window stays small
        }
        s.setTcpNoDelay(true);
        s.setSoTimeout(5000);
        s.connect(new InetSocketAddress("127.0.0.1", port), 2000);
        return new RawOracleSocket(s);
    }

    /** Sends the handshake with the given magic and version. */
    void handshake(int magic, short version) throws IOException {
        ByteBuf b = Unpooled.buffer();
        b.writeInt(magic);
        b.writeShort(version);
        sendFrame(b);
    }

    /** Sends a correct handshake and returns the HELLO (T_init, T_max, maxWriteSetRows, maxFrameBytes, aborted...). */
    long[] handshake() throws IOException {
        handshake(Wire.MAGIC, Wire.VERSION);
        for (Message m : readFrame()) {
            if (m.type() == Wire.HELLO) {
                return m.hello();
            }
        }
        throw new AssertionError("the first frame after the handshake has no HELLO");
    }

    /** Sends {@code body} (from its reader index) behind a correct length prefix. */
    void sendFrame(ByteBuf body) throws IOException {
        byte[] bytes = new byte[body.readableBytes()];
        body.readBytes(bytes);
        out.writeInt(bytes.length);
        out.write(bytes);
        out.flush();
    }

    /** Sends raw bytes with no framing at all. */
    void sendRaw(byte[] bytes) throws IOException {
        out.write(bytes);
        out.flush();
    }

    static ByteBuf begin(ByteBuf b, long id) {
        b.writeByte(Wire.BEGIN);
        Varints.writeUnsigned(b, id);
        return b;
    }

    static ByteBuf commit(ByteBuf b, long id, long startTs, long... rows) {
        b.writeByte(Wire.COMMIT);
        Varints.writeUnsigned(b, id);
        Varints.writeUnsigned(b, startTs);
        Varints.writeUnsigned(b, rows.length);
        for (long r : rows) {
            b.writeLong(r);
        }
        return b;
    }

    static ByteBuf withTimestamp(ByteBuf b, byte type, long id, long ts) {
        b.writeByte(type);
        Varints.writeUnsigned(b, id);
        Varints.writeUnsigned(b, ts);
        return b;
    }

    /** Reads one whole frame and parses its messages; null at end of stream. */
    List<Message> readFrame() throws IOException {
        int len;
        try {
            len = in.readInt();
        } catch (EOFException e) {
            return null;
        }
        if (len < 0 || len > (64 << 20)) {
            throw new AssertionError("implausible reply frame length " + len);
        }
        byte[] body = new byte[len];
        in.readFully(body);
        return parse(Unpooled.wrappedBuffer(body));
    }

    static List<Message> parse(ByteBuf b) {
        List<Message> messages = new ArrayList<>();
        while (b.isReadable()) {
            byte type = b.readByte();
            switch (type) {
                case Wire.HELLO -> {
                    short version = b.readShort();
                    b.skipBytes(Wire.NONCE_BYTES + 1); // and whether a client secret must be proven
                    long tInit = Varints.readUnsigned(b);
                    long tMax = Varints.readUnsigned(b);
                    long maxRows = Varints.readUnsigned(b);
                    long maxFrame = Varints.readUnsigned(b);
                    Varints.readUnsigned(b); // reader grace
                    Varints.readUnsigned(b); // transaction max age (protocol version 5)
                    long[] aborted = ReplyFields.readAbortedSet(b);
                    int n = aborted.length;
                    long[] hello = new long[5 + n];
                    hello[0] = tInit;
                    hello[1] = tMax;
                    hello[2] = maxRows;
                    hello[3] = maxFrame;
                    hello[4] = n;
                    System.arraycopy(aborted, 0, hello, 5, n);
                    io.sibyl.protocol.AbortedRange.readAll(b); // aborted ranges (protocol version 2)
                    if (version != Wire.VERSION) {
                        throw new AssertionError("HELLO carries version " + version);
                    }
                    messages.add(new Message(type, 0, 0, (byte) 0, null, hello, null));
                }
                case Wire.DELTA -> {
                    int n = (int) Varints.readUnsigned(b);
                    byte[] delta = new byte[n];
                    b.readBytes(delta);
                    messages.add(new Message(type, 0, 0, (byte) 0, null, null, delta));
                }
                case Wire.STARTED, Wire.COMMITTED, Wire.WATERMARK -> messages.add(new Message(type, Varints.readUnsigned(b),
                        Varints.readUnsigned(b), (byte) 0, null, null, null));
                case Wire.ABORTED -> messages.add(new Message(type, Varints.readUnsigned(b), 0, b.readByte(), null,
                        null, null));
                case Wire.ACK -> messages.add(new Message(type, Varints.readUnsigned(b), 0, (byte) 0, null, null,
                        null));
                case Wire.STATUS -> {
                    long id = Varints.readUnsigned(b);
                    byte state = b.readByte();
                    messages.add(new Message(type, id, Varints.readUnsigned(b), state, null, null, null));
                }
                case Wire.ERROR -> {
                    long id = Varints.readUnsigned(b);
                    byte code = b.readByte();
                    String text = Frames.readString(b, Frames.MAX_ERROR_TEXT * 4);
                    messages.add(new Message(type, id, 0, code, text, null, null));
                }
                default -> throw new AssertionError("unknown reply type " + type + " from the oracle");
            }
        }
        return messages;
    }

    /**
     * Reads frames until a message of {@code type} (other than DELTA pushes, which are skipped) arrives and returns
     * it; fails on end of stream or on any other non-DELTA message that is not of that type.
     */
    Message expect(byte type) throws IOException {
        while (true) {
            Message m = pending.pollFirst();
            if (m == null) {
                List<Message> frame = readFrame();
                if (frame == null) {
                    throw new AssertionError("the oracle closed the connection while a message of type " + type
                            + " was expected");
                }
                pending.addAll(frame);
                continue;
            }
            if (m.type() == Wire.DELTA) {
                continue;
            }
            if (m.type() != type) {
                throw new AssertionError("expected a message of type " + type + " but got " + m);
            }
            return m;
        }
    }

    /**
     * Reads everything up to end of stream and returns the non-DELTA messages seen (for a connection the oracle is
     * closing). Fails if the stream does not end within the socket timeout.
     */
    List<Message> readUntilClosed() throws IOException {
        List<Message> seen = new ArrayList<>();
        for (Message m : pending) {
            if (m.type() != Wire.DELTA) {
                seen.add(m);
            }
        }
        pending.clear();
        try {
            List<Message> frame;
            while ((frame = readFrame()) != null) {
                for (Message m : frame) {
                    if (m.type() != Wire.DELTA) {
                        seen.add(m);
                    }
                }
            }
        } catch (SocketTimeoutException e) {
            throw new AssertionError("the oracle did not close the connection; messages so far: " + seen, e);
        } catch (IOException e) {
            // A reset after the oracle closed is also an end of stream.
            if (seen.isEmpty()) {
                throw e;
            }
        }
        return seen;
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
