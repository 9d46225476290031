package io.sibyl.client;

import java.util.List;
import java.util.concurrent.AbstractExecutorService;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

/**
 * Runs each task on the thread that hands it over, at once. Given to HBase's batch for a batch that goes to one
 * region server: HBase hands the call for each server to its pool, first attempt included, and waits for the pool to
 * finish it, so a single-server batch costs two thread wake-ups more than the same call made by the waiting thread
 * itself (docs/architecture.md, "What is left of the round trips"). HBase's retries of a call are handed over from
 * within the call, so they nest; past {@link #MAX_NESTED} levels a task goes to the fallback executor, which starts a
 * fresh stack (HBase bounds its own reuse of the calling thread the same way). Never shut down: it holds no thread.
 */
final class CallingThreadExecutor extends AbstractExecutorService {
    /** Tasks nested on one thread at most before one is handed to the fallback. */
    static final int MAX_NESTED = 8;
    private static final ThreadLocal<int[]> NESTED = ThreadLocal.withInitial(() -> new int[1]);

    private final Executor fallback;

    CallingThreadExecutor(Executor fallback) {
        this.fallback = fallback;
    }

    @Override
    public void execute(Runnable task) {
        int[] nested = NESTED.get();
        if (nested[0] >= MAX_NESTED) {
            fallback.execute(task);
            return;
        }
        nested[0]++;
        try {
            task.run();
        } finally {
            nested[0]--;
        }
    }

    @Override
    public void shutdown() {
        // Shared and threadless: a table closing its pool must not stop it for the others.
    }

    @Override
    public List<Runnable> shutdownNow() {
        return List.of();
    }

    @Override
    public boolean isShutdown() {
        return false;
    }

    @Override
    public boolean isTerminated() {
        return false;
    }

    @Override
    public boolean awaitTermination(long timeout, TimeUnit unit) {
        return false;
    }
}
