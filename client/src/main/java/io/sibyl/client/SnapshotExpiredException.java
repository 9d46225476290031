package io.sibyl.client;

import java.io.IOException;

/**
 * A read in a transaction whose oracle connection was lost, which can no longer be answered from its snapshot:
 * garbage collection may have stopped sparing the snapshot (what HBase returned might lack versions it needs), or a
 * writer's commit cannot be placed before or after it any more. Also thrown by a write that sends buffered puts and
 * deletes to HBase once the oracle was last heard from longer ago than the read window (half its
 * {@code reader.grace.ms}): the oracle has aborted the transaction, so its late versions could outlive the clean-up.
 * Roll the transaction back and run it again ({@link TransactionManager#run} does so on its own).
 */
public class SnapshotExpiredException extends IOException {
    private static final long serialVersionUID = 1L;

    private final transient Transaction transaction;

    /** The oracle was last heard from {@code millisSinceHeard} ago, longer than the read window allows. */
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

    private SnapshotExpiredException(String message, Transaction transaction) {
        super(message);
        this.transaction = transaction;
    }

    /**
     * A write of a transaction whose oracle connection was lost longer ago than the read window, or so nearly that
     * less than {@code floorMillis} of it was left: the oracle aborted the transaction when it noticed the loss, and
     * versions sent (or retried by HBase) later could land after the clean-up of aborted transactions (docs/gc.md,
     * "Aborted transactions of dead clients") and then read as committed.
     */
    static SnapshotExpiredException forWrite(Transaction transaction, long millisSinceHeard, long readWindowMillis,
                                             long floorMillis) {
        return new SnapshotExpiredException("transaction " + transaction.getStartTimestamp() + " cannot write any"
                + " more: its status oracle was last heard from " + millisSinceHeard + " ms ago, and writes stop "
                + readWindowMillis + " ms after that (half the oracle's reader.grace.ms; a batch is not sent with less"
                + " than " + floorMillis + " ms left, and HBase does not retry one past that time), since the oracle"
                + " aborts the transactions of a lost connection; roll it back and run it again", transaction);
    }

    /**
     * The transaction has run longer than its oracle's {@code transaction.max.age.ms}: the oracle aborts it then (a
     * leaked transaction must not hold garbage collection back for ever), so it may no longer read or write.
     */
    static SnapshotExpiredException tooOld(Transaction transaction, long maxAgeMillis) {
        return new SnapshotExpiredException("transaction " + transaction.getStartTimestamp() + " has run longer than"
                + " its status oracle's transaction.max.age.ms (" + maxAgeMillis + " ms), after which the oracle"
                + " aborts it: it can no longer read or write; roll it back and run it again in a shorter transaction"
                + " (or raise transaction.max.age.ms on the oracle)", transaction);
    }

    /** The transaction that could not read (or write). */
    public Transaction getTransaction() {
        return transaction;
    }
}
