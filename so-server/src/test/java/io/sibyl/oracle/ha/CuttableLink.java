package io.sibyl.oracle.ha;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;

/**
 * A TCP relay on the loopback address to a server on this machine, which a test can cut (every relayed connection
 * closed, new ones closed as soon as they are accepted) and restore: a network partition between one client and the
 * server, for instance an oracle and its ZooKeeper, while everything else keeps its own route.
 */
final class CuttableLink implements AutoCloseable {
    private final int targetPort;
    private final ServerSocket listener;
    private final List<Socket> open = new CopyOnWriteArrayList<>();
    private final Thread acceptor;
    private volatile boolean cut;
    private volatile boolean closed;

    CuttableLink(int targetPort) throws IOException {
        this.targetPort = targetPort;
        listener = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        acceptor = new Thread(this::accept, "cuttable-link-accept");
        acceptor.setDaemon(true);
        acceptor.start();
    }

    /** The {@code host:port} to connect to instead of the server's. */
    String address() {
        return "127.0.0.1:" + listener.getLocalPort();
    }

    /** Closes every relayed connection and refuses new ones until {@link #restore()}. */
    void cut() {
        cut = true;
        for (Socket s : open) {
            closeQuietly(s);
        }
        open.clear();
    }

    /** Relays new connections again. */
    void restore() {
        cut = false;
    }

    private void accept() {
        while (!closed) {
            Socket client;
            try {
                client = listener.accept();
            } catch (IOException e) {
                return; // closed
            }
            if (cut) {
                closeQuietly(client);
                continue;
            }
            try {
                Socket server = new Socket();
                server.connect(new InetSocketAddress(InetAddress.getLoopbackAddress(), targetPort), 5000);
                open.add(client);
                open.add(server);
                pump(client, server);
                pump(server, client);
            } catch (IOException e) {
                closeQuietly(client);
            }
        }
    }

    /** Copies {@code from} to {@code to} until either ends, then closes both. */
    private void pump(Socket from, Socket to) {
        Thread t = new Thread(() -> {
            byte[] buffer = new byte[8192];
            try (InputStream in = from.getInputStream(); OutputStream out = to.getOutputStream()) {
                for (int n = in.read(buffer); n >= 0; n = in.read(buffer)) {
                    out.write(buffer, 0, n);
                    out.flush();
                }
            } catch (IOException e) {
                // cut, or one side closed
            } finally {
                closeQuietly(from);
                closeQuietly(to);
                open.remove(from);
                open.remove(to);
            }
        }, "cuttable-link-pump");
        t.setDaemon(true);
        t.start();
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // already closed
        }
    }

    @Override
    public void close() throws IOException {
        closed = true;
        listener.close();
        cut();
    }
}
