package io.sibyl.oracle;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The uncommitted list: start-ordered ring, low watermark, T_max aborts, the running limit (begins are refused, nobody
 * is evicted), compaction of finished entries, and dead owners.
 */
class RunningTransactionsTest {

    private static List<Long> collect(java.util.function.Consumer<RunningTransactions.TimestampSink> call) {
        List<Long> out = new ArrayList<>();
        call.accept(out::add);
        return out;
    }

    @Test
    void finishReturnsTheStateTheTransactionWasIn() {
        RunningTransactions running = new RunningTransactions(16);
        for (long ts = 1; ts <= 4; ts++) {
            running.add(ts, 1);
        }
        assertEquals(4, running.live());
        assertEquals(RunningTransactions.RUNNING, running.finish(2));
        assertEquals(3, running.live());
        assertEquals(RunningTransactions.NOT_FOUND, running.finish(2), "finishing twice finds nothing");
        assertEquals(RunningTransactions.NOT_FOUND, running.finish(99), "never started");
        assertEquals(3, running.live(), "finishing what is not running changes nothing");
        assertEquals(List.of(1L, 3L), collect(s -> running.abortStartedBefore(4, s)));
        assertEquals(3, running.live(), "T_max-aborted transactions still run until their client finishes them");
        assertEquals(RunningTransactions.ABORTED_BY_TMAX, running.stateOf(3));
        assertEquals(RunningTransactions.ABORTED_BY_TMAX, running.finish(3));
        assertEquals(RunningTransactions.NOT_FOUND, running.stateOf(3));
        assertEquals(RunningTransactions.RUNNING, running.stateOf(4));
        assertEquals(RunningTransactions.ABORTED_BY_TMAX, running.finish(1));
        assertEquals(RunningTransactions.RUNNING, running.finish(4));
        assertEquals(0, running.live());
    }

    @Test
    void oldestIsTheLowWatermarkWhateverOrderTransactionsFinishIn() {
        RunningTransactions running = new RunningTransactions(16);
        assertEquals(77, running.oldest(77), "empty: the caller's default");
        for (long ts = 10; ts <= 14; ts++) {
            running.add(ts, 1);
        }
        assertEquals(10, running.oldest(0));
        running.finish(12);
        assertEquals(10, running.oldest(0), "finishing a younger one does not move the watermark");
        assertEquals(4, running.live(), "a transaction finished in the middle no longer counts");
        running.finish(10);
        assertEquals(11, running.oldest(0));
        running.finish(11);
        assertEquals(13, running.oldest(0), "the head skips every finished slot");
        assertEquals(2, running.live());
        running.finish(14);
        running.finish(13);
        assertEquals(99, running.oldest(99));
        assertEquals(0, running.live());
    }

    @Test
    void transactionAbortedByTmaxStillHoldsTheLowWatermarkUntilItsClientFinishes() {
        RunningTransactions running = new RunningTransactions(16);
        running.add(5, 1);
        running.add(6, 1);
        assertEquals(List.of(5L, 6L), collect(s -> running.abortStartedBefore(100, s)));
        assertEquals(5, running.oldest(0));
        assertEquals(2, running.live());
        running.finish(5);
        assertEquals(6, running.oldest(0));
        assertEquals(1, running.live());
    }

    @Test
    void abortStartedBeforeReportsEachTransactionOnceAndSkipsFinishedOnes() {
        RunningTransactions running = new RunningTransactions(32);
        for (long ts = 1; ts <= 10; ts++) {
            running.add(ts, 1);
        }
        assertEquals(List.of(1L, 2L, 3L, 4L), collect(s -> running.abortStartedBefore(5, s)));
        assertEquals(List.of(), collect(s -> running.abortStartedBefore(5, s)), "already reported");
        assertEquals(List.of(), collect(s -> running.abortStartedBefore(3, s)), "T_max never goes down");
        running.finish(6);
        assertEquals(List.of(5L, 7L), collect(s -> running.abortStartedBefore(8, s)));
        running.finish(9);
        running.add(11, 2);
        assertEquals(List.of(8L, 10L, 11L), collect(s -> running.abortStartedBefore(1000, s)));
        running.add(12, 2);
        assertEquals(List.of(12L), collect(s -> running.abortStartedBefore(1000, s)),
                "a transaction added after the scan is still checked");
    }

    @Test
    void abortStartedBeforeKeepsWorkingAfterTheHeadPassedTheScanPosition() {
        RunningTransactions running = new RunningTransactions(8);
        long ts = 0;
        for (int round = 0; round < 50; round++) {
            running.add(++ts, 1);
            running.add(++ts, 1);
            running.finish(ts - 1);
            running.finish(ts);
        }
        long last = ++ts;
        running.add(last, 1);
        assertEquals(List.of(last), collect(s -> running.abortStartedBefore(last + 1, s)));
    }

