package io.sibyl.admin;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sibyl.protocol.AdminReplies;
import io.sibyl.protocol.Frames;
import io.sibyl.protocol.ProtocolException;
import io.sibyl.protocol.SecretProof;
import io.sibyl.protocol.TlsSettings;
import io.sibyl.protocol.Varints;
import io.sibyl.protocol.Wire;

import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.util.Map;

/**
 * One blocking connection of {@code bin/sibyl} to an oracle, authenticated as admin: it sends one request at a time
 * and reads until that request's reply, skipping the metadata ({@code DELTA}) and heartbeats every client gets.
 * The CLI does not use {@code OracleClient}: that one keeps a replica and a pipeline for transactions, and knows
 * nothing of the admin replies; this one is a few frames long.
 */
final class AdminConnection implements AutoCloseable {
    /** Largest frame read: the admin replies are far smaller, but a DELTA before them may be large. */
    private static final int MAX_FRAME_BYTES = 64 << 20;

    private final String address;
    private final Socket socket;
    private final DataInputStream in;
    private final OutputStream out;
    private long nextId = 1;

    private AdminConnection(String address, Socket socket) throws IOException {
        this.address = address;
        this.socket = socket;
        this.in = new DataInputStream(socket.getInputStream());
        this.out = socket.getOutputStream();
    }

    /**
     * Connects to the oracle at {@code host:port}, handshakes and proves {@code adminSecret} (the oracle's
     * {@code admin.secret.file}), unless the oracle gave the connection's client certificate the admin role ({@code
     * adminSecret} may then be null).
     *
     * @throws CliException saying what failed and what to check
     */
    static AdminConnection open(String host, int port, TlsSettings tls, byte[] adminSecret, int timeoutMillis) {
        String address = host + ":" + port;
        Socket socket = null;
        try {
            socket = tls.enabled() ? tls.jdkClientContext().getSocketFactory().createSocket() : new Socket();
            socket.connect(new InetSocketAddress(host, port), timeoutMillis);
            socket.setSoTimeout(timeoutMillis);
            socket.setTcpNoDelay(true);
            if (socket instanceof SSLSocket ssl) {
                ssl.startHandshake();
            }
            AdminConnection c = new AdminConnection(address, socket);
            c.handshake(adminSecret);
            return c;
        } catch (SSLException e) {
            closeQuietly(socket);
            throw new CliException("TLS with the oracle at " + address + " failed: " + e.getMessage() + "; check that"
                    + " -D sibyl.client.tls.trust.store trusts the oracle's certificate, or drop -D sibyl.client.tls=true"
                    + " if the oracle has no TLS");
        } catch (SocketTimeoutException e) {
            closeQuietly(socket);
            throw new CliException("the oracle at " + address + " did not answer within " + timeoutMillis + " ms: is"
                    + " it stopped (SIGSTOP), overloaded, or is this another service's port?");
        } catch (IOException e) {
            closeQuietly(socket);
            throw new CliException("cannot talk to the oracle at " + address + ": " + e.getMessage() + "; is it"
                    + " running, and is this its address (--oracle, or the leader znode under --zk)?");
        } catch (CliException | ProtocolException e) {
            closeQuietly(socket);
            throw e instanceof CliException c ? c : new CliException("the oracle at " + address + " sent something"
                    + " this CLI cannot read (" + e.getMessage() + "): is it a Sibyl oracle of this release?");
        }
    }

    /** The oracle's figures ({@code ORACLE_STATUS}), in the oracle's order. */
    Map<String, Long> status() throws IOException {
        ByteBuf reply = request(Wire.ORACLE_STATUS_QUERY, Wire.ORACLE_STATUS);
        return AdminReplies.readStatus(reply);
    }

    /** The oldest {@code limit} running transactions and how many run. */
    AdminReplies.RunningList running(int limit) throws IOException {
        ByteBuf reply = request(Wire.RUNNING_QUERY, Wire.RUNNING_LIST, limit);
        return AdminReplies.readRunning(reply);
    }

    /** What the oracle knows of {@code startTs}: a {@code STATUS} state byte ({@link Wire#STATUS_RUNNING}, ...). */
    byte query(long startTs) throws IOException {
        ByteBuf reply = request(Wire.QUERY, Wire.STATUS, startTs);
        return reply.readByte();
    }

    /** Aborts {@code startTs} (the admin may abort any client's transaction). */
    void abort(long startTs) throws IOException {
        request(Wire.ABORT, Wire.ACK, startTs);
    }

