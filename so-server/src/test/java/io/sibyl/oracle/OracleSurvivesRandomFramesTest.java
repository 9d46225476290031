package io.sibyl.oracle;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.util.ResourceLeakDetector;
import io.sibyl.protocol.AdminReplies;
import io.sibyl.protocol.Frames;
import io.sibyl.protocol.Varints;
import io.sibyl.protocol.Wire;
import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.net.Socket;
import java.net.SocketException;
import java.net.SocketTimeoutException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Randomized, seeded and time-bounded: while one well-behaved client runs transactions (begin, then commit, finish or
 * abort and clean up), several connections send the oracle (a) random bytes, (b) valid frames with one thing wrong,
 * and (c) half-written frames followed by a close, including requests about the good client's transactions. The
 * oracle must keep serving the good client, its timestamps must rise, nothing another connection sends may change the
 * outcome of the good client's transactions, every connection the oracle drops must get an ERROR saying why (and the
 * oracle must log it), and no connection or buffer may be left behind.
 *
 * <p>Reproduce a failure with {@code -Dsibyl.fuzz.seed=<seed printed in the failure>}; {@code -Dsibyl.fuzz.millis}
 * sets the run time (default 4 s). Thread interleavings are not reproduced, the scenarios each thread picks are.
 */
class OracleSurvivesRandomFramesTest {
    private static final long SEED = Long.getLong("sibyl.fuzz.seed", System.nanoTime());
    private static final long RUN_MILLIS = Long.getLong("sibyl.fuzz.millis", 4000);
    private static final int BAD_THREADS = 4;
    private static final int MAX_WRITE_SET_ROWS = 32;
    private static final int MAX_FRAME_BYTES = 4096;
    /** Marks the last request of a bad connection that should stay open: its reply ends the scenario. */
    private static final long MARK = 999_999;

    /** Start timestamps the good client holds (or held): the bad connections meddle with them. */
    private final AtomicLongArray goodStarts = new AtomicLongArray(16);
    private final AtomicLong goodStartsWritten = new AtomicLong();
    /** Connection-level ERROR texts received by bad connections: each must be in the oracle's log. */
    private final ConcurrentLinkedQueue<String> connectionErrors = new ConcurrentLinkedQueue<>();
    private final AtomicLong scenarios = new AtomicLong();
    private final Set<Long> abortsSent = ConcurrentHashMap.newKeySet();
    /** Random bytes sent after a handshake so far: by a fluke, they may hold an ABORT of the good transaction. */
    private final AtomicLong randomFramesSent = new AtomicLong();
    private volatile int port;