    /** Nobody is evicted: at the limit a new transaction is refused and the oldest keeps the low watermark. */
    @Test
    void beginIsRefusedAtTheLimitWhileTheOldestRunningTransactionKeepsTheLowWatermark() {
        RunningTransactions running = new RunningTransactions(4);
        assertEquals(4, running.capacity());
        for (long ts = 1; ts <= 4; ts++) {
            assertFalse(running.isFull(), "only " + (ts - 1) + " running");
            running.add(ts, (int) ts);
        }
        assertTrue(running.isFull());
        assertEquals(4, running.live());
        assertThrows(IllegalStateException.class, () -> running.add(5, 5));
        assertEquals(4, running.live(), "the refused add changed nothing");
        assertEquals(RunningTransactions.NOT_FOUND, running.stateOf(5));
        assertEquals(1, running.oldest(0), "the oldest running transaction still holds the low watermark");
        assertEquals(RunningTransactions.RUNNING, running.stateOf(1), "and may still commit");

        // Transactions T_max aborted still run (their snapshots must stay protected): they still count.
        assertEquals(List.of(1L, 2L), collect(s -> running.abortStartedBefore(3, s)));
        assertTrue(running.isFull());
        assertThrows(IllegalStateException.class, () -> running.add(5, 5));
        assertEquals(1, running.oldest(0));
        assertEquals(RunningTransactions.ABORTED_BY_TMAX, running.stateOf(1));

        // One that finishes in the middle gives its place back at once; the oldest is not touched.
        assertEquals(RunningTransactions.RUNNING, running.finish(3));
        assertFalse(running.isFull());
        assertEquals(3, running.live());
        running.add(5, 5);
        assertTrue(running.isFull());
        assertThrows(IllegalStateException.class, () -> running.add(6, 6));
        assertEquals(1, running.oldest(0));

        assertEquals(RunningTransactions.ABORTED_BY_TMAX, running.finish(1));
        assertEquals(2, running.oldest(0));
        running.add(6, 6);
        assertEquals(2, running.oldest(0));
        assertEquals(4, running.live());
        assertEquals(RunningTransactions.ABORTED_BY_TMAX, running.stateOf(2));
        assertEquals(RunningTransactions.NOT_FOUND, running.stateOf(3));
        for (long ts = 4; ts <= 6; ts++) {
            assertEquals(RunningTransactions.RUNNING, running.stateOf(ts), "ts " + ts);
        }
        assertEquals(List.of(4L, 5L), collect(s -> running.abortStartedBefore(6, s)));
    }

    /**
     * With a limit of 4, a long-running oldest transaction and thousands of short ones started and finished (in random
     * order) after it all fit: finished entries between the oldest and the newest do not hold capacity.
     */
    @Test
    void finishedTransactionsInTheMiddleDoNotHoldCapacity() {
        RunningTransactions running = new RunningTransactions(4);
        Random random = new Random(5);
        running.add(1, 1);
        long ts = 1;
        List<Long> open = new ArrayList<>();
        for (int i = 0; i < 10_000; i++) {
            while (open.size() < 3) {
                assertFalse(running.isFull(), "step " + i + ": " + (1 + open.size()) + " running of 4");
                running.add(++ts, 2);
                open.add(ts);
            }
            assertTrue(running.isFull());
            assertEquals(4, running.live());
            if (i == 100) {
                // T_max passes the oldest: it is aborted but keeps running, and must not be reported again later.
                assertEquals(List.of(1L), collect(s -> running.abortStartedBefore(2, s)));
            }
            long pick = open.remove(random.nextInt(open.size()));
            assertEquals(RunningTransactions.RUNNING, running.finish(pick), "step " + i);
            assertEquals(1, running.oldest(0), "step " + i + ": the long transaction still holds the low watermark");
            assertEquals(1 + open.size(), running.live());
        }
        assertTrue(ts > 10_000);
        assertEquals(RunningTransactions.ABORTED_BY_TMAX, running.stateOf(1));
        for (long t : open) {
            assertEquals(RunningTransactions.RUNNING, running.stateOf(t), "ts " + t);
        }
        List<Long> expected = new ArrayList<>(open);
        expected.sort(null);
        long bound = ts + 1;
        assertEquals(expected, collect(s -> running.abortStartedBefore(bound, s)),
                "exactly the short ones still running, in start order; the long one was reported before");
        assertEquals(RunningTransactions.ABORTED_BY_TMAX, running.finish(1));
        assertEquals(expected.get(0), running.oldest(0));
        assertEquals(open.size(), running.live());
    }

