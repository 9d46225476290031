package io.sibyl.client;

import java.io.IOException;

/**
 * A read in a transaction whose oracle connection was lost, after garbage collection may have stopped sparing its
 * snapshot: what HBase returned might lack versions the snapshot needs, so it is not returned. Roll the transaction
 * back and run it again ({@link TransactionManager#run} does so on its own).
 */
public class SnapshotExpiredException extends IOException {
    private static final long serialVersionUID = 1L;

    private final transient Transaction transaction;

    public SnapshotExpiredException(Transaction transaction, long millisSinceHeard, long readWindowMillis) {
        super("transaction " + transaction.getStartTimestamp() + " cannot read any more: its status oracle was last"
                + " heard from " + millisSinceHeard + " ms ago, and a snapshot stays readable for " + readWindowMillis
                + " ms after that (half the oracle's reader.grace.ms) before garbage collection may remove versions"
                + " it reads; roll it back and run it again");
        this.transaction = transaction;
    }

    /** The transaction that could not read. */
    public Transaction getTransaction() {
        return transaction;
    }
}
