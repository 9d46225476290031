package io.sibyl.oracle.journal;

import java.util.ArrayList;

/** One ledger entry of the journal: sealed blocks (or a checkpoint part) with the callbacks that wait for it. */
final class JournalEntry {
    final byte[] data;
    final int blocks;
    final ArrayList<Runnable> callbacks;
    /** Non-null for a checkpoint entry (its first part, for a checkpoint in several parts). */
    Checkpoint checkpoint;
    /** Where the current attempt was sent; null while the entry waits to be (re)sent. */
    JournalLedger ledger;
    int attempt;
    /** When the current attempt was sent. */
    long sentNanos;
    boolean acked;

    JournalEntry(byte[] data, int blocks, ArrayList<Runnable> callbacks) {
        this.data = data;
        this.blocks = blocks;
        this.callbacks = callbacks;
    }
}