    /**
     * A compaction squeezes finished entries out of a full ring, some of them already compared with T_max and some
     * not: order, states, owners and the T_max scan position must survive it.
     */
    @Test
    void compactionKeepsOrderStatesOwnersAndTheTmaxScanPosition() {
        RunningTransactions running = new RunningTransactions(4); // the ring has room for 8
        running.add(1, 7);
        running.add(2, 8);
        running.add(3, 7);
        running.add(4, 8);
        running.finish(2);
        running.finish(3);
        assertEquals(List.of(1L), collect(s -> running.abortStartedBefore(4, s))); // scanned 1, 2, 3
        running.add(5, 8);
        running.add(6, 7);
        running.finish(5);
        running.add(7, 7);
        running.finish(6);
        running.add(8, 8);
        running.finish(7);
        // 1 and 4 and 8 run, 2, 3, 5, 6, 7 finished between them: the ring is full of slots, not of transactions.
        for (long ts = 9; ts <= 40; ts++) {
            running.add(ts, ts % 2 == 0 ? 8 : 7);
            assertTrue(running.isFull());
            assertEquals(1, running.oldest(0));
            assertEquals(RunningTransactions.RUNNING, running.finish(ts), "ts " + ts);
        }
        running.add(41, 7);
        assertEquals(4, running.live());
        assertEquals(1, running.oldest(0));
        assertEquals(RunningTransactions.ABORTED_BY_TMAX, running.stateOf(1));
        assertEquals(RunningTransactions.RUNNING, running.stateOf(4));
        assertEquals(RunningTransactions.RUNNING, running.stateOf(8));
        assertEquals(RunningTransactions.RUNNING, running.stateOf(41));
        for (long ts : new long[] {2, 3, 5, 6, 7, 9, 25, 40}) {
            assertEquals(RunningTransactions.NOT_FOUND, running.stateOf(ts), "ts " + ts);
        }
        assertEquals(List.of(4L, 8L), collect(s -> running.abortStartedBefore(9, s)),
                "1 is not reported twice, and 4 (not scanned before the compactions) is not skipped");
        assertEquals(List.of(41L), collect(s -> running.finishAllOf(7, s)),
                "owner 7 has 1 (aborted by T_max: not reported) and 41");
        assertEquals(RunningTransactions.NOT_FOUND, running.stateOf(1));
        assertEquals(4, running.oldest(0));
        assertEquals(2, running.live());
        assertEquals(List.of(), collect(s -> running.finishAllOf(8, s)), "4 and 8 were aborted by T_max");
        assertEquals(0, running.live());
        assertEquals(-1, running.oldest(-1));
    }

    @Test
    void finishAllOfFinishesOnlyThatOwnersTransactionsAndReportsThoseThatCouldCommit() {
        RunningTransactions running = new RunningTransactions(16);
        running.add(1, 7);
        running.add(2, 8);
        running.add(3, 7);
        running.add(4, 8);
        running.add(5, 7);
        running.abortStartedBefore(2, ts -> { }); // 1 is already aborted by T_max
        running.finish(5);
        assertEquals(4, running.live());
        assertEquals(List.of(3L), collect(s -> running.finishAllOf(7, s)));
        assertEquals(2, running.live(), "1 (aborted by T_max, still running) and 3 are gone");
        assertEquals(RunningTransactions.NOT_FOUND, running.stateOf(1));
        assertEquals(RunningTransactions.NOT_FOUND, running.stateOf(3));
        assertEquals(RunningTransactions.RUNNING, running.stateOf(2));
        assertEquals(RunningTransactions.RUNNING, running.stateOf(4));
        assertEquals(2, running.oldest(0));
        assertEquals(List.of(2L, 4L), collect(s -> running.finishAllOf(8, s)));
        assertEquals(0, running.live());
        assertEquals(List.of(), collect(s -> running.finishAllOf(9, s)));
        assertEquals(0, running.live());
    }

