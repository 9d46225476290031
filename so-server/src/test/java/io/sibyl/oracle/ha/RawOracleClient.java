package io.sibyl.oracle.ha;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sibyl.protocol.Frames;
import io.sibyl.protocol.Varints;
import io.sibyl.protocol.Wire;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;

/**
 * A minimal blocking oracle client on a plain socket for the failover tests and benchmark (so-server cannot use the
 * client module): one request at a time, DELTAs skipped. Any I/O failure or ERROR reply is an IOException.
 */
final class RawOracleClient implements AutoCloseable {
    /** A reply: its type and its value (start or commit timestamp, watermark, abort reason, status). */
    record Reply(byte type, long value, long commitTs) {
    }

    private final Socket socket;
    private final DataInputStream in;
    private final DataOutputStream out;
    private long nextId = 1;

    private RawOracleClient(Socket socket) throws IOException {
        this.socket = socket;
        this.in = new DataInputStream(socket.getInputStream());
        this.out = new DataOutputStream(socket.getOutputStream());
    }

    /** Connects and completes the handshake (the oracle's HELLO is read and skipped). */
    static RawOracleClient connect(String host, int port, int timeoutMs) throws IOException {
        Socket s = new Socket();
        try {
            s.setTcpNoDelay(true);
            s.setSoTimeout(timeoutMs);
            s.connect(new InetSocketAddress(host, port), timeoutMs);
            RawOracleClient c = new RawOracleClient(s);
            ByteBuf b = Unpooled.buffer();
            b.writeInt(Wire.MAGIC);
            b.writeShort(Wire.VERSION);
            c.send(b);
            c.read(Wire.HELLO, 0);
            return c;
        } catch (IOException | RuntimeException e) {
            s.close();
            throw e;
        }
    }

    /** BEGIN: returns the start timestamp. */
    long begin() throws IOException {
        return askWithoutBody(Wire.BEGIN, Wire.STARTED);
    }

    /** Sends a BEGIN without waiting for its reply; returns the request id for {@link #awaitStarted}. */
    long sendBegin() throws IOException {
        long id = nextId++;
        ByteBuf b = Unpooled.buffer();
        b.writeByte(Wire.BEGIN);
        Varints.writeUnsigned(b, id);
        send(b);
        return id;
    }

    /** Waits for the STARTED reply to the BEGIN sent as request {@code id}; returns the start timestamp. */
    long awaitStarted(long id) throws IOException {
        return read(Wire.STARTED, id).value();
    }

    /** Sends a request that has no body and returns the value of its reply. */
    private long askWithoutBody(byte request, byte reply) throws IOException {
        long id = nextId++;
        ByteBuf b = Unpooled.buffer();
        b.writeByte(request);
        Varints.writeUnsigned(b, id);
        send(b);
        return read(reply, id).value();
    }

    /** COMMIT: returns COMMITTED (value = commit timestamp) or ABORTED (value = reason). */
    Reply commit(long startTs, long... rows) throws IOException {
        long id = nextId++;
        ByteBuf b = Unpooled.buffer();
        b.writeByte(Wire.COMMIT);
        Varints.writeUnsigned(b, id);
        Varints.writeUnsigned(b, startTs);
        Varints.writeUnsigned(b, rows.length);
        for (long r : rows) {
            b.writeLong(r);
        }
        send(b);
        return read((byte) 0, id);
    }

    /** QUERY about a writer: value = state (Wire.STATUS_*), commitTs = its commit timestamp or 0. */
    Reply query(long startTs) throws IOException {
        long id = nextId++;
        ByteBuf b = Unpooled.buffer();
        b.writeByte(Wire.QUERY);
        Varints.writeUnsigned(b, id);
        Varints.writeUnsigned(b, startTs);
        send(b);
        return read(Wire.STATUS, id);
    }