    @Test
    void oracleKeepsServingAWellBehavedClientWhileOtherConnectionsSendGarbage() throws Exception {
        System.out.println("OracleSurvivesRandomFramesTest seed=" + SEED + " (rerun with -Dsibyl.fuzz.seed=" + SEED + ")");
        Random setup = new Random(SEED);
        boolean inline = setup.nextBoolean();
        OracleConfig config = OracleConfig.defaults().withPort(0).withThreads(inline ? 1 : 2, inline)
                .withCapacities(1 << 18, 1 << 14, 1 << 12)
                .withLimits(MAX_WRITE_SET_ROWS, MAX_FRAME_BYTES);
        ResourceLeakDetector.Level leakLevel = ResourceLeakDetector.getLevel();
        ResourceLeakDetector.setLevel(ResourceLeakDetector.Level.PARANOID);
        PrintStream stderr = System.err;
        ByteArrayOutputStream logged = new ByteArrayOutputStream();
        System.setErr(new PrintStream(new TeeStream(stderr, logged), true, StandardCharsets.UTF_8));
        ExecutorService pool = Executors.newFixedThreadPool(BAD_THREADS + 1);
        try (OracleServer server = OracleServer.startInMemory(config)) {
            port = server.port();
            long deadline = System.nanoTime() + RUN_MILLIS * 1_000_000L;
            List<Future<?>> tasks = new ArrayList<>();
            Future<long[]> good = pool.submit(() -> goodClient(new Random(SEED), deadline));
            for (int i = 0; i < BAD_THREADS; i++) {
                long threadSeed = SEED + 1 + i;
                tasks.add(pool.submit(() -> {
                    badConnections(new Random(threadSeed), deadline);
                    return null;
                }));
            }
            long[] counts = good.get(RUN_MILLIS + 60_000, TimeUnit.MILLISECONDS);
            for (Future<?> t : tasks) {
                t.get(60, TimeUnit.SECONDS);
            }
            assertTrue(counts[0] > 20, "the good client ran only " + counts[0] + " transactions");
            assertTrue(scenarios.get() > 50, "only " + scenarios.get() + " bad connections were tried");
            // Every bad connection is gone: none is kept open (or left in the oracle's session set) by its input.
            long until = System.nanoTime() + 10_000_000_000L;
            while (server.connections() > 0 && System.nanoTime() < until) {
                Thread.sleep(10);
            }
            assertEquals(0, server.connections(), "connections left open");
            try (WireSocket last = WireSocket.connect(port)) { // and a fresh client is served
                last.handshake(Wire.VERSION);
                last.send(frame(b -> writeRequest(b, Wire.BEGIN, 1)));
                assertTrue(last.expectReply(1).type() == Wire.STARTED);
            }
            System.out.println("seed=" + SEED + ": good client " + counts[0] + " transactions, " + counts[1]
                    + " committed, " + counts[2] + " aborted by another connection; " + scenarios.get() + " bad connections (" + (inline ? "inline" : "threaded")
                    + " sequencer)");
            // Leaked buffers are reported when collected: collect, then allocate so the detector looks.
            for (int i = 0; i < 3; i++) {
                System.gc();
                Thread.sleep(50);
                Unpooled.directBuffer(16).release();
                io.netty.buffer.PooledByteBufAllocator.DEFAULT.directBuffer(16).release();
            }
        } catch (Throwable t) {
            throw new AssertionError("seed=" + SEED + " (rerun with -Dsibyl.fuzz.seed=" + SEED + "): " + t, t);
        } finally {
            pool.shutdownNow();
            System.setErr(stderr);
            ResourceLeakDetector.setLevel(leakLevel);
        }
        String log = logged.toString(StandardCharsets.UTF_8);
        assertTrue(!log.contains("LEAK:"), "seed=" + SEED + ": a buffer leaked:\n" + log);
        assertTrue(!log.contains("sequencer failed"), "seed=" + SEED + ": the sequencer threw:\n" + log);
        assertTrue(!log.contains("unexpected error"), "seed=" + SEED + ": an unexpected exception:\n" + log);
        for (String error : connectionErrors) {
            assertTrue(log.contains(error), "seed=" + SEED + ": the oracle did not log why it closed a connection: "
                    + error);
        }
    }

    // ---------------------------------------------------------------- the good client

    /** Returns {transactions, commits}. Every reply is checked; any ERROR or lost connection fails. */
    private long[] goodClient(Random rnd, long deadline) throws IOException {
        long transactions = 0;
        long committed = 0;
        long foreignAborts = 0;
        long highest = 0;
        long id = 1;
        try (WireSocket s = WireSocket.connect(port)) {
            s.handshake(Wire.VERSION);
            while (System.nanoTime() < deadline) {
                long beginId = id++;
                s.send(frame(b -> writeRequest(b, Wire.BEGIN, beginId)));
                Msg started = s.expectReply(beginId);
                assertEquals(Wire.STARTED, started.type(), "BEGIN answered with " + started);
                long start = started.value();
                assertTrue(start > highest, "start timestamp " + start + " not above " + highest);
                highest = start;
                long randomBefore = randomFramesSent.get();
                goodStarts.set((int) (goodStartsWritten.getAndIncrement() & 15), start);
                transactions++;
                if (rnd.nextBoolean()) {
                    sleepMillis(rnd.nextInt(4)); // let the others meddle with a running transaction
                    long markId = id++;
                    s.send(frame(b -> writeRequest(b, Wire.WATERMARK_QUERY, markId)));
                    long watermark = s.expectReply(markId).value();
                    assertTrue(watermark <= start, "low watermark " + watermark + " passed the running transaction "
                            + start + ": its snapshot is no longer protected");
                }
                int action = rnd.nextInt(10);
                if (action < 7) {
                    long commitId = id++;
                    long[] rows = new long[1 + rnd.nextInt(4)];
                    for (int i = 0; i < rows.length; i++) {
                        rows[i] = rnd.nextLong() & Long.MAX_VALUE; // non-negative: the bad connections use negative
                    }
                    s.send(frame(b -> writeCommit(b, commitId, start, rows)));
                    Msg reply = s.expectReply(commitId);
                    if (reply.type() == Wire.ABORTED && reply.value() == Wire.ABORT_ALREADY_ABORTED
                            && (abortsSent.contains(start) || randomFramesSent.get() != randomBefore)) {
                        foreignAborts++;
                        continue;
                    }
                    assertEquals(Wire.COMMITTED, reply.type(), "commit of " + start + " answered with " + reply);
                    long commitTs = reply.value();
                    assertTrue(commitTs > start && commitTs > highest, "commit timestamp " + commitTs
                            + " not above start " + start + " and every earlier timestamp " + highest);
                    highest = commitTs;
                    committed++;
                    long queryId = id++;
                    s.send(frame(b -> writeRequest(b, Wire.QUERY, queryId, start)));
                    Msg status = s.expectReply(queryId);
                    assertTrue(status.value() == Wire.STATUS_COMMITTED && status.value2() == commitTs
                            || status.value() == Wire.STATUS_COMMITTED_LONG_AGO,
                            "committed " + start + " -> " + commitTs + " but the oracle now says " + status);
                } else if (action < 9) {
                    s.send(frame(b -> writeRequest(b, Wire.FINISH, 0, start)));
                } else {
                    long abortId = id++;
                    s.send(frame(b -> writeRequest(b, Wire.ABORT, abortId, start)));
                    assertEquals(Wire.ACK, s.expectReply(abortId).type());
                    long queryId = id++;
                    s.send(frame(b -> writeRequest(b, Wire.QUERY, queryId, start)));
                    Msg status = s.expectReply(queryId);
                    assertEquals(Wire.STATUS_ABORTED, status.value(), "aborted " + start + ": " + status);
                    long cleanId = id++;
                    s.send(frame(b -> writeRequest(b, Wire.CLEANED_UP, cleanId, start)));
                    assertEquals(Wire.ACK, s.expectReply(cleanId).type());
                }
            }
        }
        return new long[] {transactions, committed, foreignAborts};
    }

