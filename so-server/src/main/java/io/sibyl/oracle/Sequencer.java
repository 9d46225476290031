package io.sibyl.oracle;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.sibyl.oracle.journal.FatalErrorListener;
import io.sibyl.protocol.Frames;
import io.sibyl.protocol.ProtocolException;
import io.sibyl.protocol.Varints;
import io.sibyl.protocol.Wire;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Supplier;

/**
 * The oracle's single decision maker. I/O threads hand it validated frames; it applies them to the
 * {@link OracleState} in arrival order, writes each reply into its session's buffer, and seals the decisions into a
 * block when its input runs dry or the block is full. The sealed block goes to the {@link Journal}; when the journal
 * acknowledges it the block is published for replication and the replies are released.
 *
 * <p>Two modes, one owner at a time: with a single I/O thread it runs <em>inline</em> on that thread (no hand-off, no
 * wake-ups: measured faster on small machines, see docs/architecture.md); otherwise it runs on its own thread fed
 * by a lock-free queue.
 */
final class Sequencer implements Runnable {
    private static final Logger LOG = LoggerFactory.getLogger(Sequencer.class);
    private static final int SPINS_BEFORE_PARK = 200;

    /** Work for the sequencer: a connection's handshake, frame or loss, or a task that reads the state. */
    record Inbound(int kind, ClientSession session, ByteBuf frame, Runnable task) {
        static final int HANDSHAKE = 1;
        static final int FRAME = 2;
        static final int DISCONNECT = 3;
        static final int TASK = 4;

        Inbound(int kind, ClientSession session, ByteBuf frame) {
            this(kind, session, frame, null);
        }
    }

    private final ConcurrentLinkedQueue<Inbound> queue = new ConcurrentLinkedQueue<>();
    private final OracleState state;
    private final Journal journal;
    private final ReplicationLog log;
    private final OracleConfig config;
    private final ByteBufAllocator alloc;
    private final ReplyHold replyHold;
    private final ArrayList<ClientSession> touched = new ArrayList<>();
    private long[] rows = new long[64];
    private volatile boolean sleeping;
    private volatile boolean stopping;
    private volatile Thread thread;
    private long handshakeCursorUsers;
    private final boolean inline;
    private final Executor inlineOwner;
    /** Requests handled since the last seal: bounds how long replies wait while input keeps coming. */
    private int requestsInBlock;
    /** Requests decided by wire type code, since start; plain longs, copied on this thread for a scrape. */
    private final long[] requestCounts = new long[OracleMetrics.REQUEST_TYPE_SLOTS];
    private long handshakes;
    /** When the block's first BEGIN and first COMMIT were decided ({@link OracleMetrics#NONE}: none yet). */
    private long firstBeginNanos = OracleMetrics.NONE;
    private long firstCommitNanos = OracleMetrics.NONE;
    private final OracleMetrics metrics;
    /** The oracle's fatal-error path, for an Error in the decision loop. */
    private FatalErrorListener onFatal = (reason, cause) -> LOG.error("fatal: {}", reason, cause);
    /** Checks the client and admin secrets, and words refusals by role. */
    private final SessionAuthentication authentication;
    /** True when clients must prove the client secret before their first request. */
    private final boolean clientSecretRequired;
    /** Answers the admin's status and running-transaction requests. */
    private final AdminRequests adminRequests;
    /** Aborts, finishes and clean-up reports, each allowed to its client or the admin role. */
    private final TransactionEndings endings;
    /** Answers the BEGINs the state refused. */
    private final BeginRefusals beginRefusals;
    /** Journals sealed blocks and releases their replies. */
    private final BlockSealer sealer;

