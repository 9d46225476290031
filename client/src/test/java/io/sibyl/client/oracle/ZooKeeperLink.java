package io.sibyl.client.oracle;

import java.io.ByteArrayInputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * A TCP link between a client and ZooKeeper that a test can cut (the client's side of a network partition, or a
 * ZooKeeper that is down, while the oracles keep their own sessions) and restore. It notes the session each
 * connection asked for and the one ZooKeeper granted, read from the first frame of each direction (ZooKeeper's
 * ConnectRequest and ConnectResponse), so a test can tell a reconnection within the session from a session that
 * expired and was replaced; it also counts the client's requests by kind.
 */
final class ZooKeeperLink implements AutoCloseable {
    /**
     * One connection's handshake: the session asked for (0: a new one) and granted (0: the asked one expired), with the
     * password ZooKeeper gave for it (which lets a second handle attach to the session).
     */
    record Handshake(long askedSession, long grantedSession, byte[] password) {
        boolean refusedAsExpired() {
            return askedSession != 0 && grantedSession == 0;
        }

        boolean openedNewSession() {
            return askedSession == 0 && grantedSession != 0;
        }
    }

    private final ServerSocket server;
    private final int zooKeeperPort;
    private final Set<Socket> open = ConcurrentHashMap.newKeySet();
    private final List<Handshake> handshakes = new CopyOnWriteArrayList<>();
    private final Map<Integer, AtomicInteger> requests = new ConcurrentHashMap<>();
    private volatile boolean cut;

    ZooKeeperLink(String zkConnect) throws IOException {
        zooKeeperPort = Integer.parseInt(zkConnect.substring(zkConnect.lastIndexOf(':') + 1));
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        daemon(this::accept, "zk-link-accept");
    }

    /** The connect string a client uses to reach ZooKeeper through this link. */
    String connect() {
        return "127.0.0.1:" + server.getLocalPort();
    }

    /** Drops every connection and refuses new ones until {@link #restore()}: the client cannot reach ZooKeeper. */
    void cut() {
        cut = true;
        for (Socket s : open) {
            closeQuietly(s);
        }
    }

    void restore() {
        cut = false;
    }

    /** Every handshake seen so far, oldest first. */
    List<Handshake> handshakes() {
        return List.copyOf(handshakes);
    }

    /** How many requests of {@code opCode} ({@code ZooDefs.OpCode}) clients sent through this link so far. */
    int requests(int opCode) {
        AtomicInteger n = requests.get(opCode);
        return n == null ? 0 : n.get();
    }

    private void accept() {
        try {
            while (true) {
                Socket client = server.accept();
                if (cut) {
                    closeQuietly(client); // like a ZooKeeper that is down: the connection ends before any answer
                    continue;
                }
                Socket zk = new Socket(InetAddress.getLoopbackAddress(), zooKeeperPort);
                open.add(client);
                open.add(zk);
                long[] asked = new long[1];
                daemon(() -> pipe(client, zk, asked, null), "zk-link-up");
                daemon(() -> pipe(zk, client, null, asked), "zk-link-down");
            }
        } catch (IOException closed) {
            // the link was closed
        }
    }

    /**
     * Copies one direction. The first frame is the handshake: a ConnectRequest (protocol version, last zxid seen,
     * timeout, session id) from the client, a ConnectResponse (protocol version, timeout, session id, password) from
     * ZooKeeper.
     */
    private void pipe(Socket from, Socket to, long[] askedOut, long[] askedIn) {
        try {
            DataInputStream in = new DataInputStream(from.getInputStream());
            OutputStream out = to.getOutputStream();
            int length = in.readInt();
            byte[] frame = new byte[length];
            in.readFully(frame);
            DataInputStream body = new DataInputStream(new ByteArrayInputStream(frame));
            if (askedOut != null) {
                body.readInt();
                body.readLong();
                body.readInt();
                synchronized (askedOut) {
                    askedOut[0] = body.readLong();
                }
            } else {
                body.readInt();
                body.readInt();
                long granted = body.readLong();
                byte[] password = new byte[body.readInt()];
                body.readFully(password);
                long asked;
                synchronized (askedIn) {
                    asked = askedIn[0]; // ZooKeeper answers only after the request arrived
                }
                handshakes.add(new Handshake(asked, granted, password));
            }
            DataOutputStream forward = new DataOutputStream(out);
            forward.writeInt(length);
            forward.write(frame);
            forward.flush();
            if (askedOut != null) {
                countRequests(in, forward);
            } else {
                copy(in, out);
            }
        } catch (IOException e) {
            // either side went away, or the link was cut
        } finally {
            closeQuietly(from);
            closeQuietly(to);
            open.remove(from);
            open.remove(to);
        }
    }

    /** Forwards the client's requests frame by frame (length, xid, op code, ...), counting them by op code. */
    private void countRequests(DataInputStream in, DataOutputStream out) throws IOException {
        while (true) {
            int length = in.readInt();
            byte[] frame = new byte[length];
            in.readFully(frame);
            if (length >= 8) {
                int opCode = ((frame[4] & 0xff) << 24) | ((frame[5] & 0xff) << 16) | ((frame[6] & 0xff) << 8)
                        | (frame[7] & 0xff);
                requests.computeIfAbsent(opCode, k -> new AtomicInteger()).incrementAndGet();
            }
            out.writeInt(length);
            out.write(frame);
            out.flush();
        }
    }

    private static void copy(InputStream in, OutputStream out) throws IOException {
        byte[] buf = new byte[8192];
        int n;
        while ((n = in.read(buf)) >= 0) {
            out.write(buf, 0, n);
            out.flush();
        }
    }

    private static void closeQuietly(Closeable s) {
        try {
            s.close();
        } catch (IOException e) {
            // already closed
        }
    }

    private static void daemon(Runnable r, String name) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
    }

    @Override
    public void close() {
        cut();
        closeQuietly(server);
    }
}