    private void handshake(byte[] adminSecret) throws IOException {
        ByteBuf hs = Unpooled.buffer().writeInt(Wire.MAGIC).writeShort(Wire.VERSION);
        send(hs);
        byte[] nonce = null;
        int flags = 0;
        while (nonce == null) {
            ByteBuf frame = readFrame();
            if (!frame.isReadable()) {
                continue; // a heartbeat
            }
            byte type = frame.readByte();
            if (type == Wire.ERROR) {
                throw refused(frame);
            }
            if (type != Wire.HELLO) {
                throw new ProtocolException("expected HELLO, got message type " + type);
            }
            short version = frame.readShort();
            if (version != Wire.VERSION) {
                throw new CliException("the oracle at " + address + " speaks protocol version " + version + ", this"
                        + " CLI " + Wire.VERSION + ": use the bin/sibyl of the oracle's release");
            }
            nonce = new byte[Wire.NONCE_BYTES];
            frame.readBytes(nonce);
            flags = frame.readByte(); // the rest (T_max, aborted set, a DELTA) is for replicas
        }
        if ((flags & Wire.HELLO_ADMIN) != 0) {
            return; // the oracle gave this connection's certificate the admin role (its admin.identities)
        }
        if (adminSecret == null) {
            throw new CliException("the oracle at " + address + " does not give this client certificate the admin"
                    + " role: add its identity to the oracle's admin.identities, or give --admin-secret-file=FILE");
        }
        ByteBuf auth = Unpooled.buffer().writeByte(Wire.AUTHENTICATE);
        long id = nextId++;
        Varints.writeUnsigned(auth, id);
        auth.writeByte(Wire.AUTH_ADMIN).writeBytes(SecretProof.compute(adminSecret, Wire.AUTH_ADMIN, nonce));
        send(auth);
        awaitReply(id, Wire.ACK);
    }

    private ByteBuf request(byte type, byte expected, long... args) throws IOException {
        long id = nextId++;
        ByteBuf b = Unpooled.buffer().writeByte(type);
        Varints.writeUnsigned(b, id);
        for (long a : args) {
            Varints.writeUnsigned(b, a);
        }
        send(b);
        return awaitReply(id, expected);
    }

    /** Reads until the reply to {@code id}; returns the frame positioned after the reply's type and id. */
    private ByteBuf awaitReply(long id, byte expected) throws IOException {
        while (true) {
            ByteBuf f = readFrame();
            while (f.isReadable()) {
                byte type = f.readByte();
                if (type == Wire.DELTA) {
                    f.skipBytes(Varints.readBoundedInt(f, f.readableBytes(), "delta length"));
                    continue;
                }
                long replyId = Varints.readUnsigned(f);
                if (type == Wire.ERROR) {
                    if (replyId == id || replyId == 0) {
                        throw refused(f);
                    }
                    f.readByte();
                    Frames.readString(f, Frames.MAX_ERROR_TEXT * 4);
                    continue;
                }
                if (replyId != id || type != expected) {
                    throw new ProtocolException("unexpected reply type " + type + " to request " + replyId);
                }
                return f;
            }
        }
    }

    /** An ERROR from the oracle (positioned at its code), as the operator's message. */
    private CliException refused(ByteBuf f) {
        byte code = f.readByte();
        String text = Frames.readString(f, Frames.MAX_ERROR_TEXT * 4);
        if (code == Wire.ERR_MALFORMED && text.contains("unknown message type")) {
            return new CliException("the oracle at " + address + " does not know this request (" + text + "): it is"
                    + " older than this CLI; upgrade it, or use the bin/sibyl of its release");
        }
        return new CliException("the oracle at " + address + " refused: " + text);
    }

    private void send(ByteBuf body) throws IOException {
        byte[] bytes = new byte[Wire.LENGTH_FIELD_BYTES + body.readableBytes()];
        Unpooled.wrappedBuffer(bytes).writerIndex(0).writeInt(body.readableBytes()).writeBytes(body);
        out.write(bytes);
        out.flush();
    }

    private ByteBuf readFrame() throws IOException {
        try {
            int len = in.readInt();
            if (len < 0 || len > MAX_FRAME_BYTES) {
                throw new ProtocolException("frame of " + len + " bytes");
            }
            byte[] bytes = new byte[len];
            in.readFully(bytes);
            return Unpooled.wrappedBuffer(bytes);
        } catch (EOFException e) {
            throw new CliException("the oracle at " + address + " closed the connection: if it uses TLS, pass -D"
                    + " sibyl.client.tls=true (and -D sibyl.client.tls.trust.store=...); if it requires a client"
                    + " certificate, -D sibyl.client.tls.key.store=...");
        }
    }

    @Override
    public void close() {
        closeQuietly(socket);
    }

    private static void closeQuietly(Socket s) {
        if (s != null) {
            try {
                s.close();
            } catch (IOException e) {
                // closing: nothing more to tell
            }
        }
    }
}