    /** FINISH of a transaction that wrote nothing (no reply). */
    void finish(long startTs) throws IOException {
        ByteBuf b = Unpooled.buffer();
        b.writeByte(Wire.FINISH);
        Varints.writeUnsigned(b, nextId++);
        Varints.writeUnsigned(b, startTs);
        send(b);
    }

    /** WATERMARK_QUERY: returns the oracle's low watermark. */
    long lowWatermark() throws IOException {
        return askWithoutBody(Wire.WATERMARK_QUERY, Wire.WATERMARK);
    }

    private void send(ByteBuf body) throws IOException {
        byte[] bytes = new byte[body.readableBytes()];
        body.readBytes(bytes);
        out.writeInt(bytes.length);
        out.write(bytes);
        out.flush();
    }

    /** Reads frames until the reply to {@code id} (or a HELLO when {@code want} is HELLO). */
    private Reply read(byte want, long id) throws IOException {
        while (true) {
            int len = in.readInt();
            byte[] bytes = new byte[len];
            in.readFully(bytes);
            ByteBuf f = Unpooled.wrappedBuffer(bytes);
            Reply found = null;
            while (f.isReadable()) {
                byte type = f.readByte();
                switch (type) {
                    case Wire.HELLO -> {
                        skipHello(f);
                        if (want == Wire.HELLO) {
                            found = new Reply(type, 0, 0);
                        }
                    }
                    case Wire.DELTA -> f.skipBytes((int) Varints.readUnsigned(f));
                    case Wire.STARTED, Wire.COMMITTED, Wire.WATERMARK -> {
                        long rid = Varints.readUnsigned(f);
                        long v = Varints.readUnsigned(f);
                        if (rid == id) {
                            found = new Reply(type, v, type == Wire.COMMITTED ? v : 0);
                        }
                    }
                    case Wire.ABORTED -> {
                        long rid = Varints.readUnsigned(f);
                        byte reason = f.readByte();
                        if (rid == id) {
                            found = new Reply(type, reason, 0);
                        }
                    }
                    case Wire.ACK -> Varints.readUnsigned(f);
                    case Wire.STATUS -> {
                        long rid = Varints.readUnsigned(f);
                        byte state = f.readByte();
                        long commitTs = Varints.readUnsigned(f);
                        if (rid == id) {
                            found = new Reply(type, state, commitTs);
                        }
                    }
                    case Wire.ERROR -> {
                        long rid = Varints.readUnsigned(f);
                        byte code = f.readByte();
                        String text = Frames.readString(f, Frames.MAX_ERROR_TEXT);
                        throw new IOException("oracle ERROR " + code + " for request " + rid + ": " + text);
                    }
                    default -> throw new IOException("unexpected message type " + type + " from the oracle");
                }
            }
            if (found != null) {
                return found;
            }
        }
    }

    /** Aborted ranges the HELLO of this connection listed (transactions in doubt after earlier recoveries). */
    long helloRanges = -1;

    private void skipHello(ByteBuf f) {
        f.readShort();
        f.skipBytes(Wire.NONCE_BYTES + 1); // and whether a client secret must be proven
        for (int i = 0; i < 6; i++) {
            Varints.readUnsigned(f); // T_init, T_max, max write set rows, max frame bytes, reader grace, max age
        }
        for (int list = 0; list < 3; list++) { // aborted set: snapshot, added since, removed since
            long aborted = Varints.readUnsigned(f);
            for (long i = 0; i < aborted; i++) {
                Varints.readUnsigned(f);
            }
        }
        long ranges = Varints.readUnsigned(f);
        helloRanges = ranges;
        for (long i = 0; i < ranges; i++) {
            Varints.readUnsigned(f);
            Varints.readUnsigned(f);
            long commits = Varints.readUnsigned(f);
            for (long k = 0; k < commits; k++) {
                Varints.readUnsigned(f);
            }
        }
    }

    @Override
    public void close() throws IOException {
        socket.close();
    }
}
