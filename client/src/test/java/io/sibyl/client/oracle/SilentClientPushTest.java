package io.sibyl.client.oracle;

import io.netty.buffer.Unpooled;
import io.sibyl.client.oracle.RawOracleSocket.Message;
import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleExtension;
import io.sibyl.protocol.DecisionBlockReader;
import io.sibyl.protocol.DecisionVisitor;
import io.sibyl.protocol.Wire;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.SocketTimeoutException;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Replication to connections that send nothing. A silent connection must still receive commit metadata, pushed every
 * push.interval.ms; a connection that does not read must be closed with a reason once it falls max.lag.bytes behind,
 * so the oracle's memory stays bounded; and everyone else must carry on.
 */
class SilentClientPushTest {
    private static final long PUSH_MILLIS = 50;
    private static final long MAX_LAG_BYTES = 4096;

    @RegisterExtension
    static final OracleExtension oracle = OracleExtension.withSettings(c -> c
            .withCapacities(1 << 16, 1 << 14, 1 << 12)
            .withReplication(PUSH_MILLIS, MAX_LAG_BYTES));
    private static int row;

    /**
     * With nothing to push, a silent connection still hears from the oracle at least once a second (an empty frame),
     * so a long read-only transaction on it never runs out of its read window (half of reader.grace.ms) while the
     * oracle lives.
     */
    @Test
    void anIdleConnectionHearsTheOracleAtLeastOnceASecond() throws Exception {
        try (OracleClient idle = OracleClient.connect("127.0.0.1", oracle.port())) {
            long reader = idle.begin().get(5, TimeUnit.SECONDS); // a read-only transaction that stays open
            long worst = 0;
            for (int i = 0; i < 60; i++) { // 6 s: silent throughout without heartbeats
                Thread.sleep(100);
                worst = Math.max(worst, idle.millisSinceHeard());
            }
            // Heartbeats every second; the margin absorbs a stalled event loop or GC pause of a busy machine (the
            // minicluster shares this JVM), while a connection without heartbeats stays silent for the whole 6 s.
            assertTrue(worst < 4_000, "silent for " + worst + " ms on a live connection");
            assertTrue(idle.snapshotsProtected(), "the open transaction may still read");
            assertEquals(OracleConfig.defaults().readerGraceMillis() / 2, idle.readWindowMillis(),
                    "the read window is half the grace period the oracle announced in its HELLO");
            idle.finish(reader);
        }
    }

    private static long nextRow() {
        return RowIds.of("silent", ByteBuffer.allocate(4).putInt(row++).array());
    }

    private static boolean knowsAll(CommitReplica replica, Map<Long, Long> commits, List<Long> aborts) {
        for (Map.Entry<Long, Long> c : commits.entrySet()) {
            if (replica.commitTimestampOf(c.getKey()) != c.getValue()) {
                return false;
            }
        }
        for (long a : aborts) {
            if (!replica.isAborted(a)) {
                return false;
            }
        }
        return true;
    }

    /** Collects what decision blocks say. */
    private static final class Collected implements DecisionVisitor {
        final Map<Long, Long> commits = new HashMap<>();
        final Set<Long> aborts = new HashSet<>();

        @Override
        public void onCommit(long startTs, long commitTs) {
            commits.put(startTs, commitTs);
        }

        @Override
        public void onAbort(long startTs) {
            aborts.add(startTs);
        }

        @Override
        public void onForget(long startTs) {
        }

        @Override
        public void onTmax(long tMax) {
        }
    }

    @Test
    void silentOracleClientLearnsOtherConnectionsCommitsAndAbortsWithinAFewPushIntervals() throws Exception {
        try (OracleClient silent = OracleClient.connect("127.0.0.1", oracle.port());
             OracleClient writer = OracleClient.connect("127.0.0.1", oracle.port())) {
            Map<Long, Long> commits = new HashMap<>();
            List<Long> aborts = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                long s = writer.begin().get(5, TimeUnit.SECONDS);
                commits.put(s, writer.commit(s, new long[] {nextRow()}).get(5, TimeUnit.SECONDS));
            }
            for (int i = 0; i < 3; i++) {
                long s = writer.begin().get(5, TimeUnit.SECONDS);
                writer.abort(s).get(5, TimeUnit.SECONDS);
                aborts.add(s);
            }
            long loser = writer.begin().get(5, TimeUnit.SECONDS);
            long winner = writer.begin().get(5, TimeUnit.SECONDS);
            long contested = nextRow();
            commits.put(winner, writer.commit(winner, new long[] {contested}).get(5, TimeUnit.SECONDS));
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> writer.commit(loser, new long[] {contested}).get(5, TimeUnit.SECONDS));
            assertInstanceOf(TransactionAbortedException.class, e.getCause());
            aborts.add(loser);
            long doneAt = System.nanoTime();