    // ---------------------------------------------------------------- the bad connections

    private void badConnections(Random rnd, long deadline) throws Exception {
        while (System.nanoTime() < deadline) {
            int kind = rnd.nextInt(10);
            try (WireSocket s = WireSocket.connect(port)) {
                if (kind < 2) {
                    randomBytes(s, rnd);
                } else if (kind < 3) {
                    halfWritten(s, rnd);
                } else if (kind < 4) {
                    badHandshake(s, rnd);
                } else {
                    mutatedFrame(s, rnd);
                }
            }
            scenarios.incrementAndGet();
        }
    }

    /** (a) Random bytes, before or after a good handshake: if the oracle closes, it says why first. */
    private void randomBytes(WireSocket s, Random rnd) throws IOException {
        if (rnd.nextBoolean()) {
            s.handshake(Wire.VERSION);
            randomFramesSent.incrementAndGet();
        }
        byte[] junk = new byte[1 + rnd.nextInt(rnd.nextBoolean() ? 16 : 300)];
        rnd.nextBytes(junk);
        if (rnd.nextBoolean() && junk.length >= 4) { // a plausible length prefix more often than not
            int len = junk.length - 4 + rnd.nextInt(3) - 1;
            junk[0] = 0;
            junk[1] = 0;
            junk[2] = (byte) (len >> 8);
            junk[3] = (byte) len;
        }
        s.sendRaw(junk);
        List<Msg> seen = s.readFor(150);
        if (s.closedByPeer()) {
            expectConnectionError(seen, (byte) -1, "random bytes");
        }
    }

    /** (c) A frame cut short, then closed by the client. */
    private void halfWritten(WireSocket s, Random rnd) throws IOException {
        if (rnd.nextInt(4) == 0) {
            s.sendRaw(new byte[] {0, 0, 0, 6, 0x53, 0x49}); // half a handshake
            return;
        }
        s.handshake(Wire.VERSION);
        ByteBuf body = validRequests(rnd, 1 + rnd.nextInt(4));
        int len = body.readableBytes();
        int cut = rnd.nextInt(len + 4); // somewhere in the prefix or the body
        byte[] whole = new byte[len + 4];
        Unpooled.wrappedBuffer(whole).writerIndex(0).writeInt(len).writeBytes(body);
        s.sendRaw(java.util.Arrays.copyOf(whole, cut));
        if (rnd.nextBoolean()) {
            sleepMillis(rnd.nextInt(20));
        }
    }