    /**
     * {@code inlineOwner}: in inline mode, the single I/O thread's executor (it owns the state); null otherwise.
     * {@code lease}: while it does not hold, replies that need no journal write are held ({@link ReplyHold}).
     */
    Sequencer(OracleState state, Journal journal, ReplicationLog log, OracleConfig config, ByteBufAllocator alloc,
              Executor inlineOwner, ServingLease lease, OracleMetrics metrics) {
        this.metrics = metrics;
        this.inline = inlineOwner != null;
        this.inlineOwner = inlineOwner;
        this.state = state;
        this.journal = journal;
        this.log = log;
        this.config = config;
        this.alloc = alloc;
        this.replyHold = new ReplyHold(lease, journal, this::runOnOwner);
        this.authentication = new SessionAuthentication(config);
        this.clientSecretRequired = authentication.clientSecretRequired();
        this.beginRefusals = new BeginRefusals(state);
        this.endings = new TransactionEndings(state);
        this.sealer = new BlockSealer(state, journal, log, replyHold, metrics, touched);
        this.adminRequests = new AdminRequests(state);
        journal.checkpointsFollow();
    }

    /** Where the admin's requests learn the open connections (by number: address); set by the server. */
    void describeConnectionsWith(Supplier<Map<Integer, String>> connections) {
        adminRequests.describeConnectionsWith(connections);
    }

    /** Where the admin's status learns what the background range sweep reported; set by the server. */
    void describeRangeSweepWith(Supplier<Map<String, Long>> figures) {
        adminRequests.describeRangeSweepWith(figures);
    }

    /** Where an Error in the decision loop is reported (the server's fatal path); set before the first request. */
    void onFatalError(FatalErrorListener listener) {
        this.onFatal = listener;
    }

    /** True when the (single) I/O thread runs the sequencer itself. */
    boolean isInline() {
        return inline;
    }

    /**
     * Runs {@code task} on the thread that owns the state, between requests: on the I/O thread in inline mode (the
     * caller may be any thread), else on the sequencer thread. For reads of the state from outside (statistics).
     */
    void runOnOwner(Runnable task) {
        if (inline) {
            inlineOwner.execute(task);
            return;
        }
        enqueue(new Inbound(Inbound.TASK, null, null, task));
    }

    /** Hands over work: processed at once in inline mode, else queued for the sequencer thread. */
    void enqueue(Inbound item) {
        if (inline) {
            processSafely(item);
            return;
        }
        queue.offer(item);
        if (sleeping) {
            LockSupport.unpark(thread);
        }
    }

    /** In inline mode, the I/O thread has read everything available for now: seal what was decided. */
    void inputDrained() {
        if (inline && (!touched.isEmpty() || state.pendingRecords() > 0)) {
            sealBlock();
        }
    }

    private void processSafely(Inbound item) {
        try {
            process(item);
        } catch (RuntimeException e) {
            if (item.session() == null) {
                LOG.error("sequencer task failed", e);
            } else {
                LOG.error("sequencer failed on a request from session {}", item.session().id, e);
            }
        } catch (Error e) {
            // An Error (out of memory, say) may have struck halfway through a decision: the state can no longer be
            // trusted, so the oracle stops serving (the journal holds what was acknowledged; a standby or a restart
            // recovers it) rather than go on deciding, or die without a word on the sequencer thread.
            onFatal.onFatalError("the sequencer failed: " + e, e);
        }
    }

    void stop() {
        stopping = true;
        Thread t = thread;
        if (t != null) {
            LockSupport.unpark(t);
        }
    }

    @Override
    public void run() {
        thread = Thread.currentThread();
        int idleSpins = 0;
        while (!stopping) {
            Inbound item = queue.poll();
            if (item == null) {
                if (!touched.isEmpty() || state.pendingRecords() > 0) {
                    sealBlock();
                    continue;
                }
                if (idleSpins++ < SPINS_BEFORE_PARK) {
                    Thread.onSpinWait();
                    continue;
                }
                sleeping = true;
                if (queue.isEmpty() && !stopping) {
                    LockSupport.parkNanos(1_000_000L);
                }
                sleeping = false;
                idleSpins = 0;
                continue;
            }
            idleSpins = 0;
            processSafely(item);
        }
        sealBlock();
    }

