package io.sibyl.oracle.journal;

import java.util.concurrent.atomic.LongAdder;

/**
 * The journal's counters. Each part counts what it does; they are read without the journal lock, so monitoring
 * never waits behind an append.
 */
final class JournalStatistics {
    final LongAdder appendedBlocks = new LongAdder();
    final LongAdder appendedBytes = new LongAdder();
    /** Entries sealed: with group commit, fewer than blocks. */
    final LongAdder sealedEntries = new LongAdder();
    final LongAdder ackedEntries = new LongAdder();
    final LongAdder ackedBytes = new LongAdder();
    /** Entries sent again after their ledger failed. */
    final LongAdder resentEntries = new LongAdder();
    final LongAdder ledgersCreated = new LongAdder();
    /** Appends ignored because the journal was closed or had failed. */
    final LongAdder droppedAppends = new LongAdder();
    final LongAdder checkpointsAppended = new LongAdder();
    final LongAdder ledgersDropped = new LongAdder();
    final LongAdder ledgersDeleted = new LongAdder();
    final LongAdder ledgersSwept = new LongAdder();

    /** The counters with the pipeline's gauges (read by the caller under the journal lock). */
    BookKeeperJournal.Stats snapshot(int addsInFlight, int undeliveredEntries, long pendingBytes) {
        return new BookKeeperJournal.Stats(appendedBlocks.sum(), appendedBytes.sum(), sealedEntries.sum(),
                ackedEntries.sum(), ackedBytes.sum(), resentEntries.sum(), ledgersCreated.sum(), addsInFlight,
                undeliveredEntries, pendingBytes, droppedAppends.sum());
    }

    BookKeeperJournal.Retention retention() {
        return new BookKeeperJournal.Retention(checkpointsAppended.sum(), ledgersDropped.sum(), ledgersDeleted.sum(),
                ledgersSwept.sum());
    }
}