    private void badHandshake(WireSocket s, Random rnd) throws IOException {
        int which = rnd.nextInt(6);
        byte code;
        String must;
        switch (which) {
            case 0 -> { // older, future, negative versions
                short[] versions = {0, 1, 2, 3, 4, (short) (Wire.VERSION + 1), Short.MAX_VALUE, -1};
                short v = versions[rnd.nextInt(versions.length)];
                s.sendFrame(frame(b -> b.writeInt(Wire.MAGIC).writeShort(v)));
                code = Wire.ERR_VERSION;
                must = "version " + v;
            }
            case 1 -> {
                int magic = rnd.nextInt() | 1; // never SIBY (0x53494259 is odd, so flip another bit)
                int m = magic == Wire.MAGIC ? magic ^ 2 : magic;
                s.sendFrame(frame(b -> b.writeInt(m).writeShort(Wire.VERSION)));
                code = Wire.ERR_MALFORMED;
                must = "magic";
            }
            case 2 -> { // a request before the handshake
                s.sendFrame(frame(b -> writeRequest(b, Wire.BEGIN, 1)));
                code = Wire.ERR_MALFORMED;
                must = "handshake";
            }
            case 3 -> { // a second handshake
                s.handshake(Wire.VERSION);
                s.sendFrame(frame(b -> b.writeInt(Wire.MAGIC).writeShort(Wire.VERSION)));
                code = Wire.ERR_MALFORMED;
                must = "unknown message type";
            }
            case 4 -> { // an empty frame as the handshake
                s.sendFrame(Unpooled.buffer());
                code = Wire.ERR_MALFORMED;
                must = "handshake";
            }
            default -> { // a handshake longer than max.frame.bytes
                s.sendRaw(new byte[] {0x7f, (byte) 0xff, (byte) 0xff, (byte) 0xff, 0x53});
                code = Wire.ERR_TOO_LARGE;
                must = "max.frame.bytes";
            }
        }
        Msg err = expectConnectionError(s.readUntilClosed(), code, "bad handshake " + which);
        assertTrue(err.text().contains(must), "error for bad handshake " + which + " does not say '" + must + "': "
                + err.text());
    }

