package io.sibyl.client.oracle;

import io.netty.channel.Channel;
import io.netty.channel.EventLoopGroup;
import io.sibyl.protocol.AbortedRange;
import io.sibyl.protocol.Arguments;
import io.sibyl.protocol.Wire;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Asynchronous, pipelined connection to the status oracle. Requests from any thread are queued and written many per
 * frame when several are waiting, by the connection's event loop or by the requesting threads themselves
 * ({@link OracleTransport}). Replies carry replicated commit metadata, which this client applies to its
 * {@link CommitReplica} before completing any future of the same frame, so a start timestamp is never seen before the
 * commits it must include.
 *
 * <p>Futures complete on the thread that reads the reply (the event loop, or a thread waiting in {@link #await}):
 * callbacks should be short or hop to another executor, and must not wait for another reply.
 *
 * <p>The work is shared out: {@link RequestPipeline} queues and encodes requests, a {@link FrameTransport} moves the
 * frames, {@link ReplyDecoder} applies replies (one reading thread at a time), {@link Handshake} opens the connection,
 * {@link ReadWindow} tracks how long snapshots stay readable and {@link ReplicaFreshness} how fresh the replica is.
 */
public final class OracleClient implements AutoCloseable {
    private final String address;
    private final FrameTransport transport;
    private final AtomicBoolean closing = new AtomicBoolean();
    private final RequestPipeline requests = new RequestPipeline();
    private final ReadWindow readWindow = new ReadWindow();
    private final ReplicaFreshness freshness = new ReplicaFreshness();
    private final Handshake handshake;
    private final ReplyDecoder decoder;
    private volatile CommitReplica replica;
    /** Snapshots of read-only transactions begun without a round trip, held at the oracle by anchors on this connection. */
    private final LocalSnapshots localSnapshots = new LocalSnapshots(this);

    private OracleClient(String host, int port, EventLoopGroup sharedGroup, long connectTimeoutMillis,
                         OracleCredentials credentials, OracleTransport kind) throws InterruptedException {
        Arguments.required(host, "oracle host", "pass the oracle's host name or address, e.g. \"localhost\"");
        Arguments.required(credentials, "credentials", "pass OracleCredentials.newClient(), or"
                + " TransactionManager.oracleCredentials(conf) for a configuration's");
        Arguments.required(kind, "transport", "pass OracleTransport.EVENT_LOOP or OracleTransport.WAITING_THREAD");
        this.address = host + ":" + port;
        this.handshake = new Handshake(address, credentials);
        this.decoder = new ReplyDecoder(this, requests, handshake, readWindow, freshness);
        boolean waitingThread = kind == OracleTransport.WAITING_THREAD && sharedGroup == null
                && credentials.tls() == null;
        try {
            if (waitingThread) {
                WaitingThreadTransport t = WaitingThreadTransport.connect(host, port, connectTimeoutMillis, this,
                        requests, decoder, readWindow);
                transport = t;
                requests.attach(t);
                try {
                    t.sendNow(Handshake.frame(credentials));
                } catch (IOException e) {
                    requests.closeBecause("cannot send the handshake to the oracle at " + address + ": " + e);
                    t.close();
                    throw e;
                }
            } else {
                EventLoopGroup ownGroup = sharedGroup == null ? OracleChannels.newOwnGroup() : null;
                Channel ch;
                try {
                    ch = OracleChannels.connect(host, port, sharedGroup != null ? sharedGroup : ownGroup,
                            connectTimeoutMillis, credentials, () -> new ReplyHandler(this, decoder, readWindow,
                                    handshake));
                } catch (Exception e) {
                    EventLoopTransport.shutdown(ownGroup);
                    throw e;
                }
                EventLoopTransport t = new EventLoopTransport(ch, ownGroup, requests, this);
                transport = t;
                requests.attach(t);
                t.sendNow(Handshake.frame(credentials));
            }
        } catch (Exception e) {
            throw new OracleUnavailableException("cannot connect to the oracle at " + address + ": " + e
                    + "; check that so-server is running and the address is right");
        }
        try {
            replica = handshake.await(credentials, connectTimeoutMillis, requests, transport);
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
     * True if this connection has the admin role: it may report the clean-up of any aborted transaction or aborted
     * range (the sweeper's work).
     */
    public boolean isAdmin() {
        return handshake.isAdmin();
    }

    /** Connects with its own I/O thread and waits for the handshake. */
    public static OracleClient connect(String host, int port) throws InterruptedException {
        return new OracleClient(host, port, null, 10_000, OracleCredentials.newClient(), OracleTransport.EVENT_LOOP);
    }

    /** Connects with its own I/O thread, giving up (connection and handshake) after {@code timeoutMillis}. */
    public static OracleClient connect(String host, int port, long timeoutMillis) throws InterruptedException {
        return new OracleClient(host, port, null, timeoutMillis, OracleCredentials.newClient(),
                OracleTransport.EVENT_LOOP);
    }

    /**
     * Connects with its own I/O thread as the client {@code credentials} names (proving its admin secret, if it has
     * one), giving up after {@code timeoutMillis}.
     */
    public static OracleClient connect(String host, int port, long timeoutMillis, OracleCredentials credentials)
            throws InterruptedException {
        return new OracleClient(host, port, null, timeoutMillis, credentials, OracleTransport.EVENT_LOOP);
    }

    /**
     * Connects as the client {@code credentials} names, its requests written and its replies read as {@code transport}
     * says (a TLS connection always by an event loop of its own), giving up after {@code timeoutMillis}.
     */
    public static OracleClient connect(String host, int port, long timeoutMillis, OracleCredentials credentials,
                                       OracleTransport transport) throws InterruptedException {
        return new OracleClient(host, port, null, timeoutMillis, credentials, transport);
    }

    /** Connects using an event loop of {@code group} (several clients can share one group) and waits for the handshake. */
    public static OracleClient connect(String host, int port, EventLoopGroup group) throws InterruptedException {
        return new OracleClient(host, port, group, 10_000, OracleCredentials.newClient(), OracleTransport.EVENT_LOOP);
    }

    /** As {@link #connect(String, int, EventLoopGroup)}, as the client {@code credentials} names (TLS included). */
    public static OracleClient connect(String host, int port, EventLoopGroup group, OracleCredentials credentials)
            throws InterruptedException {
        return new OracleClient(host, port, group, 10_000, credentials, OracleTransport.EVENT_LOOP);
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
        long h = freshness.highestReplyTimestamp();
        CommitReplica r = replica;
        if (r != null) {
            h = Math.max(h, Math.max(r.tInit() - 1, Math.max(r.tMax(), r.highestTimestampApplied())));
        }
        return h;
    }

    /** Asks for a start timestamp. The transaction counts as a running local reader until it finishes. */
    public CompletableFuture<Long> begin() {
        return requests.submit(new OracleRequest(Wire.BEGIN, 0, null));
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
        return requests.submit(new OracleRequest(Wire.COMMIT, startTs, rowIds));
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
        OracleRequest r = new OracleRequest(Wire.COMMIT_CERTIFIED, startTs, rowIds);
        r.reads = reads;
        r.granules = granulesWritten;
        return requests.submit(r);
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
        OracleRequest r = new OracleRequest(Wire.TICKET, 0, rowIds);
        r.granules = granules;
        return requests.submit(r);
    }

    /** Aborts a transaction that wrote something; its versions must then be removed and {@link #cleanedUp} sent. */
    public CompletableFuture<Void> abort(long startTs) {
        return requests.submit(new OracleRequest(Wire.ABORT, startTs, null));
    }

    /** Reports that every version written by the aborted transaction {@code startTs} has been deleted. */
    public CompletableFuture<Void> cleanedUp(long startTs) {
        return requests.submit(new OracleRequest(Wire.CLEANED_UP, startTs, null));
    }

    /**
     * Reports that the versions the in-doubt transactions of the aborted range {@code (range.from, range.to]} left in
     * the data store were deleted (the abort sweeper), so that the oracle can forget the range.
     */
    public CompletableFuture<Void> rangeCleanedUp(AbortedRange range) {
        Arguments.required(range, "aborted range", "pass a range of the oracle's HELLO (CommitReplica.abortedRanges())");
        return requests.submit(new OracleRequest(Wire.RANGE_CLEANED_UP, range.from(), new long[] {range.to()}));
    }

    /** Ends a transaction that wrote nothing. No reply is awaited. */
    public void finish(long startTs) {
        CommitReplica r = replica;
        if (r != null) {
            r.unregisterReader(startTs);
        }
        requests.submit(new OracleRequest(Wire.FINISH, startTs, null));
    }

    /** Commit query: what the oracle knows of the transaction that started at {@code ts}. */
    public CompletableFuture<TransactionStatus> query(long ts) {
        return requests.submit(new OracleRequest(Wire.QUERY, ts, null));
    }

    /**
     * The oracle's low watermark: no running or future transaction starts below it (for garbage collection). An
     * oracle older than this request closes the connection as malformed, so the future then fails.
     */
    public CompletableFuture<Long> lowWatermark() {
        return requests.submit(new OracleRequest(Wire.WATERMARK_QUERY, 0, null));
    }

    /**
     * Where a read of the past reads: the oracle's point for timestamp {@code value} ({@link Wire#HISTORY_AT_TIMESTAMP}),
     * for wall-clock time {@code value} in ms since the epoch ({@link Wire#HISTORY_AT_TIME}), or the oldest point it
     * keeps ({@link Wire#HISTORY_OLDEST}; null when none is kept). Fails with an {@link OracleException} of code
     * {@link Wire#ERR_HISTORY} that says why the oracle cannot serve it. The reply leaves after its block, so when it
     * completes the replica has applied every decision at or below the point.
     */
    public CompletableFuture<HistoryPoint> historyPoint(byte kind, long value) {
        return requests.submit(new OracleRequest(Wire.HISTORY_QUERY, value, new long[] {kind}));
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
        return freshness.snapshotPoint();
    }

    /**
     * When ({@link System#nanoTime}) the newest request whose started or ticket reply has been applied left this
     * client: the replica holds every commit acknowledged anywhere (to any client) before that moment, since the
     * reply's metadata reaches at least to the block its request was decided in, and {@link #snapshotPoint()} is above
     * every commit and fast-path write acknowledged by then.
     */
    public long freshAsOfNanos() {
        return freshness.freshAsOfNanos();
    }

    /** Snapshots for read-only transactions begun from this connection's replica, without a begin round trip. */
    public LocalSnapshots localSnapshots() {
        return localSnapshots;
    }

    /** Runs {@code task} on this connection's own thread after {@code delayNanos}; false once the connection closed. */
    boolean schedule(Runnable task, long delayNanos) {
        return requests.closedReason() == null && transport.schedule(task, delayNanos);
    }

    /**
     * Waits up to {@code timeoutNanos} for {@code reply}, a future this client returned (or one derived from it), as
     * {@link CompletableFuture#get(long, java.util.concurrent.TimeUnit)} does; with {@link OracleTransport#WAITING_THREAD}
     * this thread reads the replies meanwhile. Not from a callback of a reply.
     */
    public <T> T await(CompletableFuture<T> reply, long timeoutNanos)
            throws InterruptedException, ExecutionException, TimeoutException {
        return transport.await(reply, timeoutNanos);
    }

    /** Bytes of replicated metadata received so far. */
    public long deltaBytesReceived() {
        return decoder.deltaBytes();
    }

    /** Start-timestamp replies received so far. */
    public long startRepliesReceived() {
        return decoder.startReplies();
    }

    public boolean isOpen() {
        return requests.closedReason() == null && transport.isActive();
    }

    /**
     * True while a snapshot begun on this connection may still be read from HBase. The oracle counts the running
     * transactions of a connection in its low watermark, and goes on counting them for its reader grace period after
     * it loses the connection (after a failover, the new oracle holds the watermark for as long); a reader stops half
     * that period after it last heard from the oracle, so garbage collection has not removed any version it reads
     * (docs/gc.md).
     */
    public boolean snapshotsProtected() {
        return readWindow.snapshotsProtected();
    }

    /**
     * Like {@link #snapshotsProtected()} for a transaction that began at {@code begunAtNanos} ({@link System#nanoTime}):
     * also false for good once the oracle was silent for a whole read window after it began, even if frames came
     * again later (a client stalled that long, whose connection the oracle may have given up on meanwhile).
     */
    public boolean snapshotsProtected(long begunAtNanos) {
        return readWindow.snapshotsProtected(begunAtNanos);
    }

    /**
     * How long {@link #snapshotsProtected(long)} stays true for a transaction that began at {@code begunAtNanos}, in
     * nanoseconds, unless a frame comes meanwhile: 0 if it is false already; {@link Long#MAX_VALUE} while there is
     * no read window yet (before the oracle's HELLO).
     */
    public long nanosLeftInReadWindow(long begunAtNanos) {
        return readWindow.nanosLeft(begunAtNanos);
    }

    /** Milliseconds since the last frame from the oracle arrived. */
    public long millisSinceHeard() {
        return readWindow.millisSinceHeard();
    }

    /** How long after the last frame from the oracle snapshots begun on this connection stay readable. */
    public long readWindowMillis() {
        return readWindow.windowMillis();
    }

    /**
     * The oracle's {@code transaction.max.age.ms} in nanoseconds (from HELLO): it aborts a transaction still running
     * that long after it handed out the start timestamp, so the client stops using it by then. 0: no limit (also
     * before the HELLO).
     */
    public long transactionMaxAgeNanos() {
        return handshake.transactionMaxAgeNanos();
    }

    public String address() {
        return address;
    }

    /** The HELLO's replica is in place (on the I/O thread, before the connect waiting for it goes on). */
    void replicaArrived(CommitReplica r) {
        replica = r;
    }

    /** The connection is lost: fails the connect if it still waits, and every request not answered. I/O thread. */
    void connectionLost(String reason) {
        requests.closeBecause(reason);
        OracleUnavailableException e = new OracleUnavailableException(requests.closedReason()
                + "; requests in flight have an unknown outcome");
        handshake.fail(e);
        requests.failAll(e);
    }

    /** Closes the connection, failing what still waits on it with {@code reason} (if it is not closed already). */
    public void closeBecause(String reason) {
        requests.closeBecause(reason);
        close();
    }

    /**
     * Closes the connection and fails what is still waiting. Idempotent: a client can be closed both because a newer
     * leader was announced and because the connection that replaced it took over.
     */
    @Override
    public void close() {
        if (transport != null && requests.closedReason() == null) {
            transport.flushLeftRequests(); // a FINISH left for the next request: there is none now
        }
        requests.closeBecause("the oracle client for " + address + " was closed");
        if (!closing.compareAndSet(false, true)) {
            return;
        }
        if (transport != null) {
            transport.close();
        }
    }
}
