package io.sibyl.oracle;

import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.sibyl.oracle.journal.FatalErrorListener;
import io.sibyl.protocol.Frames;
import io.sibyl.protocol.Wire;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import javax.management.ObjectName;

/**
 * A running status oracle: Netty I/O threads, the sequencer thread and a journal.
 *
 * <p><b>Fatal errors.</b> {@link #fatalError} is the one path by which an oracle that must not decide any more (its
 * journal was fenced by a newer oracle, lost its ZooKeeper session, or cannot write) stops: it closes the listening
 * socket and every client connection at once, then tells the listeners added with {@link #onFatalError} (the
 * {@code so-server} process exits with status 1). Wire the journal's {@link FatalErrorListener} to it.
 */
public final class OracleServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(OracleServer.class);
    /** How long a recovered oracle waits for its first block (the ABORT_RANGE of in-doubt transactions). */
    private static final long FIRST_BLOCK_TIMEOUT_SECONDS = 60;
    private static final long STATS_TIMEOUT_MILLIS = 5_000;

    private final OracleConfig config;
    private final OracleState state;
    private final Journal journal;
    private final ReplicationLog log = new ReplicationLog();
    private final Sequencer sequencer;
    private final Thread sequencerThread;
    private final OracleTransport transport;
    private final Channel serverChannel;
    private final AtomicInteger sessionIds = new AtomicInteger();
    private final Set<ClientSession> sessions = ConcurrentHashMap.newKeySet();
    private final ConnectionAdmission admission;
    private final IdentityConnections identityConnections;
    private final IdentityRefusals identityRefusals = new IdentityRefusals();
    private final CertificateIdentity certificateIdentity;
    private final AtomicReference<String> failure = new AtomicReference<>();
    private final CountDownLatch failed = new CountDownLatch(1);
    private final List<FatalErrorListener> fatalListeners = new ArrayList<>(); // guarded by itself
    private final ObjectName jmx;
    private final OracleMetrics metrics;
    /** The Prometheus endpoint on {@code metrics.http.port}, or null when it is off. */
    private final MetricsEndpoint metricsEndpoint;
    private final ScheduledFuture<?> statsLog;
    /** TLS on the port, or null when {@code tls=false}. */
    private final ServerTls tls;
    /** Closes idle client connections ({@code idle.timeout.ms}), or null when it is 0. */
    private final ScheduledFuture<?> idleCheck;
    private OracleStats lastLogged; // owner thread only
    /** The background sweep of aborted ranges ({@code range.sweep.tables}), when it runs. */
    private final BackgroundRangeSweep rangeSweep = new BackgroundRangeSweep();

    private OracleServer(OracleConfig config, Journal journal, OracleState state, ServingLease lease)
            throws InterruptedException {
        this.config = config;
        this.journal = journal;
        this.state = state;
        this.admission = new ConnectionAdmission(config.maxConnections());
        this.identityConnections = new IdentityConnections(config.connectionsPerIdentity());
        this.certificateIdentity = new CertificateIdentity(config.identities().certificateField());
        this.metrics = new OracleMetrics(() -> onOwner(this::ownMetricsSnapshot, "metrics"), this);
        // Bound first: a taken port then stops the start before anything else holds a thread or a socket.
        try {
            metricsEndpoint = MetricsEndpoint.ofSetting(config, metrics::scrape);
        } catch (java.io.IOException e) {
            metrics.close();
            throw new IllegalStateException(e.getMessage(), e);
        }
        try {
            makeFirstBlockDurable();
        } catch (InterruptedException | RuntimeException e) {
            closeMetricsEndpoint(); // a start that fails must not leave the metrics port taken
            throw e;
        }
        boolean inline = config.inlineSequencer() && config.ioThreads() == 1;
        transport = new OracleTransport(config.ioThreads());
        EventLoopGroup boss = transport.boss;
        EventLoopGroup workers = transport.workers;
        // Inline, the only I/O thread owns the state.
        this.sequencer = new Sequencer(state, journal, log, config, PooledByteBufAllocator.DEFAULT,
                inline ? workers.next() : null, lease, metrics);
        sequencer.onFatalError(this::fatalError);
        sequencer.describeConnectionsWith(this::connectionAddresses);
        sequencer.describeRangeSweepWith(rangeSweep.status()::figures);
        if (inline) {
            sequencerThread = null;
        } else {
            sequencerThread = new Thread(sequencer, "sibyl-sequencer");
            sequencerThread.setDaemon(true);
            sequencerThread.start();
        }
        tls = config.tls().enabled() ? new ServerTls(config.tls(), boss.next()) : null;
        ChannelInitializer<SocketChannel> pipeline = new ChannelInitializer<>() {
            @Override
            protected void initChannel(SocketChannel ch) {
                ch.pipeline().addLast("tls", tls != null ? tls.gate() : new PlaintextPortGuard());
                ch.pipeline().addLast("frames", new LengthFieldBasedFrameDecoder(config.maxFrameBytes(), 0,
                        Wire.LENGTH_FIELD_BYTES, 0, Wire.LENGTH_FIELD_BYTES));
                ch.pipeline().addLast("oracle", new OracleChannelHandler(OracleServer.this));
            }
        };
        try {
            serverChannel = transport.bind(config.host(), config.port(), config.maxLagBytes(), pipeline);
        } catch (Throwable t) {
            closeMetricsEndpoint(); // a taken client port must not leave the metrics port taken too
            throw t;
        }
        LOG.info("status oracle listening on {} ({} transport, {}, {} I/O threads, sequencer {}, conflict table {}"
                + " rows, journal {})", serverChannel.localAddress(), transport.epoll ? "epoll" : "nio",
                tls == null ? "plaintext" : "TLS " + String.join("/", config.tls().protocols())
                        + (config.tls().trustStore().isEmpty() ? "" : " with client certificates"),
                config.ioThreads(),
                inline ? "inline on the I/O thread" : "on its own thread", config.conflictTableRows(),
                journal.getClass().getSimpleName());
        admission.warnIfTooFewFileDescriptors();
        long idle = config.idleTimeoutMillis();
        long checkEvery = Math.max(100, Math.min(idle / 4, 10_000));
        idleCheck = idle == 0 ? null : boss.next().scheduleWithFixedDelay(
                () -> sequencer.runOnOwner(this::closeIdleConnections), checkEvery, checkEvery, TimeUnit.MILLISECONDS);
        jmx = OracleStatsMBean.register(metrics, port());
        if (metricsEndpoint != null) {
            metricsEndpoint.start();
        }
        long every = config.statsLogIntervalMillis();
        statsLog = every == 0 ? null : boss.next().scheduleAtFixedRate(() -> sequencer.runOnOwner(this::logStats),
                every, every, TimeUnit.MILLISECONDS);
    }

    /** Owner thread: one line of counters, with rates since the previous line. */
    private void logStats() {
        OracleStats now = ownStats();
        LOG.info("oracle stats: {}", now.describe(lastLogged));
        lastLogged = now;
    }

    /** Owner thread only. */
    private OracleStats ownStats() {
        return state.stats(sessions.size(), admission.refusedCount(), journal.appendedBlocks());
    }

    private void closeMetricsEndpoint() {
        if (metricsEndpoint != null) {
            metricsEndpoint.close();
        }
    }

    /** Owner thread only: what the meters of {@link OracleMetrics} read. */
    private OracleMetrics.Snapshot ownMetricsSnapshot() {
        return new OracleMetrics.Snapshot(ownStats(), sequencer.requestCounts(), sequencer.handshakes());
    }

    /** This oracle's meters (served on {@code metrics.http.port} when it is set). */
    public OracleMetrics metrics() {
        return metrics;
    }

    /** The port the metrics are served on, or {@link OracleConfig#METRICS_OFF} when they are not. */
    public int metricsPort() {
        return metricsEndpoint == null ? OracleConfig.METRICS_OFF : metricsEndpoint.port();
    }

    /**
     * The oracle's counters and state sizes, read by the thread that owns the state between two requests. Waits
     * for that thread up to {@code STATS_TIMEOUT_MILLIS}.
     *
     * @throws IllegalStateException if it did not answer in time (the oracle stopped, or is stuck)
     */
    public OracleStats stats() {
        return onOwner(this::ownStats, "statistics");
    }

    /** Reads {@code what} on the thread that owns the state, waiting up to {@code STATS_TIMEOUT_MILLIS}. */
    private <T> T onOwner(java.util.function.Supplier<T> read, String what) {
        CompletableFuture<T> answer = new CompletableFuture<>();
        try {
            sequencer.runOnOwner(() -> answer.complete(read.get()));
            return answer.get(STATS_TIMEOUT_MILLIS, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            throw new IllegalStateException("the oracle is stopped" + (failure() == null ? "" : ": " + failure()), e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while reading the oracle's " + what, e);
        } catch (ExecutionException | TimeoutException e) {
            throw new IllegalStateException("the oracle's state owner did not answer within " + STATS_TIMEOUT_MILLIS
                    + " ms (the oracle stopped, or its sequencer is stuck)"
                    + (failure() == null ? "" : ": " + failure()), e);
        }
    }

    /**
     * A recovered state's first block (the ABORT_RANGE of the transactions running at the crash, a raised T_max) is
     * made durable, and published, before any client can connect: so no timestamp is handed out and no connection
     * exists before the journal holds that decision, and every connection learns the ranges from its HELLO.
     */
    private void makeFirstBlockDurable() throws InterruptedException {
        byte[] first = state.sealBlock();
        if (first == null) {
            return;
        }
        CountDownLatch durable = new CountDownLatch(1);
        journal.append(first, () -> {
            log.publish(first);
            durable.countDown();
        });
        if (!durable.await(FIRST_BLOCK_TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
            throw new IllegalStateException("the journal did not make the oracle's first block durable within "
                    + FIRST_BLOCK_TIMEOUT_SECONDS + " s; not serving");
        }
    }

    /** Starts a fresh oracle with the given journal and returns once it accepts connections. */
    public static OracleServer start(OracleConfig config, Journal journal) throws InterruptedException {
        return start(config, journal, new OracleState(config));
    }

    /**
     * Starts an oracle that continues {@code state} (built from a recovered journal, see
     * {@code RecoveredState#newOracleState}) with {@code journal} (which continues that journal). Returns once the
     * state's first block is durable and the oracle accepts connections. The server owns both from then on.
     */
    public static OracleServer start(OracleConfig config, Journal journal, OracleState state)
            throws InterruptedException {
        return start(config, journal, state, ServingLease.UNLIMITED);
    }

    /**
     * As {@link #start(OracleConfig, Journal, OracleState)}, for a leader that a standby may replace: replies that
     * need no journal write (begins, queries, handshakes) leave only while {@code lease} holds, and are held
     * meanwhile (see docs/operations.md, high availability).
     */
    public static OracleServer start(OracleConfig config, Journal journal, OracleState state, ServingLease lease)
            throws InterruptedException {
        OracleServer server = new OracleServer(config, journal, state, lease);
        try {
            server.rangeSweep.start(config, server.port());
        } catch (RuntimeException e) {
            server.close(); // a sweep that cannot start stops the start: the operator asked for it
            throw e;
        }
        return server;
    }

    /** What the background sweep of aborted ranges reported (its phase is off when it does not run). */
    RangeSweepStatus rangeSweep() {
        return rangeSweep.status();
    }

    /** Starts an oracle that keeps its decisions in memory only. */
    public static OracleServer startInMemory(OracleConfig config) throws InterruptedException {
        return start(config, new InMemoryJournal());
    }

    public int port() {
        return ((InetSocketAddress) serverChannel.localAddress()).getPort();
    }

    public OracleConfig config() {
        return config;
    }

    /**
     * Owner thread: closes the client connections that sent nothing for {@code idle.timeout.ms} and hold no running
     * transaction, so that abandoned connections cannot keep places under {@code max.connections} for ever. Their
     * clients reconnect when they next need the oracle.
     */
    private void closeIdleConnections() {
        long now = System.nanoTime();
        long idleNanos = config.idleTimeoutMillis() * 1_000_000L;
        for (ClientSession s : sessions) {
            if (!s.watch && now - s.lastFrameNanos > idleNanos && !s.closeAfterReplies
                    && state.running().liveOf(s.id) == 0) {
                LOG.info("closing {}: no request for idle.timeout.ms={} and no running transaction",
                        s.channel.remoteAddress(), config.idleTimeoutMillis());
                s.channel.writeAndFlush(Frames.errorFrame(s.channel.alloc(), Wire.ERR_OVERLOADED, "closed after"
                        + " idle.timeout.ms=" + config.idleTimeoutMillis() + " ms without a request while holding no"
                        + " transaction; reconnect when needed")).addListener(ChannelFutureListener.CLOSE);
                s.closeAfterReplies = true;
            }
        }
    }

    /** TLS on the port, or null. */
    ServerTls tls() {
        return tls;
    }

    /** Reads a client certificate's identity as {@code tls.identity} says. */
    CertificateIdentity certificateIdentity() {
        return certificateIdentity;
    }

    /** The open connections of each identity, under max.connections.per.identity. */
    IdentityConnections identityConnections() {
        return identityConnections;
    }

    /** Tells and logs why a connection beyond max.connections.per.identity is refused. */
    IdentityRefusals identityRefusals() {
        return identityRefusals;
    }

    Sequencer sequencer() {
        return sequencer;
    }

    /** Places under max.connections, and the refusals beyond it. */
    ConnectionAdmission admission() {
        return admission;
    }

    /** Connections accepted since this oracle started (each got a session). */
    public long acceptedConnections() {
        return sessionIds.get();
    }

    /** Connections refused at max.connections since this oracle started. */
    public long refusedConnections() {
        return admission.refusedCount();
    }

    ClientSession newSession(Channel channel) {
        ClientSession s = new ClientSession(sessionIds.incrementAndGet(), channel, log, config,
                metrics.deltaBytesWithReplies, metrics.deltaBytesPushed);
        sessions.add(s);
        if (failure.get() != null) {
            channel.close(); // accepted while the listener was being closed
        }
        return s;
    }

    void sessionClosed(ClientSession s) {
        if (sessions.remove(s)) {
            admission.release();
        }
    }

    /** Open client connections by number (the owner of their transactions): remote address, for the admin. */
    private Map<Integer, String> connectionAddresses() {
        Map<Integer, String> addresses = new HashMap<>();
        for (ClientSession s : sessions) {
            addresses.put(s.id, String.valueOf(s.channel.remoteAddress()));
        }
        return addresses;
    }

    /** Open client connections. */
    public int connections() {
        return sessions.size();
    }

    /** Transactions committed so far (approximate while running: read without synchronization). */
    public long commits() {
        return state.counts().commits();
    }

    /** Transactions aborted so far (approximate while running). */
    public long aborts() {
        return state.counts().aborts();
    }

    /** Current T_max (approximate while running). */
    public long tMax() {
        return state.tMax();
    }

    /**
     * The one fatal-error path: this oracle must not decide or answer any more. Logs the reason, stops serving at
     * once (closes the listening socket and every client connection; replies not yet sent are never sent), then
     * calls every listener added with {@link #onFatalError}. Idempotent: only the first call acts. Matches
     * {@link FatalErrorListener}, so {@code server::fatalError} can be handed to the journal.
     */
    public void fatalError(String reason, Throwable cause) {
        List<FatalErrorListener> toTell;
        synchronized (fatalListeners) {
            if (!failure.compareAndSet(null, reason == null ? "fatal error" : reason)) {
                return;
            }
            toTell = new ArrayList<>(fatalListeners);
            fatalListeners.clear();
        }
        LOG.error("status oracle stops serving: {}", failure.get(), cause);
        serverChannel.close();
        for (ClientSession s : sessions) {
            s.channel.close();
        }
        failed.countDown();
        for (FatalErrorListener l : toTell) {
            try {
                l.onFatalError(failure.get(), cause);
            } catch (RuntimeException e) {
                LOG.warn("fatal-error listener failed", e);
            }
        }
    }

    /** Adds a listener told after a fatal error stopped this oracle (at once if one already did). */
    public void onFatalError(FatalErrorListener listener) {
        synchronized (fatalListeners) {
            if (failure.get() == null) {
                fatalListeners.add(listener);
                return;
            }
        }
        listener.onFatalError(failure.get(), null);
    }

    /** Why this oracle stopped serving after a fatal error, or null while it serves. */
    public String failure() {
        return failure.get();
    }

    /** Waits for a fatal error; returns false if none happened within the time given. */
    public boolean awaitFatalError(long timeout, TimeUnit unit) throws InterruptedException {
        return failed.await(timeout, unit);
    }

    /**
     * Ends serving without leaving transactions in doubt, before {@link #close}: accepts no more connections, aborts
     * the running transactions and journals that nothing below the reserved timestamps is undecided, so that the next
     * oracle (a restart, or the standby taking over) starts without an aborted range to sweep. Returns false if the
     * journal did not acknowledge it within {@code timeoutMillis} (the next oracle then finds an in-doubt range, as
     * after a crash).
     */
    public boolean stopCleanly(long timeoutMillis) throws InterruptedException {
        rangeSweep.stop(); // its connection would be refused from here on: a failure to log for nothing
        serverChannel.close().awaitUninterruptibly();
        for (ClientSession s : sessions) {
            // Nothing decided after the clean stop: a begin there could reserve new timestamps.
            s.channel.eventLoop().execute(s::refuseInput);
        }
        CountDownLatch durable = new CountDownLatch(1);
        sequencer.runOnOwner(() -> sequencer.sealCleanStop(durable::countDown));
        boolean done = durable.await(timeoutMillis, TimeUnit.MILLISECONDS);
        if (done) {
            LOG.info("stopped cleanly: running transactions aborted, nothing left in doubt for the next oracle");
        } else {
            LOG.warn("the journal did not confirm the clean stop within {} ms: the next oracle will abort the"
                    + " transactions in doubt as after a crash", timeoutMillis);
        }
        return done;
    }

    @Override
    public void close() {
        rangeSweep.stop();
        OracleStatsMBean.unregister(jmx);
        closeMetricsEndpoint();
        if (statsLog != null) {
            statsLog.cancel(false);
        }
        if (idleCheck != null) {
            idleCheck.cancel(false);
        }
        serverChannel.close().awaitUninterruptibly();
        if (tls != null) {
            tls.close();
        }
        transport.shutdown();
        sequencer.stop();
        if (sequencerThread != null) {
            try {
                sequencerThread.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        journal.close();
        metrics.close();
        LOG.info("status oracle stopped after {} commits and {} aborts", commits(), aborts());
    }
}
