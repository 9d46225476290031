package io.sibyl.client.oracle;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoop;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.ssl.NotSslRecordException;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.collection.LongObjectHashMap;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.netty.util.internal.PlatformDependent;
import io.sibyl.protocol.AbortedRange;
import io.sibyl.protocol.Arguments;
import io.sibyl.protocol.Frames;
import io.sibyl.protocol.ProtocolException;
import io.sibyl.protocol.SecretProof;
import io.sibyl.protocol.Varints;
import io.sibyl.protocol.Wire;

import javax.net.ssl.SSLException;
import javax.net.ssl.SSLParameters;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Asynchronous, pipelined connection to the status oracle. Requests from any thread are queued and written by the
 * connection's event loop, many per frame when several are waiting. Replies carry replicated commit metadata, which
 * this client applies to its {@link CommitReplica} before completing any future of the same frame, so a start
 * timestamp is never seen before the commits it must include.
 *
 * <p>Futures complete on the connection's I/O thread: callbacks should be short or hop to another executor.
 */
public final class OracleClient implements AutoCloseable {
    /** Largest frame accepted from the oracle (replies plus pushed metadata). */
    static final int MAX_INBOUND_FRAME = 512 << 20;

    private final String address;
    private final EventLoopGroup ownGroup;
    private final Channel channel;
    private final EventLoop loop;
    private final Queue<Request> outgoing = PlatformDependent.newMpscQueue();
    private final AtomicBoolean flushScheduled = new AtomicBoolean();
    private final AtomicBoolean closing = new AtomicBoolean();
    private final Runnable flushTask = this::flushOutgoing;
    private final CompletableFuture<CommitReplica> hello = new CompletableFuture<>();
    // Event-loop confined:
    private final LongObjectHashMap<Request> inflight = new LongObjectHashMap<>();
    private long nextId = 1;
    private int maxOutboundFrame = 1 << 20;
    private final FrameDecoder decoder = new FrameDecoder();
    private volatile CommitReplica replica;
    private volatile String closedReason;
    private volatile long deltaBytes;
    private volatile long startReplies;
    /** Highest start or commit timestamp in a reply on this connection (written by its I/O thread). */
    private volatile long highestReplyTimestamp;
    /**
     * The highest start timestamp or ticket whose reply was applied: a consistent snapshot (every commit below it is in
     * the replica), as fresh as {@link #freshAsOfNanos}. Written only on the I/O thread.
     */
    private volatile long snapshotPoint;
    /** When the last frame arrived: the oracle sends one at least every second while the connection lives. */
    private volatile long lastHeardNanos = System.nanoTime();
    /**
     * Arrival of the first frame after a silence of a whole read window; until then the connection's creation, before
     * any transaction begun on it (System.nanoTime may be negative: no 0 sentinel).
     */
    private volatile long gapEndedNanos = lastHeardNanos;
    /** Half the oracle's reader grace period (from HELLO): how long snapshots stay readable after the last frame. */
    private volatile long readWindowNanos = Long.MAX_VALUE;
    /** The oracle's transaction.max.age.ms in nanoseconds (from HELLO); 0: no limit. */
    private volatile long transactionMaxAgeNanos;
    /**
     * When the newest request whose decision reply (started, committed, aborted) was applied left this client: the
     * replica holds every commit acknowledged anywhere before then. Written by the I/O thread; a day back until then.
     */
    private volatile long freshAsOfNanos = System.nanoTime() - 86_400_000_000_000L;
    /** Snapshots of read-only transactions begun without a round trip, held at the oracle by anchors on this connection. */
    private final LocalSnapshots localSnapshots = new LocalSnapshots(this);

    /** Random bytes of the oracle's HELLO, which an admin proof is computed over. */
    private volatile byte[] helloNonce;
    /** The oracle accepted this connection's admin proof, or gave it the admin role for its certificate. */
    private volatile boolean admin;
    /** This client proves a client secret after the HELLO. */
    private final boolean provesClientSecret;

