package io.sibyl.client;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertSame;

/** The executor HBase's single-server batches get runs them on the calling thread, and bounds how deep they nest. */
class CallingThreadExecutorTest {
    @Test
    void aTaskRunsOnTheThreadThatHandsItOverBeforeExecuteReturns() {
        CallingThreadExecutor executor = new CallingThreadExecutor(task -> {
            throw new AssertionError("handed to the fallback");
        });
        List<Thread> ranOn = new ArrayList<>();
        executor.execute(() -> ranOn.add(Thread.currentThread()));
        assertEquals(1, ranOn.size(), "ran before execute returned");
        assertSame(Thread.currentThread(), ranOn.get(0));
        executor.shutdown();
        assertFalse(executor.isShutdown(), "shared by every table: a table closing its pool must not stop it");
    }

    @Test
    void retriesNestedPastTheLimitGoToTheFallback() {
        List<Runnable> handedToFallback = new ArrayList<>();
        Executor fallback = handedToFallback::add;
        CallingThreadExecutor executor = new CallingThreadExecutor(fallback);
        int[] deepest = {0};
        nest(executor, 1, 20, deepest);
        assertEquals(CallingThreadExecutor.MAX_NESTED, deepest[0], "levels run on the calling thread");
        assertEquals(1, handedToFallback.size(), "the first level past the limit, with what it would nest");

        int[] again = {0};
        nest(executor, 1, 3, again); // the count unwound: a later batch runs on the calling thread again
        assertEquals(3, again[0]);
        assertEquals(1, handedToFallback.size());
    }

    /** Like HBase resubmitting a call from within the call: level {@code level} hands over the next. */
    private static void nest(CallingThreadExecutor executor, int level, int levels, int[] deepest) {
        executor.execute(() -> {
            deepest[0] = Math.max(deepest[0], level);
            if (level < levels) {
                nest(executor, level + 1, levels, deepest);
            }
        });
    }
}