    /** (b) A valid frame with one thing wrong. */
    private void mutatedFrame(WireSocket s, Random rnd) throws IOException {
        s.handshake(Wire.VERSION);
        int which = rnd.nextInt(16);
        long foreign = goodStart(rnd);
        long mine = 0;
        if (rnd.nextBoolean()) {
            s.send(frame(b -> writeRequest(b, Wire.BEGIN, 1)));
            mine = s.expectReply(1).value();
        }
        ByteBuf good = validRequests(rnd, rnd.nextInt(3)); // some valid requests first, in the same frame
        ByteBuf b = Unpooled.buffer().writeBytes(good);
        byte closeCode = 0; // 0: the connection stays open
        long ts = mine != 0 ? mine : 1 + rnd.nextInt(1000);
        switch (which) {
            case 0 -> { // unknown message type, or a reply type sent as a request
                int[] types = {0, 9, 31, 32, Wire.STARTED, Wire.ERROR, 127, -1, -128};
                b.writeByte(types[rnd.nextInt(types.length)]);
                Varints.writeUnsigned(b, 7);
                closeCode = Wire.ERR_MALFORMED;
            }
            case 1 -> { // an overlong varint (11 bytes, or 10 beyond 64 bits) as the request id or a timestamp
                b.writeByte(Wire.QUERY);
                if (rnd.nextBoolean()) {
                    overlongVarint(b, rnd);
                    Varints.writeUnsigned(b, ts);
                } else {
                    Varints.writeUnsigned(b, 7);
                    overlongVarint(b, rnd);
                }
                closeCode = Wire.ERR_MALFORMED;
            }
            case 2 -> { // a message cut short at the end of the frame
                ByteBuf whole = validRequests(rnd, 1);
                int keep = 1 + rnd.nextInt(whole.readableBytes() - 1);
                b.writeBytes(whole, keep);
                closeCode = Wire.ERR_MALFORMED;
            }
            case 3 -> { // timestamp 0, or one with the top bit set (negative as a long)
                byte type = pick(rnd, Wire.COMMIT, Wire.ABORT, Wire.CLEANED_UP, Wire.QUERY, Wire.FINISH);
                long bad = rnd.nextBoolean() ? 0 : Long.MIN_VALUE | rnd.nextLong();
                writeRequest(b, type, 7, bad);
                if (type == Wire.COMMIT) {
                    Varints.writeUnsigned(b, 0);
                }
                closeCode = Wire.ERR_MALFORMED;
            }
            case 4 -> { // timestamps never handed out: far in the future, or huge
                long never = rnd.nextBoolean() ? (1L << 40) + rnd.nextInt(1 << 20) : Long.MAX_VALUE - rnd.nextInt(9);
                byte type = pick(rnd, Wire.COMMIT, Wire.ABORT, Wire.CLEANED_UP, Wire.QUERY, Wire.FINISH);
                if (type == Wire.COMMIT) {
                    writeCommit(b, 7, never, badRows(rnd, 2));
                } else {
                    writeRequest(b, type, 7, never);
                }
            }
            case 5, 6 -> { // the good client's transactions: commit, abort, finish, clean up
                if (foreign != 0) {
                    byte type = pick(rnd, Wire.COMMIT, Wire.COMMIT, Wire.ABORT, Wire.FINISH, Wire.CLEANED_UP);
                    if (type == Wire.COMMIT) {
                        writeCommit(b, 7, foreign, badRows(rnd, rnd.nextInt(3)));
                    } else {
                        writeRequest(b, type, 7, foreign);
                    }
                }
            }
            case 7 -> { // commit twice (and its own transaction after it finished)
                long t = ts;
                long[] rows = badRows(rnd, 1 + rnd.nextInt(3));
                writeCommit(b, 7, t, rows);
                writeCommit(b, 8, t, rows);
                writeRequest(b, pick(rnd, Wire.ABORT, Wire.FINISH, Wire.CLEANED_UP), 9, t);
            }
            case 8 -> { // a write set declaring more rows than follow: up to 2^64 - 1
                long[] declared = {MAX_WRITE_SET_ROWS + 1L, 1L << 20, 1L << 28, 1L << 31, 1L << 32, 1L << 60,
                        (1L << 60) + 1, (1L << 60) + (1L << 20), (1L << 61) + 1, (1L << 62) + 3, Long.MAX_VALUE, -1L};
                b.writeByte(Wire.COMMIT);
                Varints.writeUnsigned(b, 7);
                Varints.writeUnsigned(b, ts);
                Varints.writeUnsigned(b, declared[rnd.nextInt(declared.length)]);
                int follow = rnd.nextInt(4);
                for (int i = 0; i < follow; i++) {
                    b.writeLong(-1 - rnd.nextInt(1000));
                }
                closeCode = Wire.ERR_MALFORMED;
            }
            case 9 -> { // a write set above max.write.set.rows: refused for the request, the connection stays
                writeCommit(b, 7, ts, badRows(rnd, MAX_WRITE_SET_ROWS + 1 + rnd.nextInt(8)));
            }
            case 10 -> { // a frame longer than max.frame.bytes, possibly with a huge declared length
                int len = rnd.nextBoolean() ? MAX_FRAME_BYTES + rnd.nextInt(100) : Integer.MAX_VALUE - rnd.nextInt(9);
                b.clear();
                s.sendRaw(new byte[] {(byte) (len >>> 24), (byte) (len >>> 16), (byte) (len >>> 8), (byte) len,
                        Wire.BEGIN, 1});
                Msg err = expectConnectionError(s.readUntilClosed(), Wire.ERR_TOO_LARGE, "frame of " + len);
                assertTrue(err.text().contains("max.frame.bytes=" + MAX_FRAME_BYTES), err.text());
                return;
            }
            case 11 -> { // an empty frame after the handshake, or a second handshake
                b.clear();
                if (rnd.nextBoolean()) {
                    b.writeInt(Wire.MAGIC).writeShort(Wire.VERSION);
                }
                closeCode = Wire.ERR_MALFORMED;
            }
            case 12 -> { // RANGE_CLEANED_UP of an unknown, empty or inverted range
                long from = rnd.nextInt(1000);
                long to = rnd.nextBoolean() ? from + 1 + rnd.nextInt(1000) : from - rnd.nextInt(3);
                b.writeByte(Wire.RANGE_CLEANED_UP);
                Varints.writeUnsigned(b, 7);
                Varints.writeUnsigned(b, from);
                Varints.writeUnsigned(b, to);
                if (to <= from) {
                    closeCode = Wire.ERR_MALFORMED;
                }
            }
            default -> { // nothing wrong: many valid requests, some about the good client's transactions
                b.writeBytes(validRequests(rnd, 1 + rnd.nextInt(20)));
            }
        }
        if (closeCode != 0) {
            s.sendFrame(b);
            expectConnectionError(s.readUntilClosed(), closeCode, "mutation " + which);
            return;
        }
        writeRequest(b, Wire.WATERMARK_QUERY, MARK);
        s.sendFrame(b);
        for (Msg m : s.readUntilReply(MARK)) {
            if (m.type() == Wire.ERROR) {
                assertTrue(m.id() != 0, "mutation " + which + " closed the connection: " + m);
                assertTrue(m.code() == Wire.ERR_TOO_LARGE || m.code() == Wire.ERR_UNKNOWN_TRANSACTION
                        || m.code() == Wire.ERR_OVERLOADED || m.code() == Wire.ERR_FORBIDDEN,
                        "mutation " + which + ": " + m);
                assertTrue(!m.text().isEmpty(), "an ERROR without a text: " + m);
            }
        }
    }

