package io.sibyl.client.oracle;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.UnpooledByteBufAllocator;

import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.locks.LockSupport;
import java.util.concurrent.locks.ReentrantLock;

/**
 * A plaintext connection on a blocking socket where the thread that queues a request writes it (together with any
 * others queued meanwhile) and the thread that waits for a reply reads it: a round trip then wakes one client thread,
 * the one that waits, instead of that thread and an event loop.
 *
 * <p>One thread at a time holds the reading role and reads frames, applying each (and completing the futures it
 * answers) before the next; a thread that waits while another reads parks until its reply is applied or the role is
 * let go, and then reads in its turn. A poller thread reads when nobody waits: every millisecond it takes the role if
 * replies are due that nobody reads (requests whose futures nobody waits on here) and reads until they came or a
 * thread waits; every {@value #IDLE_POLL_MILLIS} ms it applies what arrived meanwhile (the oracle's pushes and
 * heartbeats) and, on a connection quiet for {@value #QUIET_MILLIS} ms, looks for the oracle having closed it. It
 * also runs the connection's scheduled tasks.
 *
 * <p>Callbacks of the futures run on the thread that reads: like on an event loop, they must not wait for another
 * reply (that fails at once here instead of hanging).
 */
final class WaitingThreadTransport implements FrameTransport {
    /** How often a thread blocked reading looks at its deadline, its interrupt and the connection's close. */
    private static final int READ_SLICE_MILLIS = 20;
    private static final long IDLE_POLL_MILLIS = 10;
    /** A connection that wrote nothing for this long is quiet: the poller then looks for its close. */
    private static final long QUIET_MILLIS = 50;
    private static final long BUSY_POLL_NANOS = TimeUnit.MILLISECONDS.toNanos(1);

    /** A thread waiting for a reply while another reads. */
    private record Follower(Thread thread, CompletableFuture<?> reply) {
    }

    private final OracleClient client;
    private final String address;
    private final RequestPipeline requests;
    private final ReplyDecoder decoder;
    private final ReadWindow window;
    private final Socket socket;
    private final OutputStream out;
    private final FrameReader reader;
    private final ReentrantLock writer = new ReentrantLock();
    private final ReentrantLock readingRole = new ReentrantLock();
    private final Queue<Follower> followers = new ConcurrentLinkedQueue<>();
    private final ScheduledThreadPoolExecutor poller;
    private final ByteBufAllocator alloc = UnpooledByteBufAllocator.DEFAULT;
    private final RequestPipeline.FrameSink sink = this::writeFrame;
    /** A write failed during the current flush (writer only); the connection is lost after it. */
    private IOException writeFailure;
    /** When the last frame was written ({@link System#nanoTime}). */
    private volatile long lastWriteNanos = System.nanoTime();
    private volatile boolean closed;