    private OracleClient(String host, int port, EventLoopGroup sharedGroup, long connectTimeoutMillis,
                         OracleCredentials credentials) throws InterruptedException {
        Arguments.required(host, "oracle host", "pass the oracle's host name or address, e.g. \"localhost\"");
        Arguments.required(credentials, "credentials", "pass OracleCredentials.newClient(), or"
                + " TransactionManager.oracleCredentials(conf) for a configuration's");
        this.address = host + ":" + port;
        this.provesClientSecret = credentials.clientSecret() != null || credentials.isAdmin();
        boolean epoll = Epoll.isAvailable();
        if (sharedGroup == null) {
            ownGroup = epoll ? new EpollEventLoopGroup(1, new DefaultThreadFactory("sibyl-oracle-client", true))
                    : new NioEventLoopGroup(1, new DefaultThreadFactory("sibyl-oracle-client", true));
        } else {
            ownGroup = null;
        }
        EventLoopGroup group = sharedGroup != null ? sharedGroup : ownGroup;
        Bootstrap b = new Bootstrap().group(group)
                .channel(group instanceof EpollEventLoopGroup ? EpollSocketChannel.class : NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) connectTimeoutMillis)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        if (credentials.tls() != null) {
                            SslHandler ssl = credentials.tls().newHandler(ch.alloc(), host, port);
                            SSLParameters params = ssl.engine().getSSLParameters();
                            params.setEndpointIdentificationAlgorithm("HTTPS"); // the certificate must name the host
                            ssl.engine().setSSLParameters(params);
                            ch.pipeline().addLast("tls", ssl);
                        }
                        ch.pipeline().addLast(new LengthFieldBasedFrameDecoder(MAX_INBOUND_FRAME, 0,
                                Wire.LENGTH_FIELD_BYTES, 0, Wire.LENGTH_FIELD_BYTES));
                        ch.pipeline().addLast(new Handler());
                    }
                });
        Channel ch;
        try {
            ch = b.connect(host, port).sync().channel();
        } catch (Exception e) {
            shutdownOwnGroup();
            throw new OracleUnavailableException("cannot connect to the oracle at " + address + ": " + e
                    + "; check that so-server is running and the address is right");
        }
        channel = ch;
        loop = ch.eventLoop();
        ByteBuf hs = Frames.begin(ch.alloc(), 7 + Wire.HANDSHAKE_TOKEN_BYTES);
        hs.writeInt(Wire.MAGIC);
        hs.writeShort(Wire.VERSION);
        hs.writeByte(Wire.ROLE_CLIENT);
        hs.writeLong(credentials.identityToken());
        ch.writeAndFlush(Frames.end(hs));
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(connectTimeoutMillis);
        try {
            replica = hello.get(connectTimeoutMillis, TimeUnit.MILLISECONDS);
            if (credentials.clientSecret() != null) {
                authenticate(credentials.clientSecret(), Wire.AUTH_CLIENT, Math.max(1, deadline - System.nanoTime()));
            }
            if (credentials.isAdmin()) {
                authenticate(credentials.adminSecret(), Wire.AUTH_ADMIN, Math.max(1, deadline - System.nanoTime()));
                admin = true;
            }
        } catch (ExecutionException e) {
            close();
            throw e.getCause() instanceof OracleException oe ? oe
                    : new OracleUnavailableException("handshake with " + address + " failed: " + e.getCause());
        } catch (TimeoutException e) {
            close();
            throw new OracleUnavailableException("the oracle at " + address + " did not answer the handshake within "
                    + connectTimeoutMillis + " ms");
        } catch (InterruptedException e) {
            // Nobody gets this client to close: its channel and I/O thread would outlive the interrupted caller (a
            // handshake an HA leader holds while its lease is not valid can keep the caller waiting here).
            close();
            throw e;
        }
    }

    /**
     * Proves the admin secret on this connection (after the HELLO, whose nonce the proof covers), waiting for the
     * oracle's answer: an oracle without the secret, or with another, refuses with a message naming the settings.
     */
    private void authenticate(byte[] secret, byte role, long timeoutNanos) throws ExecutionException,
            TimeoutException, InterruptedException {
        byte[] proof = SecretProof.compute(secret, role, helloNonce);
        ByteBuf b = io.netty.buffer.Unpooled.wrappedBuffer(proof);
        long[] words = new long[Wire.PROOF_BYTES / Long.BYTES];
        for (int i = 0; i < words.length; i++) {
            words[i] = b.readLong();
        }
        submit(new Request(Wire.AUTHENTICATE, role, words)).get(timeoutNanos, TimeUnit.NANOSECONDS);
    }

    /**
     * True if this connection has the admin role: it may report the clean-up of any aborted transaction or aborted
     * range (the sweeper's work).
     */
    public boolean isAdmin() {
        return admin;
    }

    /** Connects with its own I/O thread and waits for the handshake. */
    public static OracleClient connect(String host, int port) throws InterruptedException {
        return new OracleClient(host, port, null, 10_000, OracleCredentials.newClient());
    }

    /** Connects with its own I/O thread, giving up (connection and handshake) after {@code timeoutMillis}. */
    public static OracleClient connect(String host, int port, long timeoutMillis) throws InterruptedException {
        return new OracleClient(host, port, null, timeoutMillis, OracleCredentials.newClient());
    }

    /**
     * Connects with its own I/O thread as the client {@code credentials} names (proving its admin secret, if it has
     * one), giving up after {@code timeoutMillis}.
     */
    public static OracleClient connect(String host, int port, long timeoutMillis, OracleCredentials credentials)
            throws InterruptedException {
        return new OracleClient(host, port, null, timeoutMillis, credentials);
    }

    /** Connects using an event loop of {@code group} (several clients can share one group) and waits for the handshake. */
    public static OracleClient connect(String host, int port, EventLoopGroup group) throws InterruptedException {
        return new OracleClient(host, port, group, 10_000, OracleCredentials.newClient());
    }

    /** As {@link #connect(String, int, EventLoopGroup)}, as the client {@code credentials} names (TLS included). */
    public static OracleClient connect(String host, int port, EventLoopGroup group, OracleCredentials credentials)
            throws InterruptedException {
        return new OracleClient(host, port, group, 10_000, credentials);
    }

    /** The local replica of commit metadata. */
    public CommitReplica replica() {
        return replica;
    }

    /**
     * The highest timestamp this connection saw its oracle hand out: start and commit timestamps of replies, commits
     * and aborts in its metadata, T_max, and the oracle's clock at the handshake; 0 before the handshake. An oracle that keeps
     * its decisions (its journal) starts above all of them after a restart or takeover.
     */
    public long highestTimestampSeen() {
        long h = highestReplyTimestamp;
        CommitReplica r = replica;
        if (r != null) {
            h = Math.max(h, Math.max(r.tInit() - 1, Math.max(r.tMax(), r.highestTimestampApplied())));
        }
        return h;
    }

    /** Asks for a start timestamp. The transaction counts as a running local reader until it finishes. */
    public CompletableFuture<Long> begin() {
        return submit(new Request(Wire.BEGIN, 0, null));
    }

    /**
     * Asks to commit the transaction that started at {@code startTs} after writing {@code rowIds} (64-bit row ids,
     * see {@code RowIds}). Completes with the commit timestamp, or exceptionally with
     * {@link TransactionAbortedException}. An empty write set is a read-only finish and completes at once.
     */
    public CompletableFuture<Long> commit(long startTs, long[] rowIds) {
        Arguments.required(rowIds, "row ids", "pass the transaction's row ids (RowIds), an empty array when it wrote nothing");
        if (rowIds.length == 0) {
            finish(startTs);
            return CompletableFuture.completedFuture(startTs);
        }
        return submit(new Request(Wire.COMMIT, startTs, rowIds));
    }

    /**
     * As {@link #commit}, certifying {@code reads} (rows and range granules read: one committed since the start aborts
     * it, {@link TransactionAbortedException.Reason#READ_CONFLICT}) and recording {@code granulesWritten} (the range
     * granules of the rows written, so that serializable readers of those ranges see this commit).
     */
    public CompletableFuture<Long> commit(long startTs, long[] rowIds, long[] reads, long[] granulesWritten) {
        Arguments.required(rowIds, "row ids", "pass the transaction's row ids (RowIds), an empty array when it wrote nothing");
        Arguments.required(reads, "reads", "pass the row ids and range granules read (ReadCertification), an empty"
                + " array when there are none");
        Arguments.required(granulesWritten, "granules written", "pass the range granules of the rows written, an"
                + " empty array when there are none");
        if (rowIds.length == 0) {
            finish(startTs); // read-only: serializable at its snapshot, nothing to certify
            return CompletableFuture.completedFuture(startTs);
        }
        Request r = new Request(Wire.COMMIT_CERTIFIED, startTs, rowIds);
        r.reads = reads;
        r.granules = granulesWritten;
        return submit(r);
    }

    /**
     * Asks for a fast-path ticket (a region server's single-row commit, {@link Wire#TICKET}): {@code rowIds} and
     * {@code granules} are recorded as written at the ticket, with which the request completes; the write's version is
     * {@link io.sibyl.protocol.Timestamps#selfCommittedVersion}. The replica holds every decision below the ticket by
     * then.
     */
    public CompletableFuture<Long> ticket(long[] rowIds, long[] granules) {
        Arguments.required(rowIds, "row ids", "pass the row ids the single-row commit writes (RowIds)");
        Arguments.required(granules, "granules", "pass the range granules of those rows, an empty array for none");
        Request r = new Request(Wire.TICKET, 0, rowIds);
        r.granules = granules;
        return submit(r);
    }

    /** Aborts a transaction that wrote something; its versions must then be removed and {@link #cleanedUp} sent. */
    public CompletableFuture<Void> abort(long startTs) {
        return submit(new Request(Wire.ABORT, startTs, null));
    }

    /** Reports that every version written by the aborted transaction {@code startTs} has been deleted. */
    public CompletableFuture<Void> cleanedUp(long startTs) {
        return submit(new Request(Wire.CLEANED_UP, startTs, null));
    }

    /**
     * Reports that the versions the in-doubt transactions of the aborted range {@code (range.from, range.to]} left in
     * the data store were deleted (the abort sweeper), so that the oracle can forget the range.
     */
    public CompletableFuture<Void> rangeCleanedUp(AbortedRange range) {
        Arguments.required(range, "aborted range", "pass a range of the oracle's HELLO (CommitReplica.abortedRanges())");
        return submit(new Request(Wire.RANGE_CLEANED_UP, range.from(), new long[] {range.to()}));
    }

    /** Ends a transaction that wrote nothing. No reply is awaited. */
    public void finish(long startTs) {
        CommitReplica r = replica;
        if (r != null) {
            r.unregisterReader(startTs);
        }
        submit(new Request(Wire.FINISH, startTs, null));
    }

    /** Commit query: what the oracle knows of the transaction that started at {@code ts}. */
    public CompletableFuture<TransactionStatus> query(long ts) {
        return submit(new Request(Wire.QUERY, ts, null));
    }

    /**
     * The oracle's low watermark: no running or future transaction starts below it (for garbage collection). An
     * oracle older than this request closes the connection as malformed, so the future then fails.
     */
    public CompletableFuture<Long> lowWatermark() {
        return submit(new Request(Wire.WATERMARK_QUERY, 0, null));
    }

    /**
     * Where a read of the past reads: the oracle's point for timestamp {@code value} ({@link Wire#HISTORY_AT_TIMESTAMP}),
     * for wall-clock time {@code value} in ms since the epoch ({@link Wire#HISTORY_AT_TIME}), or the oldest point it
     * keeps ({@link Wire#HISTORY_OLDEST}; null when none is kept). Fails with an {@link OracleException} of code
     * {@link Wire#ERR_HISTORY} that says why the oracle cannot serve it. The reply leaves after its block, so when it
     * completes the replica has applied every decision at or below the point.
     */
    public CompletableFuture<HistoryPoint> historyPoint(byte kind, long value) {
        return submit(new Request(Wire.HISTORY_QUERY, value, new long[] {kind}));
    }

    /**
     * Algorithm 4: is the version written by {@code writerTs} in the snapshot of the running local transaction
     * {@code readerTs}? Answered from the replica, asking the oracle only for writers older than this connection.
     */
    public CompletableFuture<Boolean> inSnapshot(long writerTs, long readerTs) {
        CommitReplica r = replica;
        return switch (r.inSnapshot(writerTs, readerTs)) {
            case VISIBLE -> CompletableFuture.completedFuture(Boolean.TRUE);
            case INVISIBLE -> CompletableFuture.completedFuture(Boolean.FALSE);
            case ASK_ORACLE -> query(writerTs).thenApply(status -> {
                // The reply's metadata was applied first: if the writer committed after this connection began, the
                // replica knows it now and its answer (which honours the reader's snapshot) takes precedence.
                Visibility now = r.inSnapshot(writerTs, readerTs);
                if (now != Visibility.ASK_ORACLE) {
                    return now == Visibility.VISIBLE;
                }
                if (status.isCommitted()) {
                    r.rememberCommittedBeforeInit(writerTs); // committed before T_init, so before every local reader
                    return true;
                }
                return false;
            });
        };
    }

    /**
     * A timestamp at which the replica holds a consistent snapshot: the highest start timestamp or ticket whose reply
     * was applied. It is above every commit and fast-path write acknowledged anywhere before {@link #freshAsOfNanos}.
     */
    public long snapshotPoint() {
        return snapshotPoint;
    }

    /**
     * When ({@link System#nanoTime}) the newest request whose started or ticket reply has been applied left this
     * client: the replica holds every commit acknowledged anywhere (to any client) before that moment, since the
     * reply's metadata reaches at least to the block its request was decided in, and {@link #snapshotPoint()} is above
     * every commit and fast-path write acknowledged by then.
     */
    public long freshAsOfNanos() {
        return freshAsOfNanos;
    }

    /** Snapshots for read-only transactions begun from this connection's replica, without a begin round trip. */
    public LocalSnapshots localSnapshots() {
        return localSnapshots;
    }

    /** Runs {@code task} on this connection's I/O thread after {@code delayNanos}; false once the connection closed. */
    boolean schedule(Runnable task, long delayNanos) {
        if (closedReason != null) {
            return false;
        }
        try {
            loop.schedule(task, delayNanos, TimeUnit.NANOSECONDS);
            return true;
        } catch (RejectedExecutionException e) {
            return false;
        }
    }

    /** Bytes of replicated metadata received so far. */
    public long deltaBytesReceived() {
        return deltaBytes;
    }

    /** Start-timestamp replies received so far. */
    public long startRepliesReceived() {
        return startReplies;
    }

    public boolean isOpen() {
        return closedReason == null && channel.isActive();
    }

    /**
     * True while a snapshot begun on this connection may still be read from HBase. The oracle counts the running
     * transactions of a connection in its low watermark, and goes on counting them for its reader grace period after
     * it loses the connection (after a failover, the new oracle holds the watermark for as long); a reader stops half
     * that period after it last heard from the oracle, so garbage collection has not removed any version it reads
     * (docs/gc.md).
     */
    public boolean snapshotsProtected() {
        return System.nanoTime() - lastHeardNanos < readWindowNanos;
    }

    /**
     * Like {@link #snapshotsProtected()} for a transaction that began at {@code begunAtNanos} ({@link System#nanoTime}):
     * also false for good once the oracle was silent for a whole read window after it began, even if frames came
     * again later (a client stalled that long, whose connection the oracle may have given up on meanwhile).
     */
    public boolean snapshotsProtected(long begunAtNanos) {
        return snapshotsProtected() && gapEndedNanos - begunAtNanos < 0;
    }

    /**
     * How long {@link #snapshotsProtected(long)} stays true for a transaction that began at {@code begunAtNanos}, in
     * nanoseconds, unless a frame comes meanwhile: 0 if it is false already; {@link Long#MAX_VALUE} while there is
     * no read window yet (before the oracle's HELLO).
     */
    public long nanosLeftInReadWindow(long begunAtNanos) {
        long window = readWindowNanos;
        long heard = lastHeardNanos;
        if (gapEndedNanos - begunAtNanos >= 0) {
            return 0;
        }
        if (window == Long.MAX_VALUE) {
            return Long.MAX_VALUE;
        }
        return Math.max(0, heard + window - System.nanoTime());
    }

    /** Milliseconds since the last frame from the oracle arrived. */
    public long millisSinceHeard() {
        return (System.nanoTime() - lastHeardNanos) / 1_000_000L;
    }

    /** How long after the last frame from the oracle snapshots begun on this connection stay readable. */
    public long readWindowMillis() {
        return readWindowNanos == Long.MAX_VALUE ? Long.MAX_VALUE : readWindowNanos / 1_000_000L;
    }

    /**
     * The oracle's {@code transaction.max.age.ms} in nanoseconds (from HELLO): it aborts a transaction still running
     * that long after it handed out the start timestamp, so the client stops using it by then. 0: no limit (also
     * before the HELLO).
     */
    public long transactionMaxAgeNanos() {
        return transactionMaxAgeNanos;
    }

    public String address() {
        return address;
    }

    @SuppressWarnings("unchecked")
    private <T> CompletableFuture<T> submit(Request r) {
        String reason = closedReason;
        if (reason != null) {
            return CompletableFuture.failedFuture(new OracleUnavailableException(reason));
        }
        outgoing.offer(r);
        if (!flushScheduled.get() && flushScheduled.compareAndSet(false, true)) {
            try {
                loop.execute(flushTask);
            } catch (RejectedExecutionException e) {
                flushScheduled.set(false); // closed meanwhile: failed just below
            }
        }
        String late = closedReason;
        if (late != null) {
            // Closed while this was queued: it may or may not have left, and nothing will answer it now.
            r.future.completeExceptionally(new OracleUnavailableException(late
                    + "; a request made as it closed has an unknown outcome"));
        }
        return (CompletableFuture<T>) r.future;
    }

    private void flushOutgoing() {
        flushScheduled.set(false);
        if (closedReason != null) {
            failQueued();
            return;
        }
        ByteBuf frame = null;
        Request r;
        long now = System.nanoTime(); // before the frame leaves, so no later than the oracle reading the requests
        while ((r = outgoing.poll()) != null) {
            r.sentNanos = now;
            int size = 24 + (r.rows == null ? 0 : r.rows.length * 8) + (r.reads == null ? 0 : r.reads.length * 8)
                    + (r.granules == null ? 0 : r.granules.length * 8);
            if (frame != null && frame.readableBytes() + size > maxOutboundFrame) {
                channel.write(Frames.end(frame), channel.voidPromise());
                frame = null;
            }
            if (frame == null) {
                frame = Frames.begin(channel.alloc(), Math.min(maxOutboundFrame, Math.max(256, size)));
            }
            long id = nextId++;
            frame.writeByte(r.type);
            Varints.writeUnsigned(frame, id);
            if (r.type == Wire.AUTHENTICATE) {
                frame.writeByte((int) r.ts); // the role
                for (long word : r.rows) {
                    frame.writeLong(word); // the proof
                }
            } else if (r.type == Wire.HISTORY_QUERY) {
                frame.writeByte((int) r.rows[0]); // the kind
                Varints.writeUnsigned(frame, r.ts);
            } else if (r.type != Wire.BEGIN && r.type != Wire.WATERMARK_QUERY && r.type != Wire.TICKET) {
                Varints.writeUnsigned(frame, r.ts);
            }
            if (r.type == Wire.RANGE_CLEANED_UP) {
                Varints.writeUnsigned(frame, r.rows[0]); // the range's end (ts is its start)
            } else if (r.type == Wire.COMMIT) {
                writeRows(frame, r.rows);
            } else if (r.type == Wire.COMMIT_CERTIFIED) {
                writeRows(frame, r.rows);
                writeRows(frame, r.reads);
                writeRows(frame, r.granules);
            } else if (r.type == Wire.TICKET) {
                writeRows(frame, r.rows);
                writeRows(frame, r.granules);
            }
            if (r.type != Wire.FINISH) {
                inflight.put(id, r);
            }
        }
        if (frame != null) {
            channel.writeAndFlush(Frames.end(frame), channel.voidPromise());
        }
    }

    private static void writeRows(ByteBuf frame, long[] rows) {
        Varints.writeUnsigned(frame, rows.length);
        for (long row : rows) {
            frame.writeLong(row);
        }
    }

    private void failQueued() {
        Request r;
        while ((r = outgoing.poll()) != null) {
            r.future.completeExceptionally(new OracleUnavailableException(closedReason));
        }
    }

    private void connectionLost(String reason) {
        if (closedReason == null) {
            closedReason = reason;
        }
        OracleUnavailableException e = new OracleUnavailableException(closedReason
                + "; requests in flight have an unknown outcome");
        hello.completeExceptionally(e);
        for (Request r : inflight.values()) {
            r.future.completeExceptionally(e);
        }
        inflight.clear();
        failQueued();
    }

    /** Closes the connection, failing what still waits on it with {@code reason} (if it is not closed already). */
    public void closeBecause(String reason) {
        if (closedReason == null) {
            closedReason = reason;
        }
        close();
    }

    /**
     * Closes the connection and fails what is still waiting. Idempotent: a client can be closed both because a newer
     * leader was announced and because the connection that replaced it took over.
     */
    @Override
    public void close() {
        if (closedReason == null) {
            closedReason = "the oracle client for " + address + " was closed";
        }
        if (!closing.compareAndSet(false, true)) {
            return;
        }
        if (channel != null) {
            channel.close().awaitUninterruptibly();
            try {
                loop.execute(() -> connectionLost(closedReason));
            } catch (RejectedExecutionException e) {
                connectionLost(closedReason); // the loop is gone, so nothing else touches its state any more
            }
        }
        shutdownOwnGroup();
    }

    private void shutdownOwnGroup() {
        if (ownGroup != null) {
            ownGroup.shutdownGracefully(0, 1, TimeUnit.SECONDS);
        }
    }

    /** A request waiting to be written or answered. */
    private static final class Request {
        final byte type;
        final long ts;
        final long[] rows;
        /** COMMIT_CERTIFIED: rows and granules read, and granules written. */
        long[] reads;
        long[] granules;
        /** When the frame holding it was written ({@link System#nanoTime}); set by the I/O thread. */
        long sentNanos;
        final CompletableFuture<Object> future = new CompletableFuture<>();

        Request(byte type, long ts, long[] rows) {
            this.type = type;
            this.ts = ts;
            this.rows = rows;
        }
    }

    /** Decodes one reply frame in two passes: new readers are registered before the metadata is applied. */
    private final class FrameDecoder {
        private long[] ids = new long[64];
        private long[] values = new long[64];
        private byte[] types = new byte[64];
        private final List<String> errors = new ArrayList<>();
        /** History points of this frame, by request id (rare: reads of the past). */
        private final java.util.Map<Long, HistoryPoint> points = new java.util.HashMap<>();
        private int count;

        void decode(ByteBuf in) {
            count = 0;
            errors.clear();
            points.clear();
            ByteBuf delta = null;
            CommitReplica r = replica;
            while (in.isReadable()) {
                byte type = in.readByte();
                switch (type) {
                    case Wire.HELLO -> r = readHello(in);
                    case Wire.DELTA -> {
                        int len = Varints.readBoundedInt(in, in.readableBytes(), "delta length");
                        delta = in.readSlice(len);
                    }
                    case Wire.HISTORY_POINT -> {
                        long id = Varints.readUnsigned(in);
                        points.put(id, readHistoryPoint(in));
                        add(type, id, 0);
                    }
                    case Wire.STARTED, Wire.COMMITTED, Wire.ACK, Wire.ABORTED, Wire.STATUS, Wire.ERROR,
                         Wire.WATERMARK, Wire.TICKETED -> {
                        long id = Varints.readUnsigned(in);
                        long value = 0;
                        switch (type) {
                            case Wire.STARTED, Wire.COMMITTED, Wire.WATERMARK, Wire.TICKETED ->
                                    value = Varints.readUnsigned(in);
                            case Wire.ABORTED -> value = in.readByte();
                            case Wire.STATUS -> {
                                byte code = in.readByte();
                                value = ((long) code << 56) | Varints.readUnsigned(in);
                            }
                            case Wire.ERROR -> {
                                value = in.readByte();
                                errors.add(Frames.readString(in, Frames.MAX_ERROR_TEXT * 4));
                            }
                            default -> {
                            }
                        }
                        if (type == Wire.STARTED && r != null) {
                            r.registerReader(value);
                        }
                        if ((type == Wire.STARTED || type == Wire.COMMITTED || type == Wire.TICKETED)
                                && value > highestReplyTimestamp) {
                            highestReplyTimestamp = value;
                        }
                        add(type, id, value);
                    }
                    default -> throw new ProtocolException("unknown reply type " + type + " from the oracle");
                }
            }
            if (delta != null && r != null) {
                deltaBytes += delta.readableBytes();
                r.apply(delta);
            }
            if (r != null && replica == null) {
                replica = r;
                hello.complete(r);
            }
            int errorIndex = 0;
            for (int i = 0; i < count; i++) {
                if (types[i] == Wire.ERROR && ids[i] == 0) {
                    String text = errors.get(errorIndex++);
                    if (values[i] == Wire.ERR_FORBIDDEN || values[i] == Wire.ERR_VERSION) {
                        // Refused for what this client is (plaintext to a TLS oracle, another version): retrying
                        // elsewhere or later cannot help, so a connect fails at once with the oracle's reason.
                        hello.completeExceptionally(new OracleException((int) values[i], "the oracle at " + address
                                + " refused the connection: " + text));
                    }
                    connectionLost("the oracle at " + address + " closed the connection: " + text);
                    channel.close();
                    return;
                }
                complete(types[i], ids[i], values[i], types[i] == Wire.ERROR ? errors.get(errorIndex++) : null);
            }
        }

        private CommitReplica readHello(ByteBuf in) {
            short version = in.readShort();
            if (version != Wire.VERSION) {
                throw new ProtocolException("oracle speaks protocol version " + version);
            }
            byte[] nonce = new byte[Wire.NONCE_BYTES];
            in.readBytes(nonce);
            helloNonce = nonce;
            byte flags = in.readByte();
            if ((flags & Wire.HELLO_ADMIN) != 0) {
                admin = true; // its certificate gave this connection the admin role (the oracle's admin.identities)
            }
            if ((flags & Wire.HELLO_CLIENT_SECRET_REQUIRED) != 0 && !provesClientSecret) {
                hello.completeExceptionally(new OracleException(Wire.ERR_FORBIDDEN, "the oracle at " + address
                        + " serves only clients that prove its client secret (its client.secret.file): set"
                        + " sibyl.client.secret.file to the same secret (docs/operations.md, Security)"));
            }
            long tInit = Varints.readUnsigned(in);
            long tMax = Varints.readUnsigned(in);
            Varints.readUnsigned(in); // max write set rows: enforced by the oracle
            maxOutboundFrame = (int) Math.min(Varints.readUnsigned(in), 1 << 20);
            readWindowNanos = Math.min(Varints.readUnsigned(in), 3_600_000L) / 2 * 1_000_000L; // at most 1 h
            long maxAgeMillis = Varints.readUnsigned(in);
            // Above a year: counted as a year (sooner than the oracle, never later, which "no limit" would be).
            transactionMaxAgeNanos = maxAgeMillis == 0 ? 0 : Math.min(maxAgeMillis, 365L * 86_400_000L) * 1_000_000L;
            long[] aborted = readAbortedSet(in);
            List<AbortedRange> abortedRanges = AbortedRange.readAll(in); // running when earlier oracles stopped
            CommitReplica r = new CommitReplica(tInit, tMax, aborted, abortedRanges);
            r.expireReadersAfter(transactionMaxAgeNanos);
            return r;
        }

        private void add(byte type, long id, long value) {
            if (count == ids.length) {
                ids = java.util.Arrays.copyOf(ids, count * 2);
                values = java.util.Arrays.copyOf(values, count * 2);
                types = java.util.Arrays.copyOf(types, count * 2);
            }
            ids[count] = id;
            values[count] = value;
            types[count] = type;
            count++;
        }

        private void complete(byte type, long id, long value, String error) {
            Request req = inflight.remove(id);
            if (req == null) {
                return;
            }
            CommitReplica r = replica;
            if ((type == Wire.STARTED || type == Wire.TICKETED) && req.sentNanos - freshAsOfNanos > 0) {
                // The reply carries the metadata up to its own block, sealed after the request arrived, and a
                // timestamp handed out after it arrived: a snapshot there holds every commit acknowledged, and every
                // fast-path write acknowledged (its ticket is below), before the request left. Set before the
                // freshness, which readers check first.
                if (value > snapshotPoint) {
                    snapshotPoint = value;
                }
                freshAsOfNanos = req.sentNanos;
            }
            switch (type) {
                case Wire.STARTED -> {
                    startReplies++;
                    req.future.complete(value);
                }
                case Wire.TICKETED -> req.future.complete(value);
                case Wire.COMMITTED -> {
                    r.unregisterReader(req.ts);
                    req.future.complete(value);
                }
                case Wire.ABORTED -> {
                    r.unregisterReader(req.ts);
                    TransactionAbortedException.Reason reason = switch ((int) value) {
                        case Wire.ABORT_CONFLICT -> TransactionAbortedException.Reason.CONFLICT;
                        case Wire.ABORT_TOO_OLD -> TransactionAbortedException.Reason.TOO_OLD;
                        case Wire.ABORT_READ_CONFLICT -> TransactionAbortedException.Reason.READ_CONFLICT;
                        default -> TransactionAbortedException.Reason.ALREADY_ABORTED;
                    };
                    req.future.completeExceptionally(new TransactionAbortedException(req.ts, reason));
                }
                case Wire.ACK -> {
                    if (req.type == Wire.ABORT) {
                        r.unregisterReader(req.ts);
                    }
                    req.future.complete(null);
                }
                case Wire.WATERMARK -> req.future.complete(value);
                case Wire.HISTORY_POINT -> req.future.complete(points.get(id));
                case Wire.STATUS -> req.future.complete(
                        TransactionStatus.fromWire((byte) (value >>> 56), value & 0x00FF_FFFF_FFFF_FFFFL));
                case Wire.ERROR -> {
                    if (req.type == Wire.COMMIT || req.type == Wire.COMMIT_CERTIFIED || req.type == Wire.ABORT) {
                        r.unregisterReader(req.ts);
                    }
                    req.future.completeExceptionally(new OracleException((int) value, error));
                }
                default -> {
                }
            }
        }
    }

    /** A {@link Wire#HISTORY_POINT} after its id; null when the oracle keeps none. */
    static HistoryPoint readHistoryPoint(ByteBuf in) {
        byte flags = in.readByte();
        long snapshotTs = Varints.readUnsigned(in);
        long bound = Varints.readUnsigned(in);
        long[] running = readAscending(in, "running transactions of a history point");
        long[] committedAfter = readAscending(in, "commits after a history point");
        return (flags & Wire.HISTORY_NONE) != 0 ? null : new HistoryPoint(snapshotTs, bound, running, committedAfter);
    }

    /**
     * The HELLO's aborted set: a snapshot, the timestamps added since and those removed since (each ascending), as
     * one ascending array of the snapshot and the added ones less the removed ones.
     */
    static long[] readAbortedSet(ByteBuf in) {
        long[] snapshot = readAscending(in, "aborted set size");
        long[] added = readAscending(in, "aborted additions");
        long[] removed = readAscending(in, "aborted removals");
        long[] all = java.util.Arrays.copyOf(snapshot, snapshot.length + added.length);
        System.arraycopy(added, 0, all, snapshot.length, added.length);
        java.util.Arrays.sort(all);
        int n = 0;
        for (long ts : all) {
            if (java.util.Arrays.binarySearch(removed, ts) < 0 && (n == 0 || all[n - 1] != ts)) {
                all[n++] = ts;
            }
        }
        return java.util.Arrays.copyOf(all, n);
    }

    private static long[] readAscending(ByteBuf in, String what) {
        int n = Varints.readBoundedInt(in, in.readableBytes(), what);
        long[] out = new long[n];
        long previous = 0;
        for (int i = 0; i < n; i++) {
            previous += Varints.readUnsigned(in);
            out[i] = previous;
        }
        return out;
    }

    /** What to fix when {@code cause} is a TLS failure, else null. */
    private String tlsProblem(Throwable cause) {
        for (Throwable t = cause; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof NotSslRecordException) {
                return "the oracle at " + address + " did not answer with TLS: set tls=true on the oracle, or"
                        + " sibyl.client.tls=false here";
            }
            if (t instanceof SSLException) {
                return "TLS with the oracle at " + address + " failed: " + t.getMessage() + "; check that "
                        + "sibyl.client.tls.trust.store trusts the oracle's certificate (which must name the host"
                        + " clients use), and, if the oracle sets tls.trust.store, that sibyl.client.tls.key.store"
                        + " holds a certificate it trusts";
            }
        }
        return null;
    }

    private final class Handler extends ChannelInboundHandlerAdapter {
        @Override
        public void channelRead(ChannelHandlerContext ctx, Object msg) {
            ByteBuf frame = (ByteBuf) msg;
            long now = System.nanoTime();
            if (now - lastHeardNanos >= readWindowNanos) {
                gapEndedNanos = now;
            }
            lastHeardNanos = now;
            try {
                decoder.decode(frame);
            } catch (ProtocolException | IndexOutOfBoundsException e) {
                connectionLost("malformed reply from the oracle at " + address + ": " + e.getMessage());
                ctx.close();
            } finally {
                frame.release();
            }
        }

        @Override
        public void channelInactive(ChannelHandlerContext ctx) {
            connectionLost("connection to the oracle at " + address + " was lost");
        }

        @Override
        public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
            String tlsProblem = tlsProblem(cause);
            if (tlsProblem != null) {
                // A certificate or plaintext mismatch does not heal by retrying: fail the connect at once.
                hello.completeExceptionally(new OracleException(Wire.ERR_FORBIDDEN, tlsProblem));
            }
            connectionLost("connection to the oracle at " + address + " failed: "
                    + (tlsProblem != null ? tlsProblem : cause));
            ctx.close();
        }
    }
}
