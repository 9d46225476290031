package io.sibyl.client.oracle;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.ByteBufAllocator;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledHeapByteBuf;
import io.sibyl.protocol.DecisionBlockWriter;
import io.sibyl.protocol.Timestamps;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * One thread applies a long precomputed stream of decision blocks (commits out of start order, aborts, aborts that are
 * later forgotten, advancing T_max, a second reader that holds commits and then leaves so the tables grow, trim and
 * shrink) while other threads ask {@link CommitReplica#inSnapshot} for a fixed registered reader about writers whose
 * decision was already applied. Those answers are known in advance and must never be wrong, whatever the writer is
 * doing to the tables at that moment.
 */
class ReplicaConcurrentReadersTest {
    private static final int TXNS = 400_000;
    /** Smaller run whose start timestamps all hash near each other, so every mutation shifts the entries readers probe. */
    private static final int HOT_TXNS = 40_000;
    private static final long FORGOTTEN = -2;
    private static final long ABORTED = -1;

    /** The precomputed stream: blocks, and how many decisions are applied once each block is. */
    private static final class Schedule {
        final List<byte[]> blocks = new ArrayList<>();
        final List<Integer> decisionsAfter = new ArrayList<>();
        final int txns;
        final long[] starts;
        /** Commit timestamp, {@link #ABORTED} or {@link #FORGOTTEN} (aborted, later forgotten: not queried). */
        final long[] outcome;
        /** Transaction indexes in the order their decisions appear in the stream. */
        final int[] decisionOrder;
        long holder;
        long reader;
        int unregisterHolderAtBlock;
        long lastTs;

        Schedule(int txns) {
            this.txns = txns;
            starts = new long[txns];
            outcome = new long[txns];
            decisionOrder = new int[txns];
        }
    }

    /**
     * Whether {@code ts} hashes into the lowest 1/100 of the hash range, so its home slot (the hash scaled into the
     * slot count, as SingleWriterLongLongMap does) is in the first 1/100 of any table: such keys all collide.
     */
    private static boolean collides(long ts) {
        return (ts * 0x9E3779B97F4A7C15L) >>> 32 < (1L << 32) / 100;
    }

    /**
     * @param hot whether writers' start timestamps are chosen so they share the first 1/100 of the home slots of any
     *            table: the tables then hold one long cluster, and each insert, removal or shift moves entries that
     *            concurrent readers are probing
     */
    private static Schedule schedule(long seed, int txns, boolean hot) {
        Schedule s = new Schedule(txns);
        Random random = new Random(seed);
        DecisionBlockWriter w = new DecisionBlockWriter();
        List<Integer> open = new ArrayList<>();
        List<Long> pendingForgets = new ArrayList<>();
        long ts = 0;
        int begun = 0;
        int decided = 0;
        long tMax = 0;
        while (decided < txns) {
            w.start(ts);
            int decisionsInBlock = 1 + random.nextInt(random.nextInt(8) == 0 ? 200 : 40);
            for (int d = 0; d < decisionsInBlock && decided < txns; d++) {
                while (begun < txns && (open.size() < 8 || (open.size() < 200 && random.nextBoolean()))) {
                    if (begun == txns / 10 && s.holder == 0) {
                        s.holder = (ts += Timestamps.STEP); // a long reader: commits pile up until it leaves
                    }
                    if (begun == txns * 17 / 20 && s.reader == 0) {
                        s.reader = (ts += Timestamps.STEP); // the reader every query asks about
                    }
                    s.starts[begun] = (ts += Timestamps.STEP);
                    while (hot && !collides(ts)) {
                        s.starts[begun] = (ts += Timestamps.STEP);
                    }
                    open.add(begun++);
                }
                int i = open.remove(random.nextInt(open.size()));
                int r = random.nextInt(10);
                if (r < 7) {
                    s.outcome[i] = (ts += Timestamps.STEP);
                    w.commit(s.starts[i], s.outcome[i]);
                } else if (r < 9) {
                    s.outcome[i] = ABORTED;
                    w.abort(s.starts[i]);
                } else {
                    s.outcome[i] = FORGOTTEN;
                    w.abort(s.starts[i]);
                    pendingForgets.add(s.starts[i]);
                }
                s.decisionOrder[decided++] = i;
                if (pendingForgets.size() > 50 && random.nextInt(4) == 0) {
                    for (long f : pendingForgets) {
                        w.forget(f);
                    }
                    pendingForgets.clear();
                }
            }
            // T_max: every start below it is decided.
            long oldestOpen = ts + 1;
            for (int i : open) {
                oldestOpen = Math.min(oldestOpen, s.starts[i]);
            }
            if (oldestOpen - 1 > tMax && random.nextInt(3) > 0) {
                tMax = oldestOpen - 1 - random.nextInt(20);
                tMax = Math.max(tMax, 1);
                w.tMax(tMax);
            }
            if (!w.isEmpty()) {
                s.blocks.add(w.seal());
                s.decisionsAfter.add(decided);
            }
            if (s.unregisterHolderAtBlock == 0 && decided >= txns * 2 / 5) {
                s.unregisterHolderAtBlock = s.blocks.size();
            }
        }
        if (!pendingForgets.isEmpty()) {
            w.start(ts);
            for (long f : pendingForgets) {
                w.forget(f);
            }
            s.blocks.add(w.seal());
            s.decisionsAfter.add(decided);
        }
        s.lastTs = ts;
        return s;
    }

    @Test
    void readersNeverSeeAWrongAnswerWhileBlocksAreApplied() throws Exception {
        run(schedule(20240611, TXNS, false));
    }

    @Test
    void readersNeverSeeAWrongAnswerWhileCollidingEntriesAreShifted() throws Exception {
        run(schedule(7, HOT_TXNS, true));
    }

    /** A buffer whose reader stops at one offset until released: a block application frozen half-way. */
    private static final class PausingBuf extends UnpooledHeapByteBuf {
        final int pauseAt;
        final CountDownLatch paused = new CountDownLatch(1);
        final CountDownLatch resume = new CountDownLatch(1);

        PausingBuf(byte[] bytes, int pauseAt) {
            super(ByteBufAllocator.DEFAULT, bytes, bytes.length);
            this.pauseAt = pauseAt;
        }

        @Override
        public byte readByte() {
            if (readerIndex() == pauseAt && paused.getCount() > 0) {
                paused.countDown();
                try {
                    assertTrue(resume.await(30, TimeUnit.SECONDS));
                } catch (InterruptedException e) {
                    throw new AssertionError(e);
                }
            }
            return super.readByte();
        }
    }

    /**
     * Deterministic check of the sequence lock: a run of two blocks passes through a state that would give a wrong
     * answer (the writer forgotten, then aborted again). A reader asking while the application is frozen between them
     * must wait for it, then see the final state.
     */
    @Test
    void readersWaitForAHalfAppliedRun() throws Exception {
        CommitReplica replica = new CommitReplica(1000, 0, new long[0]);
        long reader = 500;
        replica.registerReader(reader);
        DecisionBlockWriter w = new DecisionBlockWriter();
        w.start(0);
        w.abort(100);
        w.commit(200, 600);
        w.tMax(300);
        replica.apply(Unpooled.wrappedBuffer(w.seal()));
        assertEquals(Visibility.INVISIBLE, replica.inSnapshot(100, reader));
        assertTrue(replica.isAborted(100));

        w.start(100);
        w.forget(100);
        byte[] first = w.seal();
        w.start(100);
        w.abort(100);
        byte[] second = w.seal();
        byte[] run = new byte[first.length + second.length];
        System.arraycopy(first, 0, run, 0, first.length);
        System.arraycopy(second, 0, run, first.length, second.length);
        PausingBuf buf = new PausingBuf(run, first.length);
        Thread applier = new Thread(() -> replica.apply(buf), "applier");
        applier.start();
        assertTrue(buf.paused.await(30, TimeUnit.SECONDS));
        CompletableFuture<Visibility> visibility = CompletableFuture.supplyAsync(() -> replica.inSnapshot(100, reader));
        CompletableFuture<Boolean> aborted = CompletableFuture.supplyAsync(() -> replica.isAborted(100));
        Thread.sleep(200);
        assertFalse(visibility.isDone(), "answered from a half-applied run: " + visibility.getNow(null));
        assertFalse(aborted.isDone(), "answered from a half-applied run: " + aborted.getNow(null));
        buf.resume.countDown();
        applier.join(30_000);
        assertEquals(Visibility.INVISIBLE, visibility.get(30, TimeUnit.SECONDS));
        assertTrue(aborted.get(30, TimeUnit.SECONDS));
        assertEquals(Visibility.INVISIBLE, replica.inSnapshot(200, reader));
        assertEquals(600, replica.commitTimestampOf(200));
    }

    private static Visibility expected(Schedule s, int txn) {
        long o = s.outcome[txn];
        return o > 0 && o < s.reader ? Visibility.VISIBLE : Visibility.INVISIBLE;
    }

    private static void run(Schedule s) throws Exception {
        int txns = s.txns;
        CommitReplica replica = new CommitReplica(1, 0, new long[0]);
        replica.registerReader(s.holder);
        replica.registerReader(s.reader);
        AtomicLong applied = new AtomicLong(); // decisions applied so far (published after each apply)
        AtomicLong queries = new AtomicLong();
        AtomicBoolean done = new AtomicBoolean();
        AtomicReference<String> wrong = new AtomicReference<>();
        int readerThreads = 3;
        CountDownLatch started = new CountDownLatch(readerThreads);
        List<Thread> threads = new ArrayList<>();
        for (int t = 0; t < readerThreads; t++) {
            long seed = t;
            Thread thread = new Thread(() -> {
                Random random = new Random(seed);
                started.countDown();
                try {
                    while (!done.get() && wrong.get() == null) {
                        int n = (int) applied.get();
                        if (n == 0) {
                            Thread.onSpinWait();
                            continue;
                        }
                        if (random.nextInt(4) == 0 && n + 200 < txns) {
                            // A decision in the block being applied or soon after: only those whose answer is
                            // the same before and after it (aborted, or committed after the reader started).
                            int txn = s.decisionOrder[n + random.nextInt(200)];
                            long o = s.outcome[txn];
                            if (o == ABORTED || o > s.reader) {
                                Visibility got = replica.inSnapshot(s.starts[txn], s.reader);
                                if (got != Visibility.INVISIBLE) {
                                    wrong.compareAndSet(null, "inSnapshot(" + s.starts[txn] + ", " + s.reader
                                            + ") = " + got + " before or while its decision (" + o + ") applied");
                                }
                                queries.incrementAndGet();
                            }
                            continue;
                        }
                        // Mostly recent decisions (whose entries the writer is busy with), sometimes any.
                        int k = random.nextBoolean() ? n - 1 - random.nextInt(Math.min(n, 2000)) : random.nextInt(n);
                        int txn = s.decisionOrder[k];
                        if (s.outcome[txn] == FORGOTTEN) {
                            continue;
                        }
                        long writer = s.starts[txn];
                        Visibility got = replica.inSnapshot(writer, s.reader);
                        if (got != expected(s, txn)) {
                            wrong.compareAndSet(null, "inSnapshot(" + writer + ", " + s.reader + ") = " + got
                                    + ", expected " + expected(s, txn) + " (outcome " + s.outcome[txn] + ")");
                        }
                        boolean aborted = replica.isAborted(writer);
                        if (aborted != (s.outcome[txn] == ABORTED)) {
                            wrong.compareAndSet(null, "isAborted(" + writer + ") = " + aborted);
                        }
                        long held = replica.commitTimestampOf(writer);
                        if (held != 0 && held != s.outcome[txn]) {
                            wrong.compareAndSet(null, "commitTimestampOf(" + writer + ") = " + held);
                        }
                        if (s.outcome[txn] > s.reader && held != s.outcome[txn]) {
                            wrong.compareAndSet(null, "commit after the reader was trimmed: " + writer);
                        }
                        queries.incrementAndGet();
                    }
                } catch (Throwable e) {
                    wrong.compareAndSet(null, "reader threw " + e);
                }
            }, "replica-reader-" + t);
            thread.setDaemon(true);
            threads.add(thread);
            thread.start();
        }
        assertTrue(started.await(10, TimeUnit.SECONDS));

        int maxCommitsHeld = 0;
        int heldBeforeRelease = 0;
        Random random = new Random(5);
        int b = 0;
        long lastQueries = -1;
        while (b < s.blocks.size() && wrong.get() == null) {
            if (b >= s.unregisterHolderAtBlock && heldBeforeRelease == 0) {
                heldBeforeRelease = replica.commitCount();
                replica.unregisterReader(s.holder);
            }
            int run = Math.min(1 + random.nextInt(2), s.blocks.size() - b);
            if (b < s.unregisterHolderAtBlock) {
                run = Math.min(run, s.unregisterHolderAtBlock - b);
            }
            ByteBuf buf = Unpooled.wrappedBuffer(s.blocks.subList(b, b + run).toArray(new byte[0][]));
            replica.apply(buf);
            b += run;
            applied.set(s.decisionsAfter.get(b - 1));
            maxCommitsHeld = Math.max(maxCommitsHeld, replica.commitCount());
            if (b % 64 < run) {
                // Let the readers in now and then, so the two sides really interleave even on a busy machine.
                long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(200);
                while (queries.get() == lastQueries && System.nanoTime() < deadline && wrong.get() == null) {
                    Thread.yield();
                }
                lastQueries = queries.get();
            }
        }
        done.set(true);
        for (Thread t : threads) {
            t.join(10_000);
            assertFalse(t.isAlive(), t.getName() + " did not finish");
        }
        assertNull(wrong.get());
        assertTrue(queries.get() > 1000, "only " + queries.get() + " queries ran");

        // The holder made commits pile up; once it left they were trimmed.
        assertTrue(heldBeforeRelease > txns / 5, "held " + heldBeforeRelease + " for the holder");
        assertTrue(maxCommitsHeld >= heldBeforeRelease);
        // Now only commits after the reader's start are held (plus ones not yet below T_max).
        int afterReader = 0;
        for (int i = 0; i < txns; i++) {
            if (s.outcome[i] > s.reader) {
                afterReader++;
            }
        }
        assertTrue(replica.commitCount() >= afterReader);
        assertTrue(replica.commitCount() < afterReader + 1000, replica.commitCount() + " held vs " + afterReader);

        // Every answer again, single-threaded, at the end.
        for (int i = 0; i < txns; i++) {
            if (s.outcome[i] != FORGOTTEN) {
                assertEquals(expected(s, i), replica.inSnapshot(s.starts[i], s.reader), "writer " + s.starts[i]);
            }
        }

        // The reader leaves and T_max passes everything: the replica empties.
        replica.unregisterReader(s.reader);
        DecisionBlockWriter w = new DecisionBlockWriter();
        w.start(s.lastTs);
        w.tMax(s.lastTs + 1);
        replica.apply(Unpooled.wrappedBuffer(w.seal()));
        assertEquals(0, replica.commitCount());
        int aborted = 0;
        for (long o : s.outcome) {
            if (o == ABORTED) {
                aborted++;
            }
        }
        assertEquals(aborted, replica.abortedCount(), "only the never-forgotten aborts remain");
    }
}
