package io.sibyl.client;

/**
 * The connection to the oracle was lost while a commit request was in flight, so the client cannot tell whether the
 * transaction committed. Its versions are left in place (deleting them could undo a committed transaction); readers
 * resolve them against the oracle as usual. The transaction can no longer be used. Re-read to find out what happened.
 */
public class CommitOutcomeUnknownException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final transient Transaction transaction;

    /** The commit of {@code transaction} was in flight when {@code cause} (the lost connection) happened. */
    public CommitOutcomeUnknownException(Transaction transaction, Throwable cause) {
        super("the outcome of the commit of transaction " + transaction.getStartTimestamp()
                + " is unknown: the connection to the oracle was lost while the request was in flight ("
                + cause.getMessage() + "); re-read the data to find out whether it committed", cause);
        this.transaction = transaction;
    }

    /** The transaction whose commit outcome is unknown; it can neither commit nor roll back any more. */
    public Transaction getTransaction() {
        return transaction;
    }
}