            // Pushes are the only way a connection that asks nothing learns anything (heartbeats are empty), so
            // learning at all proves them; how fast is for the benchmarks. The deadline only bounds a broken run.
            CommitReplica replica = silent.replica();
            await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(5)).untilAsserted(() -> assertTrue(
                    knowsAll(replica, commits, aborts),
                    () -> "the silent connection's replica did not learn the commits: " + replica));
            long tookMillis = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - doneAt);
            System.out.println("silent connection learned the commits in " + tookMillis + " ms (pushes every "
                    + PUSH_MILLIS + " ms)");
            assertEquals(0, silent.startRepliesReceived(), "the silent client never asked for anything");
            assertTrue(silent.deltaBytesReceived() > 0);
            assertTrue(silent.isOpen(), "a silent connection that reads its pushes must stay open");
        }
    }

    @Test
    void silentRawSocketReceivesDeltaOnlyFramesAndNoEmptyPushes() throws Exception {
        try (RawOracleSocket silent = RawOracleSocket.connect(oracle.port());
             OracleClient writer = OracleClient.connect("127.0.0.1", oracle.port())) {
            long tInit = silent.handshake()[0];
            Map<Long, Long> expected = new HashMap<>();
            for (int i = 0; i < 10; i++) {
                long s = writer.begin().get(5, TimeUnit.SECONDS);
                expected.put(s, writer.commit(s, new long[] {nextRow()}).get(5, TimeUnit.SECONDS));
                assertTrue(s >= tInit);
            }
            Collected seen = new Collected();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (!seen.commits.entrySet().containsAll(expected.entrySet())) {
                assertTrue(System.nanoTime() < deadline, "pushes did not deliver all commits within 20 s; got "
                        + seen.commits + ", expected " + expected);
                List<Message> frame = silent.readFrame();
                assertTrue(frame != null, "the oracle closed a silent connection");
                for (Message m : frame) {
                    assertEquals(Wire.DELTA, m.type(), "a connection that sent no request may only get pushes: " + m);
                    DecisionBlockReader.readAll(Unpooled.wrappedBuffer(m.delta()), seen);
                }
            }
            // Nothing new is decided: the oracle must not push every interval. All it may send is the heartbeat,
            // an empty frame after a second of silence (a slow reader here may meet one, so count them rather than
            // expect none): an oracle pushing empty frames would send about WINDOW / PUSH_MILLIS = 40 of them.
            long window = 2000;
            int frames = 0;
            long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(window);
            for (long left = window; left > 0; left = TimeUnit.NANOSECONDS.toMillis(end - System.nanoTime())) {
                silent.socket.setSoTimeout((int) left);
                List<Message> frame;
                try {
                    frame = silent.readFrame();
                } catch (SocketTimeoutException quiet) {
                    break;
                }
                assertTrue(frame != null, "the oracle closed a silent connection");
                assertEquals(List.of(), frame, "a push without new metadata was sent to an idle connection");
                frames++;
            }
            assertTrue(frames <= window / 1000 + 1, frames + " empty frames in " + window + " ms to an idle"
                    + " connection: pushes every " + PUSH_MILLIS + " ms, not heartbeats every second");
        }
    }

    /** Commits {@code inFlight} transactions at once, over and over, until {@code stop} holds or time runs out. */
    private static int commitBursts(OracleClient writer, int inFlight, long pauseMillis, long maxMillis,
                                    BooleanSupplier stop) throws Exception {
        Random rnd = new Random(3);
        int committed = 0;
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(maxMillis);
        while (!stop.getAsBoolean() && System.nanoTime() < deadline) {
            List<CompletableFuture<Long>> fs = new ArrayList<>();
            for (int i = 0; i < inFlight; i++) {
                long r = RowIds.of("burst", ByteBuffer.allocate(4).putInt(rnd.nextInt(1000)).array());
                fs.add(writer.begin().thenCompose(s -> writer.commit(s, new long[] {r})));
            }
            for (CompletableFuture<Long> f : fs) {
                try {
                    f.get(5, TimeUnit.SECONDS);
                    committed++;
                } catch (ExecutionException e) {
                    assertInstanceOf(TransactionAbortedException.class, e.getCause());
                }
            }
            if (pauseMillis > 0) {
                Thread.sleep(pauseMillis);
            }
        }
        return committed;
    }

    private static void assertOthersStillWork(OracleClient writer) throws Exception {
        assertTrue(writer.isOpen(), "the client that kept reading must not be closed");
        long s = writer.begin().get(5, TimeUnit.SECONDS);
        assertTrue(writer.commit(s, new long[] {nextRow()}).get(5, TimeUnit.SECONDS) > s);
        try (OracleClient fresh = OracleClient.connect("127.0.0.1", oracle.port())) {
            long t = fresh.begin().get(5, TimeUnit.SECONDS);
            assertTrue(fresh.commit(t, new long[] {nextRow()}).get(5, TimeUnit.SECONDS) > t);
        }
    }

    @Test
    void connectionThatNeverReadsIsClosedWithReasonWhenABurstExceedsMaxLagBytes() throws Exception {
        try (OracleClient writer = OracleClient.connect("127.0.0.1", oracle.port())) {
            int before = oracle.server().connections();
            try (RawOracleSocket deaf = RawOracleSocket.connect(oracle.port())) {
                deaf.handshake(Wire.MAGIC, Wire.VERSION); // and from now on never read
                await().atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(5))
                        .until(() -> oracle.server().connections() == before + 1);
                Thread.sleep(2 * PUSH_MILLIS); // let the HELLO go out so the connection has a replication cursor
                int committed = commitBursts(writer, 300, 0, 30_000, () -> oracle.server().connections() == before);
                await("the oracle closing a connection that never reads after " + committed + " commits ("
                        + "max.lag.bytes=" + MAX_LAG_BYTES + ")").atMost(Duration.ofSeconds(10))
                        .pollInterval(Duration.ofMillis(5)).until(() -> oracle.server().connections() == before);

                List<Message> got = deaf.readUntilClosed();
                assertTrue(!got.isEmpty(), "closed without a reason");
                Message last = got.get(got.size() - 1);
                assertEquals(Wire.ERROR, last.type(), "the last message before close must be the reason: " + got);
                assertEquals(0, last.id());
                assertEquals(Wire.ERR_FELL_BEHIND, last.code(), last.toString());
                assertTrue(last.text().contains("max.lag.bytes=" + MAX_LAG_BYTES)
                        || last.text().contains("not reading"), "unhelpful reason: " + last.text());
            }
            assertOthersStillWork(writer);
        }
    }
}
