package io.sibyl.oracle;

/**
 * A journal that keeps nothing: every block is "durable" at once. For tests, benchmarks of the oracle itself and
 * deployments that accept losing decisions on a crash. The BookKeeper journal is the durable implementation.
 */
public final class InMemoryJournal implements Journal {
    private long blocks;
    private long bytes;

    @Override
    public void append(byte[] block, Runnable onDurable) {
        if (block != null) {
            blocks++;
            bytes += block.length;
        }
        onDurable.run();
    }

    @Override
    public long appendedBlocks() {
        return blocks;
    }

    /** Bytes of all blocks appended. */
    public long appendedBytes() {
        return bytes;
    }

    @Override
    public void close() {
    }
}
