package io.sibyl.oracle;

import io.sibyl.oracle.journal.Checkpoint;

/**
 * Durable log of the oracle's decision blocks. The oracle sends no reply that depends on a block until the journal
 * calls that block's callback. Implementations call callbacks in append order, on any one thread at a time.
 */
public interface Journal extends AutoCloseable {
    /**
     * Appends {@code block} (an encoded decision block, or null for "no new decisions") and calls {@code onDurable}
     * once it and every block appended before it are durable. A null block is a barrier: its callback still waits
     * for earlier blocks.
     */
    void append(byte[] block, Runnable onDurable);

    /**
     * The caller promises to check {@link #wantsCheckpoint()} after each append and to answer with
     * {@link #appendCheckpoint}, from the thread that owns the state. Until then a journal that rolls over ledgers
     * does so without checkpoints (and cannot delete old ledgers).
     */
    default void checkpointsFollow() {
    }

    /** True when the journal wants a checkpoint of the state as of every block appended so far. */
    default boolean wantsCheckpoint() {
        return false;
    }

    /**
     * Journals {@code checkpoint}, which must be the state after exactly the blocks appended so far (the sequencer's
     * state right after it appended its last block). Journals without checkpoints ignore it.
     */
    default void appendCheckpoint(Checkpoint checkpoint) {
    }

    /** Blocks accepted so far (for monitoring). */
    long appendedBlocks();

    @Override
    void close();
}