    private void process(Inbound item) {
        ClientSession session = item.session();
        switch (item.kind()) {
            case Inbound.HANDSHAKE -> hello(session);
            case Inbound.DISCONNECT -> {
                session.disconnected = true;
                state.disconnect(session.id);
            }
            case Inbound.FRAME -> {
                ByteBuf frame = item.frame();
                int frameBytes = frame.readableBytes();
                try {
                    if (!session.disconnected) {
                        handleFrame(session, frame);
                    }
                } finally {
                    frame.release();
                    session.frameHandled(frameBytes);
                }
            }
            case Inbound.TASK -> item.task().run();
            default -> throw new IllegalStateException("unknown inbound kind " + item.kind());
        }
    }

    private ByteBuf out(ClientSession session) {
        if (session.pendingReplies == null) {
            session.pendingReplies = alloc.buffer(256);
            touched.add(session);
        }
        return session.pendingReplies;
    }

    private void hello(ClientSession session) {
        state.connect(session.id, session.identity.token(), session.identity.limitKey());
        handshakes++;
        session.startCursor = log.tail();
        handshakeCursorUsers++;
        ByteBuf out = out(session);
        out.writeByte(Wire.HELLO);
        out.writeShort(Wire.VERSION);
        out.writeBytes(session.nonce);
        // The client must AUTHENTICATE before its first request; its certificate may have given it the admin role.
        out.writeByte((clientSecretRequired ? Wire.HELLO_CLIENT_SECRET_REQUIRED : 0)
                | (session.admin ? Wire.HELLO_ADMIN : 0));
        Varints.writeUnsigned(out, state.clock() + 1);
        Varints.writeUnsigned(out, state.tMax());
        Varints.writeUnsigned(out, config.maxWriteSetRows());
        Varints.writeUnsigned(out, config.maxFrameBytes());
        Varints.writeUnsigned(out, config.readerGraceMillis());
        Varints.writeUnsigned(out, config.transactionMaxAgeMillis());
        // The aborted set (an image encoded earlier: no sort per handshake), then the ranges of earlier oracles.
        state.aborted().writeForHello(out);
    }

    private void handleFrame(ClientSession session, ByteBuf in) {
        while (in.isReadable()) {
            byte type = in.readByte();
            long id = Varints.readUnsigned(in);
            if (clientSecretRequired && !session.authenticated && type != Wire.AUTHENTICATE) {
                if (!session.closeAfterReplies) {
                    authentication.refuseUnauthenticated(session, out(session));
                }
                in.skipBytes(in.readableBytes());
                return;
            }
            switch (type) {
                case Wire.BEGIN -> {
                    if (firstBeginNanos == OracleMetrics.NONE) {
                        firstBeginNanos = System.nanoTime(); // once per block: the latency sample is per block
                    }
                    long ts = state.begin(session.id);
                    ByteBuf out = out(session);
                    if (ts < 0) {
                        beginRefusals.refuse(Decision.of(ts), session, id, out);
                    } else {
                        out.writeByte(Wire.STARTED);
                        Varints.writeUnsigned(out, id);
                        Varints.writeUnsigned(out, ts);
                    }
                }
                case Wire.TICKET -> ticket(session, id, in);
                case Wire.HISTORY_QUERY -> HistoryReplies.answer(state.readHorizon(), out(session), id, in.readByte(),
                        Varints.readUnsigned(in));
                case Wire.COMMIT -> commit(session, id, in, false);
                case Wire.COMMIT_CERTIFIED -> commit(session, id, in, true);
                case Wire.ABORT -> endings.abort(session, id, Varints.readUnsigned(in), out(session));
                case Wire.CLEANED_UP -> endings.cleanedUp(session, id, Varints.readUnsigned(in), out(session));
                case Wire.RANGE_CLEANED_UP -> {
                    long from = Varints.readUnsigned(in);
                    endings.rangeCleanedUp(session, id, from, Varints.readUnsigned(in), out(session));
                }
                case Wire.AUTHENTICATE -> {
                    byte role = in.readByte();
                    byte[] proof = new byte[Wire.PROOF_BYTES];
                    in.readBytes(proof);
                    authentication.authenticate(session, id, role, proof, out(session));
                }
                case Wire.FINISH -> endings.finish(session, Varints.readUnsigned(in));
                case Wire.QUERY -> {
                    long ts = Varints.readUnsigned(in);
                    ByteBuf out = out(session);
                    out.writeByte(Wire.STATUS);
                    Varints.writeUnsigned(out, id);
                    out.writeByte(state.status(ts));
                    Varints.writeUnsigned(out, state.commitTimestampOf(ts));
                }
                case Wire.WATERMARK_QUERY -> {
                    // Leaves with the block, like every reply; the watermark can only have risen by then.
                    ByteBuf out = out(session);
                    out.writeByte(Wire.WATERMARK);
                    Varints.writeUnsigned(out, id);
                    Varints.writeUnsigned(out, state.lowWatermark());
                }
                case Wire.ORACLE_STATUS_QUERY, Wire.RUNNING_QUERY -> {
                    long limit = type == Wire.RUNNING_QUERY ? Varints.readUnsigned(in) : 0;
                    if (!session.admin) {
                        forbidden(session, id, "only the admin role may ask for the oracle's status and its running"
                                + " transactions: give bin/sibyl the oracle's admin secret (--admin-secret-file, the"
                                + " oracle's admin.secret.file)");
                    } else if (type == Wire.ORACLE_STATUS_QUERY) {
                        adminRequests.status(out(session), id);
                    } else {
                        adminRequests.running(out(session), id, limit);
                    }
                }
                default -> throw new ProtocolException("unknown message type " + type); // validated before
            }
            requestCounts[type]++; // after the switch: an unknown type threw there
            if (++requestsInBlock >= config.maxBlockRecords()) {
                sealBlock(); // replies so far leave now, so the client works while we go on
            }
        }
    }

