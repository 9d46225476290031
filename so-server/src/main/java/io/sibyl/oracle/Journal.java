package io.sibyl.oracle;

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

    /** Blocks accepted so far (for monitoring). */
    long appendedBlocks();

    @Override
    void close();
}