    /** Valid requests with made-up, own and foreign timestamps and rows disjoint from the good client's. */
    private ByteBuf validRequests(Random rnd, int n) {
        ByteBuf b = Unpooled.buffer();
        for (int i = 0; i < n; i++) {
            long id = 10 + rnd.nextInt(100_000);
            long ts = rnd.nextBoolean() ? goodStart(rnd) : 1 + rnd.nextInt(1 << 16);
            long t = ts == 0 ? 1 : ts;
            switch (rnd.nextInt(8)) {
                case 0 -> writeRequest(b, Wire.BEGIN, id);
                case 1 -> writeCommit(b, id, t, badRows(rnd, rnd.nextInt(4)));
                case 2 -> writeRequest(b, Wire.ABORT, id, t);
                case 3 -> writeRequest(b, Wire.CLEANED_UP, id, t);
                case 4 -> writeRequest(b, Wire.QUERY, id, t);
                case 5 -> writeRequest(b, Wire.FINISH, id, t);
                case 6 -> writeRequest(b, Wire.WATERMARK_QUERY, id);
                default -> {
                    b.writeByte(Wire.RANGE_CLEANED_UP);
                    Varints.writeUnsigned(b, id);
                    Varints.writeUnsigned(b, t);
                    Varints.writeUnsigned(b, t + 1 + rnd.nextInt(100));
                }
            }
        }
        return b;
    }

    /** One of the good client's start timestamps, most often the newest (likely running); 0 if none yet. */
    private long goodStart(Random rnd) {
        long newest = goodStartsWritten.get() - 1;
        return newest < 0 ? 0 : goodStarts.get((int) ((rnd.nextInt(4) == 0 ? newest - rnd.nextInt(16) : newest) & 15));
    }

    /** Checks that the oracle's last word was a connection-level ERROR (of {@code code}, unless -1) with a text. */
    private Msg expectConnectionError(List<Msg> seen, byte code, String what) {
        assertTrue(!seen.isEmpty(), what + ": closed without an ERROR");
        Msg last = seen.get(seen.size() - 1);
        assertEquals(Wire.ERROR, last.type(), what + ": closed without an ERROR; last message " + last);
        assertEquals(0, last.id(), what + ": a connection-level ERROR carries request id 0: " + last);
        if (code != -1) {
            assertEquals(code, last.code(), what + ": " + last);
        }
        assertTrue(last.text().length() > 10, what + ": an ERROR that explains nothing: " + last);
        connectionErrors.add(last.text());
        return last;
    }

    private static long[] badRows(Random rnd, int n) {
        long[] rows = new long[n];
        for (int i = 0; i < n; i++) {
            rows[i] = rnd.nextLong() | Long.MIN_VALUE; // negative: never a row of the good client
        }
        return rows;
    }

    private static void overlongVarint(ByteBuf b, Random rnd) {
        boolean eleven = rnd.nextBoolean();
        for (int i = 0; i < 9; i++) {
            b.writeByte(0x80 | (i == 0 ? 1 + rnd.nextInt(100) : 0)); // a small value, once the excess is cut
        }
        if (eleven) {
            b.writeByte(0x80).writeByte(0);
        } else {
            b.writeByte(2 + rnd.nextInt(126)); // bits above 63
        }
    }

    private static byte pick(Random rnd, byte... types) {
        return types[rnd.nextInt(types.length)];
    }

