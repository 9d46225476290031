package io.sibyl.oracle.ha;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InputStream;
import java.net.InetSocketAddress;
import java.net.Socket;

/**
 * The first standby's tie to the leader: one idle TCP connection to the leader's client port. It never sends the
 * handshake, so the leader spends nothing on it; when the leader process dies (kill -9 included) its kernel closes
 * the socket and the read here returns at once, far sooner than the dead leader's ZooKeeper session expires. A lost
 * connection is only a suspicion; acting on it is safe because the takeover fences the journal, so a leader that was
 * in fact alive stops (fatal error) rather than decide alongside the new one.
 */
final class LeaderConnectionWatch implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LeaderConnectionWatch.class);
    private static final int CONNECT_TIMEOUT_MS = 1000;

    private final String host;
    private final int port;
    private final Socket socket = new Socket();
    private final Thread thread;
    private volatile boolean closed;

    /** Connects on a daemon thread; {@code onLost} runs once if the connection cannot be made or ends. */
    LeaderConnectionWatch(String host, int port, Runnable onLost) {
        this.host = host;
        this.port = port;
        thread = new Thread(() -> {
            String why;
            InetSocketAddress address = new InetSocketAddress(host, port);
            if (address.isUnresolved()) {
                // A name this machine cannot resolve says nothing about the leader's health: deposing it would only
                // hand leadership to a standby whose own address may be as unusable. Wait for its session instead.
                LOG.error("standby: cannot resolve the leader's advertised host '{}' (check advertised.host); it is"
                        + " replaced only when its ZooKeeper session ends", host);
                return;
            }
            try {
                socket.connect(address, CONNECT_TIMEOUT_MS);
                LOG.info("standby: watching the leader at {}:{} over an idle connection", host, port);
                InputStream in = socket.getInputStream();
                while (in.read() >= 0) {
                    // the leader sends nothing to a connection without a handshake; ignore whatever it does send
                }
                why = "the leader closed the connection";
            } catch (IOException e) {
                why = e.toString();
            }
            if (!closed) {
                LOG.warn("standby: lost the leader at {}:{}: {}", host, port, why);
                onLost.run();
            }
        }, "sibyl-leader-watch");
        thread.setDaemon(true);
        thread.start();
    }

    /** True if this watches {@code host:port}. */
    boolean watches(String otherHost, int otherPort) {
        return host.equals(otherHost) && port == otherPort;
    }

    @Override
    public void close() {
        closed = true;
        try {
            socket.close();
        } catch (IOException e) {
            // closing anyway
        }
    }
}
