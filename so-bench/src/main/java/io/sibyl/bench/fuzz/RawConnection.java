package io.sibyl.bench.fuzz;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sibyl.protocol.Frames;
import io.sibyl.protocol.ProtocolException;
import io.sibyl.protocol.Varints;
import io.sibyl.protocol.Wire;

import java.io.BufferedInputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.util.ArrayList;
import java.util.List;

/**
 * A blocking socket to the oracle that sends whatever bytes it is given and parses everything the oracle answers, so
 * that an attacker can see each reply and whether, and how, the oracle closed the connection.
 */
final class RawConnection implements AutoCloseable {
    /**
     * How long a read waits: longer than the oracle's default handshake timeout (10 s), after which even a connection
     * stuck in the middle of a frame must get its ERROR.
     */
    static final int READ_TIMEOUT_MILLIS = 15_000;
    /** Largest frame accepted from the oracle: replies plus the replicated metadata of a busy second. */
    private static final int MAX_INBOUND_FRAME = 64 << 20;

    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;
    private boolean closedByOracle;
    private byte[] nonce;
    private long maxWriteSetRows;
    private long maxFrameBytes;

    private RawConnection(Socket socket) throws IOException {
        this.socket = socket;
        this.in = new DataInputStream(new BufferedInputStream(socket.getInputStream(), 1 << 16));
        this.out = socket.getOutputStream();
    }

    static RawConnection open(String host, int port) throws IOException {
        Socket s = new Socket(host, port);
        s.setTcpNoDelay(true);
        s.setSoTimeout(READ_TIMEOUT_MILLIS);
        // Closing sends a reset: no TIME_WAIT left per connection, so hundreds of thousands of them do not exhaust
        // the ephemeral ports; the oracle must cope with resets too.
        s.setSoLinger(true, 0);
        return new RawConnection(s);
    }

    /** The handshake of protocol version 6 as a client, with {@code token} as its identity unless 0; waits for HELLO. */
    void handshake(long token) throws IOException {
        ByteBuf h = Unpooled.buffer(15).writeInt(Wire.MAGIC).writeShort(Wire.VERSION);
        if (token != 0) {
            h.writeByte(Wire.ROLE_CLIENT).writeLong(token);
        }
        byte[] body = new byte[h.readableBytes()];
        h.readBytes(body);
        send(RequestWriter.withPrefix(body));
        while (nonce == null) {
            for (OracleMessage m : readFrame()) {
                if (m.type() == Wire.ERROR) {
                    throw new IOException("the oracle refused a good handshake: " + m);
                }
            }
        }
    }

    /** The HELLO's nonce, which an admin proof of this connection must cover. */
    byte[] nonce() {
        return nonce;
    }

    long maxWriteSetRows() {
        return maxWriteSetRows;
    }

    long maxFrameBytes() {
        return maxFrameBytes;
    }

    /** Sends bytes as they are; a connection the oracle closed already shows up when reading. */
    void send(byte[] bytes) {
        try {
            out.write(bytes);
            out.flush();
        } catch (IOException e) {
            // The oracle closed (after an ERROR for an earlier frame) or reset the connection: reading tells which.
        }
    }

    boolean closedByOracle() {
        return closedByOracle;
    }

    /**
     * Reads until the reply to {@code markerId}, or until the oracle closes the connection; returns everything read.
     *
     * @throws SocketTimeoutException if neither happens within {@link #READ_TIMEOUT_MILLIS}
     */
    List<OracleMessage> readUntil(long markerId) throws IOException {
        List<OracleMessage> all = new ArrayList<>();
        long deadline = System.nanoTime() + READ_TIMEOUT_MILLIS * 1_000_000L; // heartbeats keep single reads alive
        try {
            while (true) {
                List<OracleMessage> frame = readFrame();
                all.addAll(frame);
                for (OracleMessage m : frame) {
                    if (m.id() == markerId && m.type() == Wire.WATERMARK) {
                        return all;
                    }
                }
                if (System.nanoTime() - deadline > 0) {
                    throw new SocketTimeoutException("no reply to request " + markerId + " within "
                            + READ_TIMEOUT_MILLIS + " ms; read " + all);
                }
            }
        } catch (EOFException | SocketException e) {
            closedByOracle = true;
            return all;
        }
    }

