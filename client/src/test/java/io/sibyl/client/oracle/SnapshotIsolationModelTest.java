package io.sibyl.client.oracle;

import io.netty.buffer.Unpooled;
import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleState;
import io.sibyl.protocol.Wire;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.LongStream;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/**
 * Runs the bounded {@link OracleState} and the clients' {@link CommitReplica}s beside an unbounded reference model of
 * snapshot isolation (every row's full commit history, every transaction's start and commit timestamps), driven by
 * the same random operation sequence, and checks:
 * <ol>
 *   <li>(a) the bounded oracle never commits what the reference aborts (it may abort more: too old), and reports a
 *   conflict only when there is one; the reference then records the oracle's actual outcome;</li>
 *   <li>(b) for open readers on every connection and many writers (committed, aborted, running), the client's answer
 *   equals the reference: visible iff the writer committed before the reader started (or is the reader). The client's
 *   answer is the replica's, with {@code ASK_ORACLE} resolved by a commit query exactly as
 *   {@code OracleClient.inSnapshot} does it (keep {@link World#visibleAsClient} in step with it);</li>
 *   <li>(c) timestamps are unique and increasing, and every commit timestamp exceeds its start timestamp;</li>
 *   <li>(d) the oracle never evicts a running transaction: its running count is the model's, and it refuses a begin
 *   (no timestamp drawn) exactly when the connection holds {@code max.running.transactions.per.connection}
 *   ({@link OracleState#OWNER_OVERLOADED}) or else {@code max.running.transactions} run
 *   ({@link OracleState#OVERLOADED}).</li>
 * </ol>
 *
 * <p>The wire is modelled as the oracle implements it: the sequencer decides one request or a batch of them, seals the
 * block, and releases the batch's replies; each reply frame carries every block sealed so far that its connection has
 * not seen (the client registers new readers, applies the delta, then completes its futures). Every live connection
 * receives every block in order, but only with a reply or a push, so quiet or stalled clients lag. A new connection's
 * replica starts from the handshake ({@code T_init = clock + 1}, the oracle's {@code T_max} and aborted set), taken at
 * a block boundary or mid-block like the server does. Clients also disconnect (their transactions are aborted and a
 * janitor cleans up after them). A pair is not asked when the writer's clean-up was reported before the reader began
 * (its versions were gone). Every open reader is checked, also those T_max aborted and those that hold the low
 * watermark of a full running set (see {@link #readerIsNeverEvictedSoItKeepsSeeingACleanedUpAbortedWriterAsAborted}).
 */
class SnapshotIsolationModelTest {

    // ------------------------------------------------------------------------------------------------ the scenarios