    /**
     * COMMIT, or COMMIT_CERTIFIED: the rows written, then (certified) the rows and ranges read, to check, and the
     * ranges written, to record. Every list is read into {@link #rows} in that order; together they are bounded by
     * max.write.set.rows, like a write set.
     */
    private void commit(ClientSession session, long id, ByteBuf in, boolean certified) {
        if (firstCommitNanos == OracleMetrics.NONE) {
            firstCommitNanos = System.nanoTime(); // once per block: the latency sample is per block
        }
        long startTs = Varints.readUnsigned(in);
        int at = in.readerIndex();
        int writes = skipRows(in); // each list at most the frame's bytes / 8 (FrameValidator)
        int reads = certified ? skipRows(in) : 0;
        int granules = certified ? skipRows(in) : 0;
        long total = (long) writes + reads + granules;
        ByteBuf out = out(session);
        if (state.begunByAnother(startTs, session.id)) {
            // Only the connection that began a transaction commits it: another one could commit it with a write set
            // that is not its own (conflicts unchecked, and the owner's own commit would be answered with that
            // commit timestamp), or with none (the transaction would leave the running set unrecorded), or abort it
            // with an oversized one. A transaction migrates nowhere: its connection's loss aborts it.
            Frames.writeError(out, id, Wire.ERR_UNKNOWN_TRANSACTION, "transaction " + startTs + " was begun on"
                    + " another connection: only the connection that began a transaction may commit it (it is"
                    + " aborted if that connection closes)");
            return;
        }
        if (total > config.maxWriteSetRows()) {
            state.abort(startTs);
            Frames.writeError(out, id, Wire.ERR_TOO_LARGE, (certified ? "commit of " + writes + " rows written, "
                    + reads + " rows and ranges read and " + granules + " ranges written" : "write set of " + writes
                    + " rows") + " exceeds max.write.set.rows=" + config.maxWriteSetRows() + "; transaction " + startTs
                    + " was aborted: split it into smaller transactions or raise the limit on the oracle");
            return;
        }
        if (rows.length < total) {
            rows = new long[(int) Math.max(total, rows.length * 2L)];
        }
        int end = in.readerIndex();
        in.readerIndex(at);
        int n = readRows(in, 0);
        if (certified) {
            n = readRows(in, n);
            readRows(in, n);
        }
        in.readerIndex(end);
        reply(out, id, startTs, state.commit(startTs, rows, writes, reads, granules));
    }