    /**
     * The connections of one identity share its cap: what one connection holds counts against the others, and a lost
     * connection's transactions (finished all at once) give their places back to the identity.
     */
    @Test
    void theOwnersOfOneIdentityShareItsCapAndALostOwnerGivesItsPlacesBack() {
        RunningTransactions running = new RunningTransactions(16, 8, 3);
        running.identify(1, 77);
        running.identify(2, 77);
        running.identify(3, 78);
        running.add(10, 1);
        running.add(11, 1);
        running.add(12, 2);
        assertTrue(running.identityAtLimit(1) && running.identityAtLimit(2), "3 of 3 held by the identity");
        assertThrows(IllegalStateException.class, () -> running.add(13, 2));
        assertFalse(running.identityAtLimit(3), "another identity is not held back");
        running.add(14, 3);
        running.finishAllOf(1, ts -> { });
        running.forgetOwner(1);
        assertEquals(1, running.liveOfIdentityOf(2), "the lost owner's two places are free again");
        running.add(15, 2);
        running.finish(12);
        assertEquals(1, running.liveOfIdentityOf(2));
        assertEquals(-1, running.liveOfIdentityOf(1), "a forgotten owner counts for no identity");
    }

    @Test
    void finishAllOfGivesTheDeadOwnersPlacesBack() {
        RunningTransactions running = new RunningTransactions(3);
        running.add(1, 1);
        running.add(2, 2);
        running.add(3, 1);
        assertTrue(running.isFull());
        running.finishAllOf(1, ts -> { });
        assertEquals(1, running.live());
        assertFalse(running.isFull());
        assertEquals(2, running.oldest(0));
        running.add(4, 3);
        running.add(5, 3);
        assertTrue(running.isFull());
        assertThrows(IllegalStateException.class, () -> running.add(6, 3));
        running.finishAllOf(2, ts -> { });
        assertEquals(2, running.live());
        assertEquals(4, running.oldest(0));
        running.add(6, 3);
        assertEquals(List.of(4L, 5L, 6L), collect(s -> running.finishAllOf(3, s)));
        assertEquals(0, running.live());
    }

    @Test
    void capacityIsTheRunningLimitAndExactlyThatManyFit() {
        for (int limit : new int[] {1, 2, 3, 5, 8, 64, 100}) {
            RunningTransactions running = new RunningTransactions(limit);
            assertEquals(limit, running.capacity());
            long ts = 0;
            while (!running.isFull()) {
                running.add(++ts, 1);
            }
            assertEquals(limit, ts, "limit " + limit);
            assertEquals(limit, running.live());
            long next = ts + 1;
            assertThrows(IllegalStateException.class, () -> running.add(next, 1), "limit " + limit);
        }
    }

