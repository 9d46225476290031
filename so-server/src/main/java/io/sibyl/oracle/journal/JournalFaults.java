package io.sibyl.oracle.journal;

import java.util.function.LongConsumer;
import java.util.function.UnaryOperator;

/**
 * Faults a test injects into a journal when it opens one ({@code BookKeeperJournal.open(..., faults)}): ledger
 * deletions that never happen, as after a crash between drop and delete, or that fail, as in a ZooKeeper hiccup.
 * Production journals open with {@link #NONE}.
 *
 * @param dropWithoutDelete told of each ledger dropped from the registry instead of deleting it; null: delete it
 * @param deleteAttempts    wraps the real single delete attempt (given to it) with the one the journal uses
 */
record JournalFaults(LongConsumer dropWithoutDelete, UnaryOperator<LedgerRetention.DeleteAttempt> deleteAttempts) {
    static final JournalFaults NONE = new JournalFaults(null, UnaryOperator.identity());

    /** Dropped ledgers are left in BookKeeper (orphans) and handed to {@code instead}. */
    static JournalFaults leaveDroppedLedgers(LongConsumer instead) {
        return new JournalFaults(instead, UnaryOperator.identity());
    }

    /** Each attempt to delete a dropped ledger goes through {@code wrap}, which gets the real attempt. */
    static JournalFaults deleteAttempts(UnaryOperator<LedgerRetention.DeleteAttempt> wrap) {
        return new JournalFaults(null, wrap);
    }
}