    static Stream<org.junit.jupiter.params.provider.Arguments> seeds() {
        return LongStream.rangeClosed(1, 12).mapToObj(seed -> arguments(seed));
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void boundedOracleAndReplicasAgreeWithUnboundedSnapshotIsolation(long seed) {
        Random sizes = new Random(seed * 31);
        int conflictRows = 16 << sizes.nextInt(3);    // 16, 32 or 64
        int recentCommits = 8 << sizes.nextInt(3);    // 8, 16 or 32
        World world = new World(seed, conflictRows, recentCommits, 64, 100, 54);
        world.run(4_000);
        world.assertCoverage();
    }

    /**
     * The same with every replica's {@link CommitWindow} at its smallest: a ring of a few slots holding distances of a
     * few steps, so commits held for T_max and for long readers sit in the ring, in its map, and move between them.
     * Every open reader (long ones included) must still get the reference's answer.
     */
    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void replicasWithTinyCommitRingsAgreeWithUnboundedSnapshotIsolation(long seed) {
        Random sizes = new Random(seed * 37);
        int conflictRows = 16 << sizes.nextInt(3);
        int recentCommits = 8 << sizes.nextInt(4);    // 8 to 64: T_max trails by more than a tiny ring holds
        World world = new World(seed + 2000, conflictRows, recentCommits, 64, 100, 54);
        world.tinyCommitRings = true;
        world.run(4_000);
        world.assertCoverage();
    }

    /**
     * A small running set that is often full: begins are refused (no transaction is created, no timestamp drawn) and
     * nobody is evicted, so (a), (b) for every open reader (long ones included), (c) and (d) hold.
     */
    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void fullRunningSetOnlyRefusesBegins(long seed) {
        World world = new World(seed + 1000, 32, 16, 16, 60, 40);
        world.run(3_000);
        assertTrue(world.refusals > 20, "the running set was rarely full: " + world.summary());
        assertTrue(world.checksOfFullSetReaders > 100, "readers of a full running set were rarely checked: "
                + world.summary());
        assertTrue(world.commits > 200 && world.checks > 5_000 && world.checksOfReadersPassedByTmax > 0,
                world.summary());
    }

    @Test
    void longReaderKeepsSnapshotWhileTmaxPassesIt() {
        World w = new World(0, 1 << 10, 4, 64, 100, 0);
        Conn a = w.connect(true);
        Conn b = w.connect(true);
        Txn before = w.begin(a, new long[] {1});
        w.commit(before);
        Txn reader = w.begin(a, new long[0]);
        Txn writer = w.begin(b, new long[] {1});
        w.commit(writer);
        assertTrue(writer.commitTs > reader.start);
        // Ten more commits: the 4-entry window overflows and T_max passes the reader and the writer's commit.
        for (int i = 0; i < 10; i++) {
            w.commit(w.begin(b, new long[] {100 + i}));
        }
        w.push(a);
        assertTrue(w.state.tMax() > writer.commitTs, "T_max " + w.state.tMax());
        assertTrue(a.replica.tMax() > writer.commitTs, "the reader's replica learned the new T_max");
        assertEquals(Wire.STATUS_ABORTED, w.state.status(reader.start), "T_max aborted the reader on the oracle");
        assertEquals(Wire.STATUS_COMMITTED_LONG_AGO, w.state.status(writer.start), "the oracle forgot c(writer)");

        assertEquals(Visibility.INVISIBLE, a.replica.inSnapshot(writer.start, reader.start),
                "the writer committed after the reader started: its snapshot must not shift as T_max passes it");
        assertEquals(writer.commitTs, a.replica.commitTimestampOf(writer.start), "kept for the running reader");
        assertEquals(Visibility.VISIBLE, a.replica.inSnapshot(before.start, reader.start));
        w.checkAllPairs();

        Txn later = w.begin(a, new long[0]);
        assertEquals(Visibility.VISIBLE, a.replica.inSnapshot(writer.start, later.start));
        w.finish(reader);
        w.finish(later);
        w.commit(w.begin(b, new long[] {200}));
        w.push(a);
        assertEquals(0, a.replica.commitTimestampOf(writer.start), "no reader needs it any more: trimmed");
        Txn last = w.begin(a, new long[0]);
        assertEquals(Visibility.VISIBLE, a.replica.inSnapshot(writer.start, last.start));
    }

    /**
     * A writer that started before a connection's handshake and committed after a reader on that connection started
     * must stay invisible to that reader, also when the replica lags and must ask the oracle. Here T_max passes the
     * commit before the question: the oracle answers COMMITTED_LONG_AGO, but the reply's delta carries the commit
     * (the writer committed after the handshake), so the replica, asked again, answers for the reader's snapshot.
     */
    @Test
    void writerCommittedAfterAReaderStaysInvisibleWhenTheOracleAnswersCommittedLongAgo() {
        World w = new World(0, 1 << 10, 2, 64, 100, 0);
        Conn a = w.connect(true);
        Txn writer = w.begin(a, new long[] {1});
        Conn b = w.connect(true);                 // handshake: T_init > writer.start
        Txn reader = w.begin(b, new long[0]);
        w.commit(writer);                         // committed after the reader started
        for (int i = 0; i < 3; i++) {             // T_max passes the commit; b hears nothing meanwhile
            w.commit(w.begin(a, new long[] {100 + i}));
        }
        w.seal(); // queued to b, not delivered: b sent nothing and got no push
        assertTrue(w.state.tMax() >= writer.commitTs);
        assertTrue(writer.start < b.replica.tInit() && writer.commitTs > reader.start);
        assertEquals(Visibility.ASK_ORACLE, b.replica.inSnapshot(writer.start, reader.start));
        assertEquals(Wire.STATUS_COMMITTED_LONG_AGO, w.state.status(writer.start));
        assertFalse(w.visibleAsClient(b, writer.start, reader.start),
                "writer " + writer.start + " committed at " + writer.commitTs + ", after reader " + reader.start
                        + " started; the oracle answered " + w.state.status(writer.start)
                        + " and the replica now holds c=" + b.replica.commitTimestampOf(writer.start));
    }

    /**
     * The same scenario over real sockets with the shipped {@link OracleClient}: the reader's connection stays silent
     * (no requests, push interval far away) while the writer commits and T_max passes the commit.
     */
    @Test
    void realClientKeepsAWriterThatCommittedAfterItsReaderInvisibleWhenTheOracleAnswersCommittedLongAgo() throws Exception {
        try (io.sibyl.oracle.OracleServer server = io.sibyl.oracle.OracleServer.startInMemory(OracleConfig.defaults()
                .withPort(0).withCapacities(1 << 10, 2, 64).withReplication(600_000, 1 << 20));
             OracleClient a = OracleClient.connect("127.0.0.1", server.port())) {
            long writer = a.begin().get(5, java.util.concurrent.TimeUnit.SECONDS);
            try (OracleClient b = OracleClient.connect("127.0.0.1", server.port())) {
                long reader = b.begin().get(5, java.util.concurrent.TimeUnit.SECONDS);
                long commitTs = a.commit(writer, new long[] {1}).get(5, java.util.concurrent.TimeUnit.SECONDS);
                for (int i = 0; i < 3; i++) {
                    long t = a.begin().get(5, java.util.concurrent.TimeUnit.SECONDS);
                    a.commit(t, new long[] {100 + i}).get(5, java.util.concurrent.TimeUnit.SECONDS);
                }
                assertTrue(writer < b.replica().tInit() && reader < commitTs && server.tMax() >= commitTs);
                boolean visible = b.inSnapshot(writer, reader).get(5, java.util.concurrent.TimeUnit.SECONDS);
                assertFalse(visible, "writer " + writer + " committed at " + commitTs + " after reader " + reader
                        + " started, yet OracleClient.inSnapshot says visible (its replica now holds c="
                        + b.replica().commitTimestampOf(writer) + ")");
            }
        }
    }

    /**
     * A read-only reader that holds a version of an aborted writer must keep seeing it as aborted until it finishes
     * ({@code AbortedTransactions}: "forgotten only after ... every transaction that started before that report has
     * finished"; docs/architecture.md: "the low watermark never passes a running transaction"). When the running set
     * is full the oracle refuses new transactions instead of evicting the oldest one: the reader keeps the low
     * watermark, so the writer is not forgotten while the reader runs, also after T_max passed both.
     */
    @Test
    void readerIsNeverEvictedSoItKeepsSeeingACleanedUpAbortedWriterAsAborted() {
        World w = new World(0, 1 << 10, 2, 4, 100, 0);
        Conn a = w.connect(true);
        Conn b = w.connect(true);
        Txn reader = w.begin(a, new long[0]);
        Txn writer = w.begin(a, new long[] {1});
        w.abort(writer);
        assertEquals(Visibility.INVISIBLE, a.replica.inSnapshot(writer.start, reader.start), "it read an aborted version");
        w.cleanUp(writer);
        List<Txn> fillers = new ArrayList<>();
        Conn c = w.connect(true); // b alone may hold only half of the 4 places
        for (int i = 0; i < 3; i++) {
            fillers.add(w.begin(i < 2 ? b : c, new long[] {100 + i}));
        }
        assertEquals(4, w.state.running().live(), "the running set is full");
        long clock = w.state.clock();
        for (Conn any : List.of(a, b, c, w.connect(true))) {
            assertNull(w.begin(any, new long[] {200}, 0), "begin refused at the limit");
        }
        assertEquals(clock, w.state.clock(), "refused begins draw no timestamp");
        assertEquals(4, w.refusals);
        assertEquals(Wire.STATUS_RUNNING, w.state.status(reader.start), "the reader was not evicted");
        assertEquals(reader.start, w.state.lowWatermark());

        for (Txn f : fillers) { // the 2-entry commit window overflows: T_max passes the writer and the reader
            w.commit(f);
        }
        for (int i = 0; i < 4; i++) { // room again: more commits, more blocks
            w.commit(w.begin(b, new long[] {300 + i}));
        }
        w.push(a);
        assertTrue(w.state.tMax() > writer.start && w.state.tMax() > reader.start, "T_max " + w.state.tMax());
        assertEquals(Wire.STATUS_ABORTED, w.state.status(reader.start), "T_max aborted the reader, which still runs");
        assertEquals(reader.start, w.state.lowWatermark(), "and still holds the low watermark");
        assertEquals(Wire.STATUS_ABORTED, w.state.status(writer.start), "not forgotten");
        assertTrue(a.replica.isAborted(writer.start), "the writer must not be forgotten while the reader still runs");
        assertEquals(Visibility.INVISIBLE, a.replica.inSnapshot(writer.start, reader.start),
                "reader " + reader.start + " (still running) must keep seeing aborted writer " + writer.start
                        + " as aborted");
        assertFalse(w.visibleAsClient(a, writer.start, reader.start));
        w.checkAllPairs();

        int forgottenBefore = w.forgotten;
        w.finish(reader);
        w.push(a);
        assertTrue(w.forgotten > forgottenBefore);
        assertFalse(a.replica.isAborted(writer.start), "no reader needs it any more: forgotten");
    }

    // ------------------------------------------------------------------------------------------------ the model

    /** A client connection: its replica and the sealed blocks the oracle has not delivered to it yet. */
    static final class Conn {
        final int id;
        final CommitReplica replica;
        final ArrayDeque<byte[]> undelivered = new ArrayDeque<>();
        final List<Txn> open = new ArrayList<>();
        /** Relative rate of begins: quiet connections hear from the oracle rarely, so their replicas lag. */
        final int activity;
        boolean alive = true;
        /** The client stalls (a GC pause, a slow network) until this operation: it sends nothing, hears nothing. */
        int pausedUntil;

        Conn(int id, CommitReplica replica, int activity) {
            this.id = id;
            this.replica = replica;
            this.activity = activity;
        }
    }

    /** A transaction as the reference model sees it. */
    static final class Txn {
        static final int OPEN = 0;
        static final int COMMITTED = 1;
        static final int ABORTED = 2;
        static final int FINISHED = 3;

        final long start;
        final Conn conn;
        final long[] writes;
        final int beginIndex;
        final int lifetime;
        int state = OPEN;
        /** The client holds its start timestamp (the STARTED reply arrived). */
        boolean started;
        long commitTs;
        /** Oracle clock when the clean-up was reported; versions are gone for readers that started after it. */
        long cleanedUpAt = Long.MAX_VALUE;

        Txn(long start, Conn conn, long[] writes, int beginIndex, int lifetime) {
            this.start = start;
            this.conn = conn;
            this.writes = writes;
            this.beginIndex = beginIndex;
            this.lifetime = lifetime;
        }

        boolean wrote() {
            return writes.length > 0;
        }

        @Override
        public String toString() {
            return "txn " + start + (state == COMMITTED ? " (committed at " + commitTs + ")" : state == ABORTED
                    ? " (aborted)" : state == FINISHED ? " (finished)" : " (open)") + " on connection "
                    + conn.id;
        }
    }

    /** A reply waiting for the seal of the block its decision is in: what its client does around applying the delta. */
    record Reply(Conn conn, Runnable beforeApply, Runnable afterApply) {
    }

    final class World {
        final Random random;
        final OracleState state;
        final int maxRunning;
        /** max.running.transactions.per.connection at its default: half of max.running.transactions. */
        final int maxRunningPerConnection;
        final int keySpace;
        final int longLifetimeMax;
        final List<Conn> conns = new ArrayList<>();
        final List<Txn> writers = new ArrayList<>();
        /** Transactions the oracle still counts as running (its ring), in start order. */
        final List<Txn> open = new ArrayList<>();
        final List<Txn> toCleanUp = new ArrayList<>();
        /** Writers in the order they committed or aborted (recent ones are the interesting ones to ask about). */
        final List<Txn> ended = new ArrayList<>();
        /** Reference model: every commit timestamp of every row. */
        final Map<Long, List<Long>> history = new HashMap<>();
        /** Replicas hold their commits in tiny rings (see {@link CommitWindow}), set before the run. */
        boolean tinyCommitRings;
        /** Replies of the sequencer's current batch; null when every reply is released at once. */
        List<Reply> batch;
        long lastTimestamp;
        int begins;
        int nextConnId = 1;
        int now;
        // coverage counters
        int commits;
        int conflicts;
        int tooOld;
        int refusals;
        int checksOfFullSetReaders;
        int resolvedByDelta;
        int trustedCommittedStatus;
        int forgotten;
        int checks;
        int askedOracle;
        int checksOfReadersPassedByTmax;
        int invisibleKeptForPassedReaders;
        int joins;
        int batches;
        final List<String> trace = new ArrayList<>();

        World(long seed, int conflictRows, int recentCommits, int running, int keySpace, int longLifetimeMax) {
            this.random = new Random(seed);
            // One operation is a millisecond: a disconnected client's readers hold the watermark for 100 operations.
            // No max age: the model's clock jumps ahead at the end, and expiry is TransactionMaxAgeTest's subject.
            this.state = new OracleState(OracleConfig.defaults().withCapacities(conflictRows, recentCommits, running)
                    .withReaderGrace(100).withTransactionMaxAge(0), () -> now * 1_000_000L);
            this.maxRunning = running;
            this.maxRunningPerConnection = Math.max(1, running / 2);
            this.keySpace = keySpace;
            this.longLifetimeMax = longLifetimeMax;
        }

        // ---------------------------------------------------------------- wire

        /** The sequencer seals the current block; every live connection will receive it. */
        void seal() {
            byte[] block = state.sealBlock();
            if (block != null) {
                for (Conn c : conns) {
                    if (c.alive) {
                        c.undelivered.add(block);
                    }
                }
                io.sibyl.protocol.DecisionBlockReader.readAll(Unpooled.wrappedBuffer(block), new ForgetCounter());
            }
        }

        /** A frame reaches {@code c}: every block sealed so far, in order (the oracle prepends the delta). */
        void push(Conn c) {
            seal();
            if (c.undelivered.isEmpty()) {
                return;
            }
            byte[][] run = c.undelivered.toArray(new byte[0][]);
            c.undelivered.clear();
            c.replica.apply(Unpooled.wrappedBuffer(run));
        }

        /** A reply to {@code c}: released now, or when the sequencer seals its current batch. */
        void reply(Conn c, Runnable beforeApply, Runnable afterApply) {
            Reply r = new Reply(c, beforeApply, afterApply);
            if (batch != null) {
                batch.add(r);
            } else {
                deliver(List.of(r));
            }
        }

        /** The sequencer seals, then each connection gets one frame: its replies with the delta in front. */
        private void deliver(List<Reply> replies) {
            seal();
            java.util.LinkedHashSet<Conn> targets = new java.util.LinkedHashSet<>();
            replies.forEach(r -> targets.add(r.conn()));
            for (Conn c : targets) {
                if (!c.alive) {
                    continue;
                }
                // The client's two passes: register new readers, apply the delta, then complete the futures.
                replies.stream().filter(r -> r.conn() == c && r.beforeApply() != null)
                        .forEach(r -> r.beforeApply().run());
                push(c);
                replies.stream().filter(r -> r.conn() == c && r.afterApply() != null)
                        .forEach(r -> r.afterApply().run());
            }
        }

        void startBatch() {
            batch = new ArrayList<>();
        }

        void sealBatch() {
            List<Reply> replies = batch;
            batch = null;
            deliver(replies);
            batches++;
        }

        final class ForgetCounter implements io.sibyl.protocol.DecisionVisitor {
            @Override
            public void onCommit(long startTs, long commitTs) {
            }

            @Override
            public void onAbort(long startTs) {
            }

            @Override
            public void onForget(long startTs) {
                forgotten++;
            }

            @Override
            public void onTmax(long tMax) {
            }
        }

        /** A client connects. The handshake is answered at a block boundary, or (like the server) mid-block. */
        Conn connect(boolean sealFirst) {
            if (sealFirst) {
                seal();
            }
            List<Long> aborted = new ArrayList<>();
            state.aborted().forEach(aborted::add);
            long[] abortedAtInit = aborted.stream().mapToLong(Long::longValue).toArray();
            CommitReplica replica = tinyCommitRings
                    // Distances of 1 to 8 steps, rings from 4 slots: most commits take the ring's edges (the map,
                    // moves to it, rebases, growth) while T_max and long readers hold them.
                    ? new CommitReplica(state.clock() + 1, state.tMax(), abortedAtInit, List.of(),
                            new CommitWindow(1 + random.nextInt(8), 4 + random.nextInt(8)))
                    : new CommitReplica(state.clock() + 1, state.tMax(), abortedAtInit);
            Conn c = new Conn(nextConnId++, replica, random.nextInt(3) == 0 ? 1 : 12);
            conns.add(c);
            joins++;
            return c;
        }

        void disconnect(Conn c) {
            state.disconnect(c.id);
            c.alive = false;
            c.undelivered.clear();
            for (Txn t : new ArrayList<>(c.open)) {
                end(t, Txn.ABORTED);
                toCleanUp.add(t); // a janitor removes the versions of the dead client's transactions
            }
        }

        // ---------------------------------------------------------------- transactions

        private void issued(long ts, String what) {
            if (ts <= lastTimestamp) {
                fail("(c) " + what + " timestamp " + ts + " is not above the last one handed out, " + lastTimestamp);
            }
            lastTimestamp = ts;
        }

        /** Begins a transaction the scenario needs: the oracle must not refuse it. */
        Txn begin(Conn c, long[] writes) {
            Txn t = begin(c, writes, 0);
            assertNotNull(t, "begin refused with " + state.running().live() + " running");
            return t;
        }

        /** Begins a transaction, or returns null when the oracle refuses it (the running set is full). */
        Txn begin(Conn c, long[] writes, int lifetime) {
            assertEquals(open.size(), state.running().live(), "(d) the oracle's running set is not the model's");
            long clockBefore = state.clock();
            long ts = state.begin(c.id);
            boolean connectionFull = c.open.size() >= maxRunningPerConnection;
            if (connectionFull || open.size() >= maxRunning) {
                assertEquals(connectionFull ? OracleState.OWNER_OVERLOADED : OracleState.OVERLOADED, ts, "(d) begin"
                        + " with " + open.size() + " of " + maxRunning + " running, " + c.open.size() + " of "
                        + maxRunningPerConnection + " on its connection");
                assertEquals(clockBefore, state.clock(), "(d) a refused begin drew a timestamp");
                assertEquals(open.size(), state.running().live(), "(d) a refused begin changed the running set");
                refusals++;
                begins++; // the client retries later; meanwhile the others go on
                reply(c, null, null); // ERROR (overloaded), with the delta in front; no reader is registered
                return null;
            }
            assertTrue(ts > 0, "(d) begin refused (" + ts + ") with " + open.size() + " of " + maxRunning + " running, "
                    + c.open.size() + " of " + maxRunningPerConnection + " on its connection");
            issued(ts, "start");
            Txn t = new Txn(ts, c, writes, begins++, lifetime);
            open.add(t);
            c.open.add(t);
            if (t.wrote()) {
                writers.add(t); // its versions are in the store from now on
            }
            // STARTED travels with the delta: the client registers the reader, then applies the delta.
            reply(c, () -> c.replica.registerReader(ts), () -> {
                t.started = true;
                if (t.state == Txn.OPEN && state.status(ts) == Wire.STATUS_RUNNING) {
                    assertTrue(ts >= c.replica.tMax(), "a running transaction below its replica's T_max: " + t);
                }
            });
            return t;
        }

        /** The oracle's decision ends {@code t}; its client unregisters the reader when it hears of it. */
        private void end(Txn t, int outcome) {
            t.state = outcome;
            if (t.wrote()) {
                ended.add(t);
            }
            open.remove(t);
            t.conn.open.remove(t);
        }

        private Runnable unregister(Txn t) {
            return () -> t.conn.replica.unregisterReader(t.start);
        }

        void commit(Txn t) {
            boolean referenceConflict = false;
            for (long row : t.writes) {
                for (long c : history.getOrDefault(row, List.of())) {
                    if (c > t.start) {
                        referenceConflict = true;
                    }
                }
            }
            byte statusBefore = state.status(t.start);
            long result = state.commit(t.start, t.writes, t.writes.length);
            if (result > 0) {
                if (referenceConflict) {
                    fail("(a) the oracle committed " + t + " at " + result + " although a row of "
                            + java.util.Arrays.toString(t.writes) + " committed after it started");
                }
                assertTrue(result > t.start, "(c) commit timestamp " + result + " not above start " + t.start);
                issued(result, "commit");
                t.commitTs = result;
                for (long row : t.writes) {
                    history.computeIfAbsent(row, k -> new ArrayList<>()).add(result);
                }
                commits++;
                end(t, Txn.COMMITTED);
            } else {
                if (result == OracleState.CONFLICT) {
                    assertTrue(referenceConflict, "(a) a conflict the reference does not see: " + t);
                    conflicts++;
                } else if (result == OracleState.TOO_OLD) {
                    assertTrue(t.start < state.tMax(), "(a) too old although T_max " + state.tMax() + " is below "
                            + t);
                    tooOld++;
                } else if (result == OracleState.ALREADY_ABORTED) {
                    // Nobody is evicted and the model commits only transactions its client still runs.
                    fail("(a) " + t + " is running but was already aborted (status " + statusBefore + ")");
                } else {
                    fail("(a) unexpected commit result " + result + " for " + t);
                }
                end(t, Txn.ABORTED);
                toCleanUp.add(t);
            }
            reply(t.conn, null, unregister(t)); // COMMITTED or ABORTED
        }

        void abort(Txn t) {
            state.abort(t.start);
            end(t, Txn.ABORTED);
            toCleanUp.add(t);
            reply(t.conn, null, unregister(t)); // ACK
        }

        void finish(Txn t) {
            t.conn.replica.unregisterReader(t.start); // one-way FINISH: no reply, no delta
            state.finish(t.start);
            end(t, Txn.FINISHED);
        }

        void cleanUp(Txn t) {
            toCleanUp.remove(t);
            t.cleanedUpAt = state.clock();
            assertTrue(state.cleanedUp(t.start), "the oracle does not know " + t + " as aborted");
            reply(t.conn, null, null); // ACK (lost if a janitor reports for a dead client)
        }

        // ---------------------------------------------------------------- visibility

        /**
         * What {@code OracleClient.inSnapshot} answers: the replica's answer, or a commit query. The STATUS reply leaves
         * the oracle with the delta up to the block it was decided in, which the client applies before it completes the
         * query; it then asks the replica again and takes its answer (which honours the reader's snapshot) unless it
         * still says ASK_ORACLE: the writer then committed before T_init, so COMMITTED or COMMITTED_LONG_AGO means
         * visible (and is remembered), anything else invisible. This mirrors the shipped client, so a change there must
         * be made here too.
         */
        boolean visibleAsClient(Conn c, long writerTs, long readerTs) {
            Visibility v = c.replica.inSnapshot(writerTs, readerTs);
            if (v != Visibility.ASK_ORACLE) {
                return v == Visibility.VISIBLE;
            }
            askedOracle++;
            byte status = state.status(writerTs);
            push(c); // STATUS reply, released with the block it was decided in
            Visibility now = c.replica.inSnapshot(writerTs, readerTs);
            if (now != Visibility.ASK_ORACLE) {
                resolvedByDelta++;
                return now == Visibility.VISIBLE;
            }
            if (status == Wire.STATUS_COMMITTED || status == Wire.STATUS_COMMITTED_LONG_AGO) {
                trustedCommittedStatus++;
                c.replica.rememberCommittedBeforeInit(writerTs);
                return true;
            }
            return false;
        }

        void check(Txn reader, Txn writer) {
            if (writer.cleanedUpAt < reader.start) {
                return; // the writer's versions were deleted before the reader started: it cannot meet them
            }
            boolean expected = writer == reader || writer.state == Txn.COMMITTED && writer.commitTs < reader.start;
            boolean passed = reader.start < state.tMax();
            boolean full = state.running().live() >= maxRunning;
            boolean actual = visibleAsClient(reader.conn, writer.start, reader.start);
            checks++;
            if (full) {
                checksOfFullSetReaders++;
            }
            if (passed) {
                checksOfReadersPassedByTmax++;
                if (!expected && writer.state == Txn.COMMITTED && writer.commitTs <= reader.conn.replica.tMax()) {
                    invisibleKeptForPassedReaders++;
                }
            }
            if (expected != actual) {
                fail("(b) reader " + reader + " sees writer " + writer + " as " + (actual ? "visible" : "invisible")
                        + "; oracle T_max=" + state.tMax() + ", status(writer)=" + state.status(writer.start)
                        + ", replica " + reader.conn.replica + "\nlast operations:\n"
                        + String.join("\n", trace.subList(Math.max(0, trace.size() - 40), trace.size())));
            }
        }

        /** Open transactions whose clients hold their start timestamps and can read (T_max-aborted ones too). */
        List<Txn> readers(Conn c) {
            List<Txn> out = new ArrayList<>();
            for (Txn t : c.open) {
                if (t.started) {
                    out.add(t);
                }
            }
            return out;
        }

        /** Checks the open readers of one connection against a sample of writers. */
        void checkSome(Conn c) {
            for (Txn reader : readers(c)) {
                for (int i = 0; i < 8 && !writers.isEmpty(); i++) {
                    int n = writers.size();
                    Txn writer = switch (random.nextInt(4)) {
                        case 0 -> writers.get(random.nextInt(n));
                        case 1 -> writers.get(n - 1 - random.nextInt(Math.min(n, 60))); // recently started
                        case 2 -> ended.isEmpty() ? reader
                                : ended.get(ended.size() - 1 - random.nextInt(Math.min(ended.size(), 200)));
                        default -> concurrentWith(reader);
                    };
                    check(reader, writer);
                }
                check(reader, reader);
            }
        }

        /** A writer that started before {@code reader} and ended after it started (or the reader itself). */
        Txn concurrentWith(Txn reader) {
            List<Txn> candidates = new ArrayList<>();
            for (int i = ended.size() - 1; i >= 0 && i >= ended.size() - 300; i--) {
                Txn w = ended.get(i);
                if (w.start < reader.start && (w.state != Txn.COMMITTED || w.commitTs > reader.start)) {
                    candidates.add(w);
                }
            }
            return candidates.isEmpty() ? reader : candidates.get(random.nextInt(candidates.size()));
        }

        void checkAllPairs() {
            for (Conn c : conns) {
                if (c.alive && c.pausedUntil <= now) {
                    for (Txn reader : readers(c)) {
                        for (Txn writer : new ArrayList<>(writers)) {
                            check(reader, writer);
                        }
                    }
                }
            }
        }

        // ---------------------------------------------------------------- the random run

        long[] randomWriteSet() {
            if (random.nextInt(10) < 3) {
                return new long[0]; // read-only
            }
            int n = 1 + random.nextInt(4);
            return LongStream.generate(() -> 1 + random.nextInt(keySpace)).distinct().limit(n).toArray();
        }

        int longLifetime() {
            return 15 + random.nextInt(Math.max(1, longLifetimeMax - 14));
        }

        int randomLifetime() {
            // Most transactions end within a few begins; one in eight stays open while many others run, long
            // enough for T_max to pass it, yet (with 64 running at most) mostly short enough not to fill the set.
            return random.nextInt(8) == 0 ? longLifetime() : random.nextInt(6);
        }

        boolean canAct(Txn t) {
            return t.started && t.conn.pausedUntil <= now;
        }

        void endNaturally(Txn t) {
            trace.add("end " + t);
            if (!t.wrote()) {
                if (random.nextInt(10) == 0) {
                    abort(t);
                } else {
                    finish(t);
                }
            } else if (random.nextInt(12) == 0) {
                abort(t);
            } else {
                commit(t);
            }
        }

        /** A connection picked in proportion to its activity. */
        Conn busy(List<Conn> active) {
            int pick = random.nextInt(active.stream().mapToInt(c -> c.activity).sum());
            for (Conn c : active) {
                pick -= c.activity;
                if (pick < 0) {
                    return c;
                }
            }
            throw new AssertionError();
        }

        void stall(Conn c) {
            c.pausedUntil = now + 20 + random.nextInt(100);
            trace.add("connection " + c.id + " stalls until " + c.pausedUntil);
        }

        /** One request to the sequencer: a begin, the end of a transaction, or a clean-up report. */
        void request(List<Conn> active) {
            int dice = random.nextInt(62);
            if (dice < 30) {
                // Transactions that outlived their lifetime end first (this bounds the ring occupancy).
                for (Txn t : new ArrayList<>(open)) {
                    if (canAct(t) && begins - t.beginIndex > t.lifetime + (t.lifetime < 10 ? 10 : 0)) {
                        endNaturally(t);
                    }
                }
                Conn c = busy(active);
                Txn t = begin(c, randomWriteSet(), randomLifetime());
                trace.add(t == null ? "begin refused on connection " + c.id
                        : "begin " + t + " writes " + java.util.Arrays.toString(t.writes));
            } else if (dice < 55) {
                if (!open.isEmpty()) {
                    Txn t = open.get(random.nextInt(open.size()));
                    if (canAct(t) && begins - t.beginIndex >= t.lifetime) {
                        endNaturally(t);
                    }
                }
            } else if (!toCleanUp.isEmpty()) {
                Txn t = toCleanUp.get(random.nextInt(toCleanUp.size()));
                if (!t.conn.alive || t.conn.pausedUntil <= now) {
                    trace.add("cleaned up " + t);
                    cleanUp(t);
                }
            }
        }

        void run(int operations) {
            int initial = 3 + random.nextInt(3);
            for (int i = 0; i < initial; i++) {
                connect(true);
            }
            for (int op = 0; op < operations; op++) {
                now = op;
                List<Conn> active = conns.stream().filter(c -> c.alive && c.pausedUntil <= now).toList();
                if (active.isEmpty()) {
                    continue;
                }
                if (random.nextInt(200) == 0) {
                    stall(active.get(random.nextInt(active.size())));
                }
                int dice = random.nextInt(100);
                if (dice < 62) {
                    if (random.nextInt(3) == 0) {
                        // The sequencer drains several requests into one block before it seals.
                        startBatch();
                        for (int n = 2 + random.nextInt(5); n > 0; n--) {
                            request(active);
                        }
                        trace.add("seal batch");
                        sealBatch();
                    } else {
                        request(active);
                    }
                } else if (dice < 64) {
                    Conn c = active.get(random.nextInt(active.size()));
                    trace.add("push to connection " + c.id);
                    push(c);
                } else if (dice < 70) {
                    trace.add("seal");
                    seal();
                } else if (dice < 72) {
                    if (active.size() > 3 && random.nextBoolean()) {
                        Conn c = active.get(random.nextInt(active.size()));
                        trace.add("disconnect " + c.id);
                        disconnect(c);
                    } else if (conns.stream().filter(c -> c.alive).count() < 5) {
                        Conn c = connect(random.nextBoolean());
                        trace.add("connect " + c.id + " tInit=" + c.replica.tInit() + " tMax=" + c.replica.tMax());
                        // A client connects because it has work: a long transaction, and maybe a stall right after.
                        Txn t = begin(c, randomWriteSet(), longLifetime());
                        trace.add(t == null ? "begin refused on connection " + c.id
                                : "begin " + t + " writes " + java.util.Arrays.toString(t.writes));
                        if (random.nextBoolean()) {
                            stall(c);
                        }
                    }
                } else {
                    // Reads need no oracle contact: a quiet client's long scan reads as much as a busy one's.
                    checkSome(active.get(random.nextInt(active.size())));
                }
                if (op % 500 == 499) {
                    checkAllPairs();
                }
            }
            now = Integer.MAX_VALUE;
            for (Txn t : new ArrayList<>(open)) {
                if (t.started) {
                    endNaturally(t);
                }
            }
            for (Conn c : conns) {
                if (c.alive) {
                    push(c);
                }
            }
        }

        String summary() {
            return "commits=" + commits + " conflicts=" + conflicts + " tooOld=" + tooOld + " refusals=" + refusals
                    + " forgotten=" + forgotten + " checks=" + checks + " checksOfFullSetReaders="
                    + checksOfFullSetReaders + " askedOracle=" + askedOracle + " resolvedByDelta=" + resolvedByDelta
                    + " trustedCommittedStatus=" + trustedCommittedStatus + " checksOfReadersPassedByTmax="
                    + checksOfReadersPassedByTmax + " invisibleKeptForPassedReaders=" + invisibleKeptForPassedReaders
                    + " joins=" + joins + " batches=" + batches + " tMax=" + state.tMax();
        }

        void assertCoverage() {
            String summary = summary();
            System.out.println(summary);
            // The run must have exercised what it claims to check.
            assertTrue(commits > 300 && conflicts > 0 && tooOld > 0 && batches > 100, summary);
            assertTrue(forgotten > 0 && checks > 10_000 && askedOracle > 0 && joins > 10, summary);
            assertTrue(resolvedByDelta > 0 && trustedCommittedStatus > 0,
                    "both ways a commit query resolves (the replica after the delta, the oracle's status): " + summary);
            assertTrue(checksOfReadersPassedByTmax >= 20 && invisibleKeptForPassedReaders > 0,
                    "no long reader was checked after T_max passed a commit it must not see: " + summary);
        }
    }
}