    /**
     * Randomized against a sorted map: finishes in random order (rarely the oldest, so finished entries pile up
     * between it and the newest and the ring must compact again and again), refused adds at the limit, T_max advances
     * and dead owners.
     */
    @ParameterizedTest(name = "limit {0}, {2} per owner, seed {1}")
    @CsvSource({"1, 1, 1", "2, 2, 2", "3, 3, 3", "4, 4, 4", "5, 5, 5", "7, 6, 7", "16, 7, 16", "16, 8, 16",
            "40, 9, 40", "2, 10, 1", "5, 11, 2", "16, 12, 8", "40, 13, 20", "40, 14, 39"})
    void behavesLikeASortedMapThroughManyCompactions(int limit, long seed, int perOwner) {
        Random random = new Random(seed);
        RunningTransactions running = new RunningTransactions(limit, perOwner);
        TreeMap<Long, long[]> model = new TreeMap<>(); // ts -> {state, owner, add sequence number}
        long ts = 0;
        long tMax = 0;
        long adds = 0;
        int refused = 0;
        int addsOnlyCompactionMadeRoomFor = 0;
        for (int step = 0; step < 60_000; step++) {
            int op = random.nextInt(10);
            if (op < 4) {
                long next = ++ts; // refused begins leave gaps, which lookups then miss
                int owner = random.nextInt(3);
                if (model.size() >= limit) {
                    assertTrue(running.isFull());
                    assertThrows(IllegalStateException.class, () -> running.add(next, 0));
                    refused++;
                } else if (countOf(model, owner) >= perOwner) {
                    assertTrue(running.ownerAtLimit(owner), "owner " + owner + " holds " + countOf(model, owner));
                    assertThrows(IllegalStateException.class, () -> running.add(next, owner));
                    refused++;
                } else {
                    assertFalse(running.isFull());
                    assertFalse(running.ownerAtLimit(owner));
                    running.add(next, owner);
                    adds++;
                    if (!model.isEmpty() && adds - model.firstEntry().getValue()[2] > 4L * limit) {
                        // More adds since the oldest running one than the ring (2x the limit, rounded up to a power
                        // of two, so below 4x) has slots: without compaction this one could not have fitted.
                        addsOnlyCompactionMadeRoomFor++;
                    }
                    model.put(next, new long[] {RunningTransactions.RUNNING, owner, adds});
                }
            } else if (op < 7) {
                long pick;
                if (model.size() > 1 && random.nextInt(40) != 0) {
                    pick = pickYounger(random, model);      // leaves a finished entry in the middle
                } else {
                    pick = pick(random, model, ts);
                }
                long[] expected = model.remove(pick);
                assertEquals(expected == null ? RunningTransactions.NOT_FOUND : expected[0], running.finish(pick),
                        "finish(" + pick + ")");
            } else if (op == 7) {
                tMax = Math.max(tMax, ts - random.nextInt(3 * limit + 3));
                List<Long> expected = new ArrayList<>();
                for (var e : model.headMap(tMax, false).entrySet()) {
                    if (e.getValue()[0] == RunningTransactions.RUNNING) {
                        e.getValue()[0] = RunningTransactions.ABORTED_BY_TMAX;
                        expected.add(e.getKey());
                    }
                }
                long bound = tMax;
                assertEquals(expected, collect(s -> running.abortStartedBefore(bound, s)), "T_max " + bound);
            } else if (op == 8 && random.nextInt(40) == 0) {
                // transaction.max.age.ms expiring the oldest ones
                long upTo = model.isEmpty() ? ts : model.firstKey() + random.nextInt(2 * limit + 1);
                List<Long> expected = new ArrayList<>();
                var it = model.headMap(upTo, true).entrySet().iterator();
                while (it.hasNext()) {
                    var e = it.next();
                    if (e.getValue()[0] == RunningTransactions.RUNNING) {
                        expected.add(e.getKey());
                    }
                    it.remove();
                }
                assertEquals(expected, collect(s -> running.finishStartedUpTo(upTo, s)), "up to " + upTo);
            } else if (op == 8 && random.nextInt(20) == 0) {
                int owner = random.nextInt(3);
                List<Long> expected = new ArrayList<>();
                var it = model.entrySet().iterator();
                while (it.hasNext()) {
                    var e = it.next();
                    if (e.getValue()[1] == owner) {
                        if (e.getValue()[0] == RunningTransactions.RUNNING) {
                            expected.add(e.getKey());
                        }
                        it.remove();
                    }
                }
                assertEquals(expected, collect(s -> running.finishAllOf(owner, s)), "owner " + owner);
            } else {
                long pick = pick(random, model, ts);
                long[] expected = model.get(pick);
                assertEquals(expected == null ? RunningTransactions.NOT_FOUND : expected[0], running.stateOf(pick));
            }
            assertEquals(model.isEmpty() ? -1 : model.firstKey(), running.oldest(-1), "step " + step);
            assertEquals(model.size(), running.live(), "step " + step);
            assertEquals(model.size() >= limit, running.isFull(), "step " + step);
            for (int o = 0; o < 3; o++) {
                assertEquals(countOf(model, o), running.liveOf(o), "step " + step + ": owner " + o);
                assertEquals(perOwner < limit && countOf(model, o) >= perOwner, running.ownerAtLimit(o),
                        "step " + step + ": owner " + o);
            }
            if (step % 100 == 0 && !model.isEmpty()) {
                for (long t = model.firstKey() - 1; t <= ts + 1; t++) {
                    long[] expected = model.get(t);
                    assertEquals(expected == null ? RunningTransactions.NOT_FOUND : expected[0], running.stateOf(t),
                            "step " + step + ": stateOf(" + t + ")");
                }
            }
        }
        assertTrue(refused > 1000, "the limit was rarely reached: " + refused);
        if (limit > 2 || limit == perOwner && limit > 1) { // with one slot nothing can finish in the middle
            assertTrue(addsOnlyCompactionMadeRoomFor > 150,
                    "too few adds needed compaction: " + addsOnlyCompactionMadeRoomFor);
        }
    }

    private static int countOf(TreeMap<Long, long[]> model, int owner) {
        int n = 0;
        for (long[] v : model.values()) {
            n += v[1] == owner ? 1 : 0;
        }
        return n;
    }

    /** A running transaction other than the oldest. */
    private static long pickYounger(Random random, TreeMap<Long, long[]> model) {
        long first = model.firstKey();
        long last = model.lastKey();
        return model.ceilingKey(first + 1 + (long) random.nextInt((int) (last - first)));
    }

    private static long pick(Random random, TreeMap<Long, long[]> model, long ts) {
        if (model.isEmpty() || random.nextInt(5) == 0) {
            return 1 + random.nextInt((int) Math.max(1, ts + 2));
        }
        Long k = model.ceilingKey(model.firstKey() + random.nextInt((int) (model.lastKey() - model.firstKey() + 1)));
        return k;
    }
}
