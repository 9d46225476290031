package io.sibyl.oracle.journal;

import org.apache.bookkeeper.client.BookKeeper;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledExecutorService;

/**
 * What every part of one {@link BookKeeperJournal} shares: its clients, settings, the journal lock (which guards the
 * pipeline's queues and the roller's ledgers, since a failed add changes both at once), the journal thread that runs
 * the slow work outside that lock, the stop state and the counters.
 */
record JournalContext(BookKeeper bk, LedgerRegistry registry, JournalSettings settings, Object lock,
                      ScheduledExecutorService admin, JournalHalt halt, JournalStatistics stats) {
    /** Runs {@code task} on the journal thread; nothing runs once the journal is closed (its thread is shut down). */
    void onJournalThread(Runnable task) {
        try {
            admin.execute(task);
        } catch (RejectedExecutionException closed) {
            // the journal is closed: nothing left to do
        }
    }
}
