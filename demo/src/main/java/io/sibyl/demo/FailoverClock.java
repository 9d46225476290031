package io.sibyl.demo;

import java.util.concurrent.atomic.AtomicLong;

/**
 * The commit gap around the kill of the leading oracle, from the completion times of commits (System.nanoTime).
 * Two "first commit after the kill" times are kept: any commit acknowledged after it (a reply already on its way
 * from the dying leader could count), and the first commit of a transaction that began after the kill, which
 * only the new leader can have served.
 */
public final class FailoverClock {
    private static final long UNSET = Long.MIN_VALUE;

    private volatile long killNanos = UNSET;
    private final AtomicLong lastBefore = new AtomicLong(UNSET);
    private final AtomicLong firstAfter = new AtomicLong(Long.MAX_VALUE);
    private final AtomicLong firstBegunAfter = new AtomicLong(Long.MAX_VALUE);

    /** Notes the moment the kill signal is sent. */
    public void killed(long nanos) {
        killNanos = nanos;
    }

    /** Whether {@link #killed} was called. */
    public boolean wasKilled() {
        return killNanos != UNSET;
    }

    /** Records a commit of a transaction that began at {@code began} and was acknowledged at {@code done}. */
    public void committed(long began, long done) {
        long kill = killNanos;
        if (kill == UNSET || done < kill) {
            lastBefore.accumulateAndGet(done, Math::max);
            return;
        }
        firstAfter.accumulateAndGet(done, Math::min);
        if (began > kill) {
            firstBegunAfter.accumulateAndGet(done, Math::min);
        }
    }

    /** Milliseconds from the kill to the first commit acknowledged after it; negative if there was none. */
    public double killToFirstCommitMs() {
        return since(killNanos, firstAfter.get());
    }

    /** Milliseconds from the kill to the first commit of a transaction begun after it; negative if none. */
    public double killToFirstNewCommitMs() {
        return since(killNanos, firstBegunAfter.get());
    }

    /** Milliseconds without any commit: the last one before the kill to the first one after it; negative if none. */
    public double commitGapMs() {
        return since(lastBefore.get(), firstAfter.get());
    }

    private double since(long from, long to) {
        if (killNanos == UNSET || from == UNSET || to == Long.MAX_VALUE) {
            return -1;
        }
        return (to - from) / 1e6;
    }
}
