package io.sibyl.client;

/**
 * What a transaction may do, and so which way it ends. Each kind has its own path through {@link TransactionPhase}
 * and its own {@link SnapshotView}; a kind that takes no writes refuses them before any phase changes.
 */
enum TransactionKind {
    /** Begun at the oracle ({@link TransactionManager#begin()}), reads and writes any rows, commits at the oracle. */
    READ_WRITE(true),
    /**
     * Begun from the local replica without a round trip ({@link TransactionManager#beginReadOnly()}): a snapshot
     * within the staleness bound, no writes; it ends without the oracle.
     */
    READ_ONLY(false),
    /**
     * One row read as of now ({@link TTable#getLatest}): sees every commit acknowledged before the read began, asking
     * the oracle only about versions whose writers the replica cannot place; no writes, ends without the oracle.
     */
    LATEST_ROW(false),
    /**
     * Reads the database as it was at a timestamp or time of the past ({@link TransactionManager#beginAt}), at a point
     * the oracle kept; no writes, ends without the oracle.
     */
    PAST(false);

    private final boolean writes;

    TransactionKind(boolean writes) {
        this.writes = writes;
    }

    /** True if transactions of this kind may write. */
    boolean writes() {
        return writes;
    }
}