    /**
     * Reads until the oracle closes the connection, as it must after a connection-level ERROR.
     *
     * @throws SocketTimeoutException if it does not within {@link #READ_TIMEOUT_MILLIS}
     */
    List<OracleMessage> readUntilClosed() throws IOException {
        return readUntil(-1);
    }

    /** Reads for at most {@code millis}; returns what came, with {@link #closedByOracle()} set if it closed. */
    List<OracleMessage> readFor(int millis) throws IOException {
        socket.setSoTimeout(millis);
        List<OracleMessage> all = new ArrayList<>();
        try {
            while (true) {
                all.addAll(readFrame());
            }
        } catch (EOFException | SocketException e) {
            closedByOracle = true;
        } catch (SocketTimeoutException e) {
            // still open: the oracle waits for the rest of a frame
        }
        return all;
    }

    private List<OracleMessage> readFrame() throws IOException {
        int len = in.readInt();
        if (len < 0 || len > MAX_INBOUND_FRAME) {
            throw new ProtocolException("the oracle sent a frame of " + len + " bytes");
        }
        byte[] bytes = new byte[len];
        in.readFully(bytes);
        ByteBuf f = Unpooled.wrappedBuffer(bytes);
        List<OracleMessage> messages = new ArrayList<>();
        while (f.isReadable()) {
            messages.add(readMessage(f));
        }
        return messages;
    }

    private OracleMessage readMessage(ByteBuf f) {
        byte type = f.readByte();
        return switch (type) {
            case Wire.HELLO -> readHello(f);
            case Wire.DELTA -> {
                f.skipBytes(Varints.readBoundedInt(f, f.readableBytes(), "DELTA length"));
                yield new OracleMessage(type, -1, (byte) 0, null, 0, 0);
            }
            case Wire.STARTED, Wire.COMMITTED, Wire.WATERMARK -> {
                long id = Varints.readUnsigned(f);
                yield new OracleMessage(type, id, (byte) 0, null, Varints.readUnsigned(f), 0);
            }
            case Wire.ABORTED -> {
                long id = Varints.readUnsigned(f);
                yield new OracleMessage(type, id, (byte) 0, null, f.readByte(), 0);
            }
            case Wire.ACK -> new OracleMessage(type, Varints.readUnsigned(f), (byte) 0, null, 0, 0);
            case Wire.STATUS -> {
                long id = Varints.readUnsigned(f);
                byte state = f.readByte();
                yield new OracleMessage(type, id, (byte) 0, null, state, Varints.readUnsigned(f));
            }
            case Wire.ERROR -> {
                long id = Varints.readUnsigned(f);
                byte code = f.readByte();
                yield new OracleMessage(type, id, code, Frames.readString(f, Frames.MAX_ERROR_TEXT), 0, 0);
            }
            default -> throw new ProtocolException("the oracle sent message type " + type + ", which protocol "
                    + "version " + Wire.VERSION + " does not have");
        };
    }

    /** Keeps what an attacker needs from the HELLO (nonce, limits); the aborted set and ranges are skipped. */
    private OracleMessage readHello(ByteBuf f) {
        f.readShort();
        nonce = new byte[Wire.NONCE_BYTES];
        f.readBytes(nonce);
        f.readByte(); // whether a client secret must be proven
        long tInit = Varints.readUnsigned(f);
        Varints.readUnsigned(f); // T_max
        maxWriteSetRows = Varints.readUnsigned(f);
        maxFrameBytes = Varints.readUnsigned(f);
        f.skipBytes(f.readableBytes()); // the rest of the frame: HELLO's tail and perhaps a DELTA
        return new OracleMessage(Wire.HELLO, 0, (byte) 0, null, tInit, 0);
    }

    @Override
    public void close() {
        try {
            socket.close();
        } catch (IOException e) {
            // nothing to do: the connection is gone either way
        }
    }
}
