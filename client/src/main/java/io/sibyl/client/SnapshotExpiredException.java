package io.sibyl.client;

import java.io.IOException;

/**
 * A read in a transaction whose oracle connection was lost, which can no longer be answered from its snapshot:
 * garbage collection may have stopped sparing the snapshot (what HBase returned might lack versions it needs), or a
 * writer's commit cannot be placed before or after it any more. Roll the transaction back and run it again
 * ({@link TransactionManager#run} does so on its own).
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

    /** The snapshot cannot be read for {@code reason} (after its oracle connection was lost). */
    public SnapshotExpiredException(Transaction transaction, String reason) {
        super("transaction " + transaction.getStartTimestamp() + " cannot read any more: " + reason
                + "; roll it back and run it again");
        this.transaction = transaction;
    }

    /** The transaction that could not read. */
    public Transaction getTransaction() {
        return transaction;
    }
}