    private static void sleepMillis(long millis) {
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    // ---------------------------------------------------------------- wire helpers

    /**
     * Writes a request. Any connection may abort a transaction (the client does so for one begun on a connection it
     * lost, see docs/protocol.md), so the good client accepts "already aborted" for a transaction an ABORT was sent for.
     */
    void writeRequest(ByteBuf b, byte type, long id, long... args) {
        if (type == Wire.ABORT) {
            abortsSent.add(args[0]);
        }
        b.writeByte(type);
        Varints.writeUnsigned(b, id);
        for (long a : args) {
            Varints.writeUnsigned(b, a);
        }
    }

    void writeCommit(ByteBuf b, long id, long startTs, long[] rows) {
        writeRequest(b, Wire.COMMIT, id, startTs, rows.length);
        for (long r : rows) {
            b.writeLong(r);
        }
    }

    interface Body {
        void write(ByteBuf b);
    }

    ByteBuf frame(Body body) {
        ByteBuf b = Unpooled.buffer();
        body.write(b);
        return b;
    }

    /** A message from the oracle: type, request id, ERROR code and text, and up to two values. */
    record Msg(byte type, long id, byte code, String text, long value, long value2) {
    }

    /** A blocking socket speaking frames; parses everything the oracle sends. */
    static final class WireSocket implements AutoCloseable {
        private final Socket socket;
        private final DataInputStream in;
        private boolean closedByPeer;
        private byte[] nonce;

        private WireSocket(Socket socket) throws IOException {
            this.socket = socket;
            this.in = new DataInputStream(socket.getInputStream());
        }

        /** Frames over {@code socket}, connected already (a TLS socket, say). */
        static WireSocket over(Socket socket) throws IOException {
            socket.setSoTimeout(10_000);
            return new WireSocket(socket);
        }

        static WireSocket connect(int port) throws IOException {
            Socket s = new Socket("127.0.0.1", port);
            s.setTcpNoDelay(true);
            s.setSoTimeout(10_000);
            return new WireSocket(s);
        }

        void handshake(short version) throws IOException {
            handshake(Unpooled.buffer().writeInt(Wire.MAGIC).writeShort(version), version);
        }

        /** Handshakes as one connection of the client whose identity token is {@code token}. */
        void handshakeAs(long token) throws IOException {
            handshake(Unpooled.buffer().writeInt(Wire.MAGIC).writeShort(Wire.VERSION).writeByte(Wire.ROLE_CLIENT)
                    .writeLong(token), Wire.VERSION);
        }

        /** The nonce of this connection's HELLO (an admin proof covers it). */
        byte[] nonce() {
            return nonce;
        }

        /** Sends a handshake of {@code version} without waiting for the HELLO ({@link #awaitHello}). */
        void sendHandshake(short version) throws IOException {
            sendFrame(Unpooled.buffer().writeInt(Wire.MAGIC).writeShort(version));
        }

        /** Reads until the HELLO. */
        void awaitHello() throws IOException {
            handshake(null, Wire.VERSION);
        }

        private void handshake(ByteBuf frame, short version) throws IOException {
            if (frame != null) {
                sendFrame(frame);
            }
            if (version == Wire.VERSION) {
                while (true) {
                    List<Msg> f = readFrame();
                    if (!f.isEmpty() && f.get(0).type() == Wire.HELLO) {
                        return;
                    }
                }
            }
        }

        void send(ByteBuf body) throws IOException {
            sendFrame(body);
        }

        void sendFrame(ByteBuf body) throws IOException {
            byte[] bytes = new byte[4 + body.readableBytes()];
            Unpooled.wrappedBuffer(bytes).writerIndex(0).writeInt(body.readableBytes()).writeBytes(body);
            sendRaw(bytes);
        }

        void sendRaw(byte[] bytes) throws IOException {
            try {
                OutputStream out = socket.getOutputStream();
                out.write(bytes);
                out.flush();
            } catch (SocketException e) {
                // The oracle closed already (it answered an earlier frame with an ERROR): reading will show it.
            }
        }

        boolean closedByPeer() {
            return closedByPeer;
        }

        /** Reads until the reply to {@code id} (an ERROR for it or for the connection fails the good client). */
        Msg expectReply(long id) throws IOException {
            long deadline = System.nanoTime() + 10_000_000_000L; // heartbeats keep reads alive
            while (true) {
                assertTrue(System.nanoTime() - deadline < 0, "no reply to request " + id + " within 10 s");
                for (Msg m : readFrame()) {
                    if (m.type() == Wire.ERROR) {
                        fail("ERROR from the oracle: " + m);
                    }
                    if (m.id() == id && m.type() != Wire.DELTA && m.type() != Wire.HELLO) {
                        return m;
                    }
                }
            }
        }

        /** Reads until the reply to {@code id}; returns everything read. */
        List<Msg> readUntilReply(long id) throws IOException {
            List<Msg> all = new ArrayList<>();
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (true) {
                assertTrue(System.nanoTime() - deadline < 0, "no reply to request " + id + " within 10 s: " + all);
                List<Msg> f = readFrame();
                all.addAll(f);
                for (Msg m : f) {
                    if (m.type() == Wire.ERROR && m.id() == 0) {
                        fail("the oracle closed a connection it should have kept: " + m + " after " + all);
                    }
                    if (m.id() == id && m.type() == Wire.WATERMARK) {
                        return all;
                    }
                }
            }
        }

        /** Reads until the oracle closes the connection (within 10 s). */
        List<Msg> readUntilClosed() throws IOException {
            List<Msg> all = new ArrayList<>();
            long deadline = System.nanoTime() + socket.getSoTimeout() * 1_000_000L; // heartbeats keep reads alive
            try {
                while (true) {
                    all.addAll(readFrame());
                    if (System.nanoTime() - deadline > 0) {
                        throw new SocketTimeoutException();
                    }
                }
            } catch (EOFException | SocketException e) {
                closedByPeer = true;
                return all;
            } catch (SocketTimeoutException e) {
                throw new AssertionError("the oracle did not close the connection within " + socket.getSoTimeout()
                        + " ms; read " + all);
            }
        }

        /** Reads for up to {@code millis}, or until the oracle closes. */
        List<Msg> readFor(int millis) throws IOException {
            socket.setSoTimeout(millis);
            try {
                return readUntilClosed();
            } catch (AssertionError timedOut) {
                return Collections.emptyList();
            } finally {
                if (!socket.isClosed()) {
                    socket.setSoTimeout(10_000);
                }
            }
        }

        List<Msg> readFrameForTest() throws IOException {
            return readFrame();
        }

        private List<Msg> readFrame() throws IOException {
            int len = in.readInt();
            assertTrue(len >= 0 && len < (64 << 20), "the oracle sent a frame of " + len + " bytes");
            byte[] bytes = new byte[len];
            in.readFully(bytes);
            ByteBuf f = Unpooled.wrappedBuffer(bytes);
            List<Msg> msgs = new ArrayList<>();
            while (f.isReadable()) {
                byte type = f.readByte();
                switch (type) {
                    case Wire.HELLO -> {
                        f.readShort();
                        nonce = new byte[Wire.NONCE_BYTES];
                        f.readBytes(nonce);
                        f.skipBytes(f.readableBytes()); // last in its frame but for a DELTA; not needed here
                        msgs.add(new Msg(type, 0, (byte) 0, null, 0, 0));
                    }
                    case Wire.DELTA -> {
                        f.skipBytes((int) Varints.readUnsigned(f));
                        msgs.add(new Msg(type, -1, (byte) 0, null, 0, 0));
                    }
                    case Wire.STARTED, Wire.COMMITTED, Wire.WATERMARK -> msgs.add(new Msg(type,
                            Varints.readUnsigned(f), (byte) 0, null, Varints.readUnsigned(f), 0));
                    case Wire.ABORTED -> msgs.add(new Msg(type, Varints.readUnsigned(f), (byte) 0, null,
                            f.readByte(), 0));
                    case Wire.ACK -> msgs.add(new Msg(type, Varints.readUnsigned(f), (byte) 0, null, 0, 0));
                    case Wire.STATUS -> {
                        long id = Varints.readUnsigned(f);
                        byte state = f.readByte();
                        msgs.add(new Msg(type, id, (byte) 0, null, state, Varints.readUnsigned(f)));
                    }
                    case Wire.ERROR -> {
                        long id = Varints.readUnsigned(f);
                        byte code = f.readByte();
                        msgs.add(new Msg(type, id, code, Frames.readString(f, Frames.MAX_ERROR_TEXT), 0, 0));
                    }
                    // Admin replies: the decoded body as text, and the running list's total as the value.
                    case Wire.ORACLE_STATUS -> msgs.add(new Msg(type, Varints.readUnsigned(f), (byte) 0,
                            AdminReplies.readStatus(f).toString(), 0, 0));
                    case Wire.RUNNING_LIST -> {
                        long id = Varints.readUnsigned(f);
                        AdminReplies.RunningList list = AdminReplies.readRunning(f);
                        msgs.add(new Msg(type, id, (byte) 0, list.oldest().toString(), list.total(), 0));
                    }
                    default -> fail("the oracle sent message type " + type);
                }
            }
            return msgs;
        }

        @Override
        public void close() throws IOException {
            socket.close();
        }
    }

    /** Copies what is written to the real stderr and to memory. */
    private static final class TeeStream extends OutputStream {
        private final OutputStream a;
        private final ByteArrayOutputStream b;

        TeeStream(OutputStream a, ByteArrayOutputStream b) {
            this.a = a;
            this.b = b;
        }

        @Override
        public void write(int c) throws IOException {
            a.write(c);
            synchronized (b) {
                b.write(c);
            }
        }

        @Override
        public void write(byte[] buf, int off, int len) throws IOException {
            a.write(buf, off, len);
            synchronized (b) {
                b.write(buf, off, len);
            }
        }
    }
}
