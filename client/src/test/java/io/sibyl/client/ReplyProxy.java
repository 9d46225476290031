package io.sibyl.client;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.Arrays;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * A TCP proxy in front of an oracle that can hold the oracle's replies back (a slow network) or swallow them (a
 * network that lost one direction), while requests pass untouched and in order.
 */
final class ReplyProxy implements AutoCloseable {
    private final ServerSocket server;
    private final int target;
    private volatile long replyDelayMillis;
    private volatile boolean dropReplies;

    ReplyProxy(int target) throws IOException {
        this.target = target;
        server = new ServerSocket(0, 50, InetAddress.getLoopbackAddress());
        daemon(this::accept);
    }

    int port() {
        return server.getLocalPort();
    }

    void delayReplies(long millis) {
        replyDelayMillis = millis;
    }

    void dropReplies() {
        dropReplies = true;
    }

    private void accept() {
        try {
            while (true) {
                Socket client = server.accept();
                Socket oracle = new Socket(InetAddress.getLoopbackAddress(), target);
                forward(client.getInputStream(), oracle.getOutputStream(), false, client, oracle);
                forward(oracle.getInputStream(), client.getOutputStream(), true, client, oracle);
            }
        } catch (IOException closed) {
            // the proxy was closed
        }
    }

    private record Chunk(long dueNanos, byte[] bytes) {
    }

    /** Copies one direction; replies go through a queue so that a delay keeps their order. */
    private void forward(InputStream in, OutputStream out, boolean replies, Socket a, Socket b) {
        LinkedBlockingQueue<Chunk> queue = new LinkedBlockingQueue<>();
        daemon(() -> {
            byte[] buf = new byte[8192];
            try {
                int n;
                while ((n = in.read(buf)) >= 0) {
                    long delay = replies ? replyDelayMillis : 0;
                    queue.add(new Chunk(System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(delay),
                            Arrays.copyOf(buf, n)));
                }
            } catch (IOException closed) {
                // either side went away
            }
            queue.add(new Chunk(0, null));
        });
        daemon(() -> {
            try {
                while (true) {
                    Chunk c = queue.take();
                    if (c.bytes() == null) {
                        break;
                    }
                    long wait = c.dueNanos() - System.nanoTime();
                    if (wait > 0) {
                        TimeUnit.NANOSECONDS.sleep(wait);
                    }
                    if (!(replies && dropReplies)) {
                        out.write(c.bytes());
                        out.flush();
                    }
                }
            } catch (IOException | InterruptedException closed) {
                // either side went away
            }
            closeQuietly(a);
            closeQuietly(b);
        });
    }

    private static void closeQuietly(Socket s) {
        try {
            s.close();
        } catch (IOException ignored) {
            // closing anyway
        }
    }

    private static void daemon(Runnable r) {
        Thread t = new Thread(r, "reply-proxy");
        t.setDaemon(true);
        t.start();
    }

    @Override
    public void close() throws IOException {
        server.close();
    }
}
