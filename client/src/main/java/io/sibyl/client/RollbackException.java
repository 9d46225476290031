package io.sibyl.client;

/**
 * The transaction was rolled back instead of committed: its writes were discarded (and its versions deleted from
 * HBase as far as possible). {@link #getReason()} says why and {@link #isRetryable()} whether running it again can
 * succeed; {@link TransactionManager#run} retries such transactions on its own.
 */
public class RollbackException extends Exception {
    private static final long serialVersionUID = 1L;

    /** Why a transaction was rolled back. */
    public enum Reason {
        /** Write-write conflict: a concurrent transaction committed a write to one of the same rows first. */
        CONFLICT,
        /** The transaction ran so long that the oracle can no longer check its conflicts (T_max passed it). */
        TOO_OLD,
        /** The oracle had already aborted the transaction, or refused its commit request (see the message). */
        ABORTED_BY_ORACLE,
        /**
         * The connection to the oracle was lost (a crash, a failover, a network failure) before the commit was
         * decided, and the oracle aborted the transaction. Retryable: the client reconnects on its own.
         */
        ORACLE_FAILOVER,
        /** Writing the transaction's buffered mutations to HBase failed (see the cause). */
        WRITE_FAILED,
        /**
         * Serializable only: a row the transaction read, or a row in a range it scanned, was committed by another
         * transaction since it began, so committing would not be serializable. Retryable.
         */
        READ_CONFLICT
    }

    private final transient Transaction transaction;
    private final Reason reason;
    private final String detail;

    /** {@code transaction} was rolled back for {@code reason}; {@code message} says what happened and what to do. */
    public RollbackException(Transaction transaction, Reason reason, String message, Throwable cause) {
        super("transaction " + transaction.getStartTimestamp() + " rolled back (" + reason + "): " + message, cause);
        this.transaction = transaction;
        this.reason = reason;
        this.detail = message;
    }

    /**
     * The same rollback, saying that {@link TransactionManager#run} gave up on it after {@code attempts} attempts, so
     * that a conflict it did retry does not read like one it did not.
     */
    RollbackException afterAttempts(int attempts, String setting) {
        RollbackException e = new RollbackException(transaction, reason, detail + "; run gave up after " + attempts
                + (attempts == 1 ? " attempt" : " attempts") + " (" + setting + ")", getCause());
        e.setStackTrace(getStackTrace());
        return e;
    }

    /** The transaction that was rolled back; its status is {@link Transaction.Status#ROLLED_BACK}. */
    public Transaction getTransaction() {
        return transaction;
    }

    /** Why the transaction was rolled back. */
    public Reason getReason() {
        return reason;
    }

    /** True if the same work, run again in a new transaction, may well succeed (conflicts, too old, failover). */
    public boolean isRetryable() {
        return reason == Reason.CONFLICT || reason == Reason.TOO_OLD || reason == Reason.ORACLE_FAILOVER
                || reason == Reason.READ_CONFLICT;
    }
}
