package io.sibyl.oracle;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The uncommitted list: start-ordered ring, low watermark, T_max aborts, eviction and dead owners. */
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
        assertEquals(RunningTransactions.RUNNING, running.finish(2));
        assertEquals(RunningTransactions.NOT_FOUND, running.finish(2), "finishing twice finds nothing");
        assertEquals(RunningTransactions.NOT_FOUND, running.finish(99), "never started");
        assertEquals(List.of(1L, 3L), collect(s -> running.abortStartedBefore(4, s)));
        assertEquals(RunningTransactions.ABORTED_BY_TMAX, running.stateOf(3));
        assertEquals(RunningTransactions.ABORTED_BY_TMAX, running.finish(3));
        assertEquals(RunningTransactions.NOT_FOUND, running.stateOf(3));
        assertEquals(RunningTransactions.RUNNING, running.stateOf(4));
        assertEquals(RunningTransactions.ABORTED_BY_TMAX, running.finish(1));
        assertEquals(RunningTransactions.RUNNING, running.finish(4));
        assertEquals(0, running.occupied());
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
        assertEquals(5, running.occupied(), "a finished slot in the middle is held until the head passes it");
        running.finish(10);
        assertEquals(11, running.oldest(0));
        running.finish(11);
        assertEquals(13, running.oldest(0), "the head skips every finished slot");
        assertEquals(2, running.occupied());
        running.finish(14);
        running.finish(13);
        assertEquals(99, running.oldest(99));
    }

    @Test
    void transactionAbortedByTmaxStillHoldsTheLowWatermarkUntilItsClientFinishes() {
        RunningTransactions running = new RunningTransactions(16);
        running.add(5, 1);
        running.add(6, 1);
        assertEquals(List.of(5L, 6L), collect(s -> running.abortStartedBefore(100, s)));
        assertEquals(5, running.oldest(0));
        running.finish(5);
        assertEquals(6, running.oldest(0));
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

    @Test
    void evictOldestRemovesTheHeadAndReportsItOnlyIfItCouldStillCommit() {
        RunningTransactions running = new RunningTransactions(4);
        assertEquals(4, running.capacity());
        for (long ts = 1; ts <= 4; ts++) {
            running.add(ts, 1);
        }
        assertTrue(running.isFull());
        assertThrows(IllegalStateException.class, () -> running.add(5, 1));
        assertEquals(List.of(1L), collect(s -> assertEquals(1, running.evictOldest(s))));
        assertEquals(RunningTransactions.NOT_FOUND, running.stateOf(1));
        assertEquals(2, running.oldest(0));
        running.add(5, 1);
        running.abortStartedBefore(3, ts -> { });
        assertEquals(List.of(), collect(s -> assertEquals(2, running.evictOldest(s))),
                "already aborted by T_max: nothing new to report");
        running.finish(4);
        running.add(6, 1);
        assertEquals(List.of(3L), collect(s -> assertEquals(3, running.evictOldest(s))));
        assertEquals(5, running.oldest(0), "the finished slot of 4 is skipped with the head");
        assertEquals(2, running.occupied());
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
        assertEquals(List.of(3L), collect(s -> running.finishAllOf(7, s)));
        assertEquals(RunningTransactions.NOT_FOUND, running.stateOf(1));
        assertEquals(RunningTransactions.NOT_FOUND, running.stateOf(3));
        assertEquals(RunningTransactions.RUNNING, running.stateOf(2));
        assertEquals(RunningTransactions.RUNNING, running.stateOf(4));
        assertEquals(2, running.oldest(0));
        assertEquals(List.of(2L, 4L), collect(s -> running.finishAllOf(8, s)));
        assertEquals(0, running.occupied());
        assertEquals(List.of(), collect(s -> running.finishAllOf(9, s)));
    }

    @Test
    void capacityIsRoundedUpToAPowerOfTwo() {
        assertEquals(8, new RunningTransactions(5).capacity());
        assertEquals(2, new RunningTransactions(1).capacity());
        assertEquals(64, new RunningTransactions(64).capacity());
    }

    /** Randomized against a sorted map through many wrap-arounds of a small ring. */
    @Test
    void behavesLikeASortedMapThroughManyWrapArounds() {
        Random random = new Random(11);
        RunningTransactions running = new RunningTransactions(16);
        TreeMap<Long, int[]> model = new TreeMap<>(); // ts -> {state, owner}
        long ts = 0;
        long tMax = 0;
        for (int step = 0; step < 50_000; step++) {
            int op = random.nextInt(10);
            if (op < 4) {
                if (running.isFull()) {
                    long oldest = model.firstKey();
                    int state = model.remove(oldest)[0];
                    List<Long> reported = collect(s -> assertEquals(oldest, running.evictOldest(s)));
                    assertEquals(state == RunningTransactions.RUNNING ? List.of(oldest) : List.of(), reported);
                }
                int owner = random.nextInt(3);
                running.add(++ts, owner);
                model.put(ts, new int[] {RunningTransactions.RUNNING, owner});
            } else if (op < 7 && !model.isEmpty()) {
                long pick = pick(random, model, ts);
                int[] expected = model.remove(pick);
                assertEquals(expected == null ? RunningTransactions.NOT_FOUND : expected[0], running.finish(pick));
            } else if (op == 7) {
                tMax = Math.max(tMax, ts - random.nextInt(8));
                List<Long> expected = new ArrayList<>();
                for (var e : model.headMap(tMax, false).entrySet()) {
                    if (e.getValue()[0] == RunningTransactions.RUNNING) {
                        e.getValue()[0] = RunningTransactions.ABORTED_BY_TMAX;
                        expected.add(e.getKey());
                    }
                }
                long bound = tMax;
                assertEquals(expected, collect(s -> running.abortStartedBefore(bound, s)));
            } else if (op == 8 && random.nextInt(10) == 0) {
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
                assertEquals(expected, collect(s -> running.finishAllOf(owner, s)));
            } else {
                long pick = pick(random, model, ts);
                int[] expected = model.get(pick);
                assertEquals(expected == null ? RunningTransactions.NOT_FOUND : expected[0], running.stateOf(pick));
            }
            assertEquals(model.isEmpty() ? -1 : model.firstKey(), running.oldest(-1));
            assertTrue(running.occupied() >= model.size());
        }
    }

    private static long pick(Random random, TreeMap<Long, int[]> model, long ts) {
        if (model.isEmpty() || random.nextInt(5) == 0) {
            return 1 + random.nextInt((int) Math.max(1, ts + 2));
        }
        Long k = model.ceilingKey(model.firstKey() + random.nextInt((int) (model.lastKey() - model.firstKey() + 1)));
        return k;
    }
}
