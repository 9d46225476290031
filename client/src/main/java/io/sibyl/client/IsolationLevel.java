package io.sibyl.client;

/** How a transaction is isolated from concurrent ones; chosen at {@link TransactionManager#begin(IsolationLevel)}. */
public enum IsolationLevel {
    /**
     * Snapshot isolation (the default): reads see the snapshot at the start, and a commit fails only if another
     * transaction committed a write to one of the same rows since (write-write conflict). Allows write skew.
     */
    SNAPSHOT,
    /**
     * Serializable, by write-snapshot isolation (Yabandeh and Gomez Ferro, EuroSys 2012): as snapshot isolation, and
     * a transaction that writes also fails ({@link RollbackException.Reason#READ_CONFLICT}) if a row it read, or a
     * row inside a range it scanned, was committed by another transaction since it began. Read-only transactions are
     * never checked and never fail: they serialize at their snapshot. No extra round trip: the reads travel with the
     * commit.
     */
    SERIALIZABLE
}
