package io.sibyl.oracle.ha;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sibyl.protocol.Frames;
import io.sibyl.protocol.TlsSettings;
import io.sibyl.protocol.Varints;
import io.sibyl.protocol.Wire;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.Socket;
import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import javax.net.ssl.SSLSocket;
import javax.net.ssl.SSLSocketFactory;

/**
 * The first standby's tie to the leader: one idle TCP connection to the leader's client port, opened with a watch
 * handshake ({@link Wire#ROLE_WATCH}), so the leader neither times it out as a connection that never said hello nor
 * spends a replica on it. When the leader process dies (kill -9 included) its kernel closes the socket and the read
 * here returns at once, far sooner than the dead leader's ZooKeeper session expires. A lost connection is only a
 * suspicion; acting on it is safe because the takeover fences the journal, so a leader that was in fact alive stops
 * (fatal error) rather than decide alongside the new one.
 *
 * <p>A connection the leader closes after an ERROR frame was refused by a live leader (at its max.connections, or a
 * leader that does not take this handshake): that is no reason to depose it, so the watch tries again after a pause,
 * and meanwhile only the end of the leader's ZooKeeper session replaces it.
 */
final class LeaderConnectionWatch implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LeaderConnectionWatch.class);
    private static final int CONNECT_TIMEOUT_MS = 1000;
    /** Pause before watching again after the leader refused the watch connection. */
    static final long REFUSED_RETRY_MS = 1000;

    private final String host;
    private final int port;
    /** TLS to the leader (the oracles' own {@code tls.*} settings), or null on a plaintext port. */
    private final SSLSocketFactory tls;
    private final Thread thread;
    private volatile Socket socket;
    private volatile boolean closed;

    /** Connects on a daemon thread; {@code onLost} runs once if the connection cannot be made or ends. */
    LeaderConnectionWatch(String host, int port, Runnable onLost) {
        this(host, port, TlsSettings.disabled("tls."), onLost);
    }

    /** As {@link #LeaderConnectionWatch(String, int, Runnable)}, with the oracles' TLS when {@code tls} enables it. */
    LeaderConnectionWatch(String host, int port, TlsSettings tls, Runnable onLost) {
        this.host = host;
        this.port = port;
        this.tls = tls.enabled() ? tls.jdkClientContext().getSocketFactory() : null;
        thread = new Thread(() -> watch(onLost), "sibyl-leader-watch");
        thread.setDaemon(true);
        thread.start();
    }

    private void watch(Runnable onLost) {
        InetSocketAddress address = new InetSocketAddress(host, port);
        if (address.isUnresolved()) {
            // A name this machine cannot resolve says nothing about the leader's health: deposing it would only
            // hand leadership to a standby whose own address may be as unusable. Wait for its session instead.
            LOG.error("standby: cannot resolve the leader's advertised host '{}' (check advertised.host); it is"
                    + " replaced only when its ZooKeeper session ends", host);
            return;
        }
        String why;
        String lastRefusal = null;
        while (true) {
            Socket s;
            try {
                s = tls != null ? tls.createSocket() : new Socket();
            } catch (IOException e) {
                why = e.toString();
                break;
            }
            socket = s;
            if (closed) {
                closeQuietly(s);
                return;
            }
            String refusal;
            try {
                s.connect(address, CONNECT_TIMEOUT_MS);
                if (s instanceof SSLSocket ssl) {
                    SSLParameters params = ssl.getSSLParameters();
                    params.setEndpointIdentificationAlgorithm("HTTPS");
                    ssl.setSSLParameters(params);
                    ssl.startHandshake();
                }
                DataOutputStream out = new DataOutputStream(s.getOutputStream());
                out.writeInt(7);
                out.writeInt(Wire.MAGIC);
                out.writeShort(Wire.VERSION);
                out.writeByte(Wire.ROLE_WATCH);
                out.flush();
                if (lastRefusal == null) {
                    LOG.info("standby: watching the leader at {}:{} over an idle connection", host, port);
                }
                refusal = readUntilClosed(new DataInputStream(s.getInputStream()));
            } catch (SSLException e) {
                // A leader that answers TLS is alive: a certificate problem must not depose it.
                refusal = "TLS handshake failed: " + e.getMessage() + " (check the oracles' tls.* settings: each"
                        + " oracle's trust store must trust the others' certificates)";
            } catch (IOException e) {
                why = e.toString();
                break;
            } finally {
                closeQuietly(s);
            }
            if (refusal == null) {
                why = "the leader closed the connection";
                break;
            }
            if (!refusal.equals(lastRefusal)) {
                LOG.warn("standby: the leader at {}:{} refused the watch connection ({}); it is alive, so it is not"
                        + " deposed. Trying again every {} ms; meanwhile only the end of its ZooKeeper session would"
                        + " replace it", host, port, refusal, REFUSED_RETRY_MS);
            }
            lastRefusal = refusal;
            try {
                Thread.sleep(REFUSED_RETRY_MS);
            } catch (InterruptedException e) {
                return;
            }
        }
        if (!closed) {
            LOG.warn("standby: lost the leader at {}:{}: {}", host, port, why);
            onLost.run();
        }
    }

    /**
     * Reads until the leader closes the connection. Returns the text of a connection-level ERROR it sent first (the
     * leader is alive and refused the watch), or null. Other frames (an older leader treats the watch as a client and
     * sends it HELLO, metadata and heartbeats) are skipped.
     */
    private static String readUntilClosed(DataInputStream in) throws IOException {
        String refusal = null;
        while (true) {
            int length;
            byte[] frame;
            try {
                length = in.readInt();
                if (length < 0) {
                    throw new IOException("the leader sent a frame of length " + length);
                }
                if (length > 64 * 1024) {
                    in.skipNBytes(length);
                    continue;
                }
                frame = new byte[length];
                in.readFully(frame);
            } catch (EOFException e) {
                return refusal;
            }
            if (length > 0 && frame[0] == Wire.ERROR && refusal == null) {
                refusal = errorText(Unpooled.wrappedBuffer(frame, 1, length - 1));
            }
        }
    }

    /** The code and text of a connection-level ERROR, or null if it is a request's error or cannot be read. */
    private static String errorText(ByteBuf error) {
        try {
            if (Varints.readUnsigned(error) != 0) {
                return null;
            }
            byte code = error.readByte();
            return "ERROR code " + code + ": " + Frames.readString(error, Frames.MAX_ERROR_TEXT * 4);
        } catch (RuntimeException e) {
            return null;
        }
    }

    private static void closeQuietly(Socket s) {
        if (s == null) {
            return;
        }
        try {
            s.close();
        } catch (IOException e) {
            // closing anyway
        }
    }

    /** True if this watches {@code host:port}. */
    boolean watches(String otherHost, int otherPort) {
        return host.equals(otherHost) && port == otherPort;
    }

    @Override
    public void close() {
        closed = true;
        closeQuietly(socket);
        thread.interrupt();
    }
}
