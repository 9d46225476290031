package io.sibyl.client.oracle;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.params.provider.Arguments.arguments;

/**
 * {@link CommitWindow} against a plain map that removes every commit at or below each trim bound (what the replica's
 * hash map and trim queue did): random streams of commits in commit order with short, long and very long
 * transactions, bursts of begins without commits (sparse windows), timestamps off the oracle's step, duplicates,
 * and trim bounds that a long reader holds back; after every step every start ever committed is looked up.
 */
class CommitWindowTest {

    static Stream<org.junit.jupiter.params.provider.Arguments> shapes() {
        List<org.junit.jupiter.params.provider.Arguments> all = new ArrayList<>();
        for (long seed = 1; seed <= 6; seed++) {
            all.add(arguments(seed, 8, 4));             // tiny ring: far map, moves, rebases all the time
            all.add(arguments(seed, 64, 16));
            all.add(arguments(seed, CommitWindow.DEFAULT_MAX_DISTANCE, CommitWindow.DEFAULT_INITIAL_SLOTS));
        }
        return all.stream();
    }

    @ParameterizedTest(name = "seed {0}, max distance {1}, initial slots {2}")
    @MethodSource("shapes")
    void answersLikeAMapTrimmedAtEveryBound(long seed, int maxDistance, int initialSlots) {
        Random random = new Random(seed);
        CommitWindow window = new CommitWindow(maxDistance, initialSlots);
        Map<Long, Long> reference = new HashMap<>();
        List<Long> everStarted = new ArrayList<>();
        List<Long> running = new ArrayList<>();
        List<long[]> committed = new ArrayList<>(); // in commit order, for the trim bound
        long clock = 0;
        long tMax = 0;
        long heldBack = Long.MAX_VALUE; // a long local reader's start - 1
        int steps = 20_000;
        for (int step = 0; step < steps; step++) {
            int what = random.nextInt(100);
            if (what < 45 || running.isEmpty()) {
                clock += random.nextInt(50) == 0 ? 1 : 2; // now and then a timestamp off the step
                if (random.nextInt(200) == 0) {
                    clock += 2L * random.nextInt(5_000); // a burst of begins that never commit here
                }
                running.add(clock);
                everStarted.add(clock);
            } else if (what < 90) {
                // Mostly the oldest running ones commit; some are long, a few very long.
                int pick = random.nextInt(10) < 7 ? 0 : random.nextInt(running.size());
                long start = running.remove(pick);
                if (start < tMax) {
                    continue; // the oracle aborts what T_max passed
                }
                clock += 2;
                window.add(start, clock);
                reference.putIfAbsent(start, clock);
                committed.add(new long[] {start, clock});
                if (random.nextInt(30) == 0) {
                    window.add(start, clock); // a block delivered twice
                }
            } else if (what < 97) {
                // T_max moves to a commit some way back; a long reader may hold the trim bound.
                if (!committed.isEmpty()) {
                    int back = random.nextInt(Math.min(committed.size(), 1 + random.nextInt(300)));
                    long candidate = committed.get(committed.size() - 1 - back)[1];
                    tMax = Math.max(tMax, candidate);
                }
                if (random.nextInt(20) == 0) {
                    heldBack = random.nextBoolean() ? Long.MAX_VALUE : clock; // a reader registers or finishes
                }
                long bound = Math.min(tMax, heldBack);
                window.trimThrough(bound, tMax);
                reference.values().removeIf(c -> c <= bound);
            } else {
                window.shrinkIfSparse();
            }
            if (step % 97 == 0 || step == steps - 1) {
                for (long start : everStarted) {
                    assertEquals(reference.getOrDefault(start, 0L), window.commitOf(start),
                            "start " + start + " at step " + step);
                }
                assertEquals(reference.size(), window.size(), "held at step " + step);
            }
        }
        assertTrue(committed.size() > 2_500, committed.size() + " commits");
    }
}
