package io.sibyl.oracle.journal;

/**
 * How long the journal's writes have failed without progress, and how long to pause before the next rollover.
 * Guarded by the journal lock.
 *
 * <p>The clock starts at the first failed add or rollover and is reset only when the oldest undelivered entry is
 * acknowledged (or a new ledger is ready with nothing left to write): an entry that no ledger accepts must not be
 * excused by the entries behind it. Past {@code journal.write.retry.ms} the error is fatal.
 */
final class WriteProgress {
    /** Pause before the rollover after the second write failure in a row; doubles with each, up to the max. */
    static final long ROLLOVER_FIRST_PAUSE_MS = 50;
    static final long ROLLOVER_MAX_PAUSE_MS = 1000;

    private long failingSinceNanos = -1;
    /** Ledgers broken by a write failure since the oldest undelivered entry last progressed. */
    private int failuresInARow;

    void failing() {
        if (failingSinceNanos < 0) {
            failingSinceNanos = System.nanoTime();
        }
    }

    void progressed() {
        failingSinceNanos = -1;
        failuresInARow = 0;
    }

    /** How long writes have failed without progress, or -1 when they are not failing. */
    long failingForMs() {
        return failingSinceNanos < 0 ? -1 : (System.nanoTime() - failingSinceNanos) / 1_000_000;
    }

    /**
     * Counts a ledger lost to a write failure and says how long to wait before the next one: the first failure (a
     * lost bookie) rolls over at once; repeated ones are paced, so a journal whose adds fail on every ledger does not
     * create and register hundreds of ledgers before its deadline.
     */
    long nextRolloverPauseMs() {
        failuresInARow++;
        return failuresInARow < 2 ? 0
                : Math.min(ROLLOVER_MAX_PAUSE_MS, ROLLOVER_FIRST_PAUSE_MS << Math.min(10, failuresInARow - 2));
    }
}
