package io.sibyl.bench;

import io.netty.bootstrap.Bootstrap;
import io.netty.channel.ChannelFuture;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.sibyl.protocol.Wire;

import java.io.IOException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The load of one so-bench-clients driver process: {@code connections} light connections to the oracle on one I/O
 * thread, {@code window} slots spread over them round-robin, paced to {@code rate} transactions per second over
 * all of them (0: as fast as the replies come). The coordinator runs several of these in processes of their own;
 * the smoke test runs one in its JVM.
 */
final class DriverLoad implements AutoCloseable {
    /** Handshakes in flight at once: a burst of 2,000 connects would overflow the oracle's accept backlog. */
    private static final int CONCURRENT_HANDSHAKES = 128;
    /** Largest frame accepted from the oracle: the replies and replicated metadata of a busy connection. */
    private static final int MAX_INBOUND_FRAME = 256 << 20;
    private static final long CONNECT_TIMEOUT_SECONDS = 120;

    /** What one driver does: where the oracle is and the load it puts on it. */
    record Settings(String host, int port, int connections, int window, double rate, int writeSet, long keys,
                    boolean decodeDeltas) {
    }

    private final Settings settings;
    private final EventLoopGroup group;
    private final Metrics metrics = new Metrics();
    private final ReceiveCounters received = new ReceiveCounters();
    private final Pacer pacer;
    private final WriteSets writeSets;
    private final PacingTicker ticker;
    private final LightConnection[] connections;
    private final LightSlot[] slots;
    private final AtomicInteger lost = new AtomicInteger();
    private volatile boolean stopping;
    private volatile boolean started;
    private volatile String firstFailure;
    private long measureStartNanos;
    private long measureStartCpu;
    private Metrics.Counts measureStartCounts;
    private ReceiveCounters.Snapshot measureStartReceived;
    private int measureStartLost;

    private DriverLoad(Settings settings) {
        this.settings = settings;
        this.group = Epoll.isAvailable()
                ? new EpollEventLoopGroup(1, new DefaultThreadFactory("clients-io", true))
                : new NioEventLoopGroup(1, new DefaultThreadFactory("clients-io", true));
        this.pacer = new Pacer(settings.rate());
        this.writeSets = new WriteSets(new KeyChooser.UniformKeys(settings.keys()),
                new WriteSetSizes(BenchOptions.SizeDistribution.FIXED, settings.writeSet()));
        this.ticker = new PacingTicker(group, this::stopping);
        this.connections = new LightConnection[settings.connections()];
        this.slots = new LightSlot[settings.window()];
    }

    /**
     * Opens every connection and waits for each HELLO.
     *
     * @throws IOException naming the first connection that failed, and why
     */
    static DriverLoad connect(Settings settings) throws IOException, InterruptedException {
        DriverLoad load = new DriverLoad(settings);
        try {
            load.openConnections();
        } catch (IOException | InterruptedException | RuntimeException e) {
            load.close();
            throw e;
        }
        return load;
    }

    private void openConnections() throws IOException, InterruptedException {
        Semaphore handshakes = new Semaphore(CONCURRENT_HANDSHAKES);
        CountDownLatch ready = new CountDownLatch(connections.length);
        LightConnection.Events events = new LightConnection.Events() {
            @Override
            public void ready(LightConnection connection) {
                handshakes.release();
                ready.countDown();
            }

            @Override
            public void failed(LightConnection connection, String why) {
                connectionFailed(why, handshakes, ready);
            }
        };
        Bootstrap bootstrap = new Bootstrap().group(group)
                .channel(Epoll.isAvailable() ? EpollSocketChannel.class : NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, 30_000);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(CONNECT_TIMEOUT_SECONDS);
        for (int i = 0; i < connections.length && firstFailure == null; i++) {
            if (!handshakes.tryAcquire(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS)) {
                break;
            }
            LightConnection connection = new LightConnection(received, settings.decodeDeltas(), events);
            connections[i] = connection;
            ChannelFuture f = bootstrap.handler(new ChannelInitializer<SocketChannel>() {
                @Override
                protected void initChannel(SocketChannel ch) {
                    ch.pipeline().addLast(new LengthFieldBasedFrameDecoder(MAX_INBOUND_FRAME, 0,
                            Wire.LENGTH_FIELD_BYTES, 0, Wire.LENGTH_FIELD_BYTES), connection);
                }
            }).connect(settings.host(), settings.port());
            f.addListener(done -> {
                if (!done.isSuccess()) {
                    connectionFailed("cannot connect to " + settings.host() + ":" + settings.port() + ": "
                            + done.cause(), handshakes, ready);
                }
            });
        }
        boolean all = ready.await(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
        if (firstFailure != null) {
            throw new IOException(firstFailure);
        }
        if (!all) {
            throw new IOException((connections.length - ready.getCount()) + " of " + connections.length
                    + " connections got their HELLO within " + CONNECT_TIMEOUT_SECONDS + " s");
        }
        for (int i = 0; i < slots.length; i++) {
            LightConnection c = connections[i % connections.length];
            slots[i] = new LightSlot(c, c.channel().eventLoop(), this);
        }
    }

    private void connectionFailed(String why, Semaphore handshakes, CountDownLatch ready) {
        if (started) {
            if (lost.incrementAndGet() == 1 && !stopping) {
                System.err.println("so-bench-clients: lost a connection to the oracle: " + why);
            }
            if (firstFailure == null) {
                firstFailure = why;
            }
            return;
        }
        if (firstFailure == null) {
            firstFailure = why;
        }
        handshakes.release();
        ready.countDown();
    }

    /** Starts every slot (the warmup). */
    void start() {
        started = true;
        pacer.start(System.nanoTime());
        for (LightSlot s : slots) {
            s.launch();
        }
    }

    /** Starts the measured window: restarts the schedule and drops the latencies recorded so far. */
    void beginMeasurement() {
        measureStartNanos = System.nanoTime();
        pacer.start(measureStartNanos);
        metrics.startInterval();
        // Replies before commits here, commits before replies at the end: every commit counted in the window then
        // has its STARTED counted too, unless its transaction began before the window (one per slot at most). The
        // other order let a slot preempted between the two reads commit, begin and get STARTED in the gap.
        measureStartReceived = received.snapshot();
        measureStartCounts = metrics.snapshot();
        measureStartCpu = CpuMeter.self();
        measureStartLost = lost.get();
    }

    /** Ends the measured window, stops the slots at their next transaction boundary and returns the window's figures. */
    DriverResult finish() {
        long end = System.nanoTime();
        Metrics.Latencies latencies = metrics.latencies();
        Metrics.Counts counts = metrics.snapshot().minus(measureStartCounts);
        ReceiveCounters.Snapshot got = received.snapshot().minus(measureStartReceived);
        long cpu = CpuMeter.self() - measureStartCpu;
        stopping = true;
        return new DriverResult(connections.length, end - measureStartNanos, cpu, lost.get() - measureStartLost,
                counts, got, latencies);
    }

    boolean stopping() {
        return stopping;
    }

    Metrics metrics() {
        return metrics;
    }

    Pacer pacer() {
        return pacer;
    }

    PacingTicker ticker() {
        return ticker;
    }

    WriteSets writeSets() {
        return writeSets;
    }

    /** The first reason a connection failed or was lost, or null. */
    String firstFailure() {
        return firstFailure;
    }

    @Override
    public void close() {
        stopping = true;
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
    }
}