    /**
     * TICKET: a region server's single-row commit. The rows and ranges it writes are recorded at a fresh timestamp,
     * answered as a start timestamp is (the reply leaves with the block, so its delta holds every decision below it).
     */
    private void ticket(ClientSession session, long id, ByteBuf in) {
        int at = in.readerIndex();
        int writes = skipRows(in);
        int granules = skipRows(in);
        ByteBuf out = out(session);
        if ((long) writes + granules > config.maxWriteSetRows()) {
            Frames.writeError(out, id, Wire.ERR_TOO_LARGE, "ticket for " + writes + " rows and " + granules
                    + " ranges exceeds max.write.set.rows=" + config.maxWriteSetRows());
            return;
        }
        if (rows.length < writes + granules) {
            rows = new long[Math.max(writes + granules, rows.length * 2)];
        }
        int end = in.readerIndex();
        in.readerIndex(at);
        readRows(in, readRows(in, 0));
        in.readerIndex(end);
        long ts = state.ticket(rows, writes + granules);
        out.writeByte(Wire.TICKETED);
        Varints.writeUnsigned(out, id);
        Varints.writeUnsigned(out, ts);
    }

    private static int skipRows(ByteBuf in) {
        int count = (int) Varints.readUnsigned(in);
        in.skipBytes(count * 8);
        return count;
    }

    /** Reads a list of row ids into {@link #rows} from {@code from}; returns where the next list goes. */
    private int readRows(ByteBuf in, int from) {
        int count = (int) Varints.readUnsigned(in);
        for (int i = 0; i < count; i++) {
            rows[from + i] = in.readLong();
        }
        return from + count;
    }

    private void reply(ByteBuf out, long id, long startTs, long result) {
        if (result > 0) {
            out.writeByte(Wire.COMMITTED);
            Varints.writeUnsigned(out, id);
            Varints.writeUnsigned(out, result);
        } else {
            Decision decision = Decision.of(result);
            if (decision == Decision.UNKNOWN) {
                Frames.writeError(out, id, Wire.ERR_UNKNOWN_TRANSACTION, "no running transaction started at "
                        + startTs + " (it may have finished already, or belong to an oracle that was restarted)");
            } else {
                out.writeByte(Wire.ABORTED);
                Varints.writeUnsigned(out, id);
                out.writeByte(decision.abortReason());
            }
        }
    }

    private void forbidden(ClientSession session, long id, String reason) {
        SessionAuthentication.forbidden(session, id, reason, out(session));
    }

    private void sealBlock() {
        int requests = requestsInBlock;
        long firstBegin = firstBeginNanos;
        long firstCommit = firstCommitNanos;
        requestsInBlock = 0;
        firstBeginNanos = OracleMetrics.NONE;
        firstCommitNanos = OracleMetrics.NONE;
        // A handshake added its session to the block's replies, so the sealer never skips a block that had one.
        boolean handshakeCursors = handshakeCursorUsers > 0;
        handshakeCursorUsers = 0;
        sealer.seal(requests, firstBegin, firstCommit, handshakeCursors);
    }

    /**
     * Owner thread: seals what was decided, then a last block that aborts every running transaction and raises T_max
     * to the reservation ({@link OracleState#stopCleanly}); {@code onDurable} runs once the journal holds it.
     */
    void sealCleanStop(Runnable onDurable) {
        sealBlock();
        state.stopCleanly();
        sealBlock();
        journal.append(null, onDurable); // a barrier: durable once every block before it is
    }

    /** Owner thread: requests decided so far, indexed by wire type code (a copy). */
    long[] requestCounts() {
        return requestCounts.clone();
    }

    /** Owner thread: handshakes decided so far. */
    long handshakes() {
        return handshakes;
    }

    /** Frames waiting for the sequencer. */
    int queued() {
        return queue.size();
    }
}