    private WaitingThreadTransport(OracleClient client, RequestPipeline requests, ReplyDecoder decoder,
                                   ReadWindow window, Socket socket) throws IOException {
        this.client = client;
        this.address = client.address();
        this.requests = requests;
        this.decoder = decoder;
        this.window = window;
        this.socket = socket;
        this.out = socket.getOutputStream();
        this.reader = new FrameReader(socket.getInputStream(), OracleChannels.MAX_INBOUND_FRAME);
        this.poller = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "sibyl-oracle-poller");
            t.setDaemon(true);
            return t;
        });
        poller.setRemoveOnCancelPolicy(true);
    }

    /** Connects to {@code host:port} within {@code timeoutMillis} and starts the poller. */
    static WaitingThreadTransport connect(String host, int port, long timeoutMillis, OracleClient client,
                                          RequestPipeline requests, ReplyDecoder decoder, ReadWindow window)
            throws IOException {
        Socket s = new Socket();
        try {
            s.setTcpNoDelay(true);
            s.connect(new InetSocketAddress(host, port), (int) Math.min(Integer.MAX_VALUE, timeoutMillis));
            s.setSoTimeout(READ_SLICE_MILLIS);
            WaitingThreadTransport t = new WaitingThreadTransport(client, requests, decoder, window, s);
            t.poller.schedule(t::poll, IDLE_POLL_MILLIS, TimeUnit.MILLISECONDS);
            return t;
        } catch (IOException | RuntimeException e) {
            s.close();
            throw e;
        }
    }

    /** Sends {@code frame} as it is (the handshake, before any request). */
    void sendNow(ByteBuf frame) throws IOException {
        writer.lock();
        try {
            frame.getBytes(frame.readerIndex(), out, frame.readableBytes());
        } finally {
            writer.unlock();
            frame.release();
        }
    }

    @Override
    public void requestsQueued() {
        do {
            if (!writer.tryLock()) {
                return; // the writer flushes again after it lets go, and so writes this one
            }
            IOException writeError;
            try {
                requests.flushOutgoing(alloc, sink);
                writeError = writeFailure;
                writeFailure = null;
            } finally {
                writer.unlock();
            }
            if (writeError != null) {
                failed(writeError);
                return;
            }
        } while (requests.hasQueued() && !closed);
    }

    /**
     * Leaves the request for the next writer: the next request of any thread, or the poller within
     * {@value #IDLE_POLL_MILLIS} ms. A read-only transaction's {@code FINISH} then costs no write of its own, and the
     * oracle reads it with the next begin instead of waking for it.
     */
    @Override
    public void oneWayQueued() {
    }

    @Override
    public void flushLeftRequests() {
        if (!closed && requests.hasQueued()) {
            requestsQueued();
        }
    }

    /** The sink of a flush: a failed write drops the frames after it, whose requests then fail with the loss. */
    private void writeFrame(ByteBuf frame, boolean last) {
        try {
            if (writeFailure == null) {
                frame.getBytes(frame.readerIndex(), out, frame.readableBytes());
                lastWriteNanos = System.nanoTime();
            }
        } catch (IOException e) {
            writeFailure = e;
        } finally {
            frame.release();
        }
    }

    @Override
    public <T> T await(CompletableFuture<T> reply, long timeoutNanos)
            throws InterruptedException, ExecutionException, TimeoutException {
        if (!reply.isDone()) {
            if (readingRole.isHeldByCurrentThread()) {
                throw new IllegalStateException("a callback of an oracle reply waits for another reply; callbacks run"
                        + " on the thread that reads replies, which cannot read while it waits: chain it with"
                        + " thenCompose instead");
            }
            awaitReading(reply, System.nanoTime() + timeoutNanos);
        }
        return reply.get(); // done: does not block
    }

    private void awaitReading(CompletableFuture<?> reply, long deadline)
            throws InterruptedException, TimeoutException, ExecutionException {
        Follower me = null;
        try {
            while (!reply.isDone()) {
                if (Thread.interrupted()) {
                    throw new InterruptedException();
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new TimeoutException();
                }
                if (closed) {
                    reply.get(left, TimeUnit.NANOSECONDS); // failed with the loss, or completed meanwhile
                } else if (readingRole.tryLock()) {
                    try {
                        readUntil(reply, deadline);
                    } finally {
                        readingRole.unlock();
                        passReadingOn();
                    }
                } else if (me == null) {
                    me = new Follower(Thread.currentThread(), reply);
                    followers.add(me);
                    Thread t = me.thread();
                    reply.whenComplete((v, e) -> LockSupport.unpark(t));
                    // Look again before parking: the role may have been let go before this thread was listed.
                } else {
                    LockSupport.parkNanos(this, left);
                }
            }
        } finally {
            if (me != null) {
                followers.remove(me);
            }
        }
    }

    /** Reads and applies frames until {@code reply} completes, the deadline passes, an interrupt or the loss. */
    private void readUntil(CompletableFuture<?> reply, long deadline) {
        while (!reply.isDone() && !closed && System.nanoTime() < deadline
                && !Thread.currentThread().isInterrupted()) {
            if (!readFrame()) {
                return;
            }
        }
    }

    /** Reads one frame (or times out) and applies it; false if the connection is lost. Holding the reading role. */
    private boolean readFrame() {
        ByteBuf frame;
        try {
            frame = reader.next();
        } catch (EOFException e) {
            lost("connection to the oracle at " + address + " was lost");
            return false;
        } catch (IOException e) {
            failed(e);
            return false;
        }
        if (frame != null) {
            String loss = ReplyHandler.apply(frame, decoder, window, address);
            if (loss != null) {
                lost(loss);
                return false;
            }
        }
        return true;
    }

    /**
     * Wakes another thread that still waits for its reply, to read in its turn; after letting go of the role (also by a
     * reader that gives up: timed out or interrupted).
     */
    private void passReadingOn() {
        Thread self = Thread.currentThread();
        for (Follower f : followers) {
            if (f.thread() != self && !f.reply().isDone()) {
                LockSupport.unpark(f.thread());
                return;
            }
        }
    }

    /** The poller: writes what is queued, reads what nobody else reads, then comes back. */
    private void poll() {
        if (closed) {
            return;
        }
        if (requests.hasQueued()) {
            requestsQueued();
        }
        if (readingRole.tryLock()) {
            try {
                if (requests.awaitsReplies()) {
                    readWhileNobodyWaits();
                } else {
                    drainArrived();
                }
            } finally {
                readingRole.unlock();
                passReadingOn();
            }
        }
        boolean repliesDue = requests.awaitsReplies() && !readingRole.isLocked();
        schedule(this::poll, repliesDue ? BUSY_POLL_NANOS : TimeUnit.MILLISECONDS.toNanos(IDLE_POLL_MILLIS));
    }

    /** Reads while replies are due and no thread waits to read them itself. Holding the reading role. */
    private void readWhileNobodyWaits() {
        while (!closed && requests.awaitsReplies() && followers.isEmpty()) {
            if (!readFrame()) {
                return;
            }
        }
    }

    /**
     * Applies the frames that have arrived, without waiting for more; on a quiet connection, waits a millisecond for
     * one, which is how a close by the oracle shows. Holding the reading role.
     */
    private void drainArrived() {
        try {
            while (!closed && reader.hasInput()) {
                if (!readFrame()) {
                    return;
                }
            }
            if (!closed && System.nanoTime() - lastWriteNanos > TimeUnit.MILLISECONDS.toNanos(QUIET_MILLIS)) {
                socket.setSoTimeout(1);
                try {
                    readFrame();
                } finally {
                    if (!closed) {
                        socket.setSoTimeout(READ_SLICE_MILLIS);
                    }
                }
            }
        } catch (IOException e) {
            failed(e);
        }
    }

    /** The socket failed with {@code e} (or was closed, which keeps the reason it was closed for). */
    private void failed(IOException e) {
        lost(closed ? requests.closedReason() : "connection to the oracle at " + address + " failed: " + e);
    }

    /** The connection is lost for {@code reason}: closes the socket and fails what waits. */
    private void lost(String reason) {
        requests.closeBecause(reason);
        close();
    }

    @Override
    public boolean schedule(Runnable task, long delayNanos) {
        if (closed) {
            return false;
        }
        try {
            poller.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
            return true;
        } catch (RejectedExecutionException e) {
            return false;
        }
    }

    @Override
    public boolean isActive() {
        return !closed && !socket.isClosed();
    }

    @Override
    public void close() {
        closed = true;
        try {
            socket.close(); // a thread blocked reading fails at once, and finds the connection closed
        } catch (IOException ignored) {
            // closed anyway
        }
        client.connectionLost(requests.closedReason());
        poller.shutdownNow();
    }
}
