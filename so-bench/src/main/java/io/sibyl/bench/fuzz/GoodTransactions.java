package io.sibyl.bench.fuzz;

import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The good clients' transactions as others see them: the attackers aim foreign requests at the newest ones, and the
 * sweeper leaves alone those a good client has not finished with (it cleans up its own aborted ones).
 */
final class GoodTransactions {
    private static final int RECENT = 64;

    private final AtomicLongArray recent = new AtomicLongArray(RECENT);
    private final AtomicLong begun = new AtomicLong();
    private final Set<Long> unfinished = ConcurrentHashMap.newKeySet();

    void begun(long startTs) {
        unfinished.add(startTs);
        recent.set((int) (begun.getAndIncrement() % RECENT), startTs);
    }

    /** The good client is done with the transaction: committed, or aborted and cleaned up. */
    void finished(long startTs) {
        unfinished.remove(startTs);
    }

    boolean isUnfinished(long startTs) {
        return unfinished.contains(startTs);
    }

    /** A good transaction's start timestamp, most often the newest (likely still running); 0 before the first. */
    long pick(Random rnd) {
        long newest = begun.get() - 1;
        if (newest < 0) {
            return 0;
        }
        long i = rnd.nextInt(4) == 0 ? Math.max(0, newest - rnd.nextInt(RECENT)) : newest;
        return recent.get((int) (i % RECENT));
    }
}
