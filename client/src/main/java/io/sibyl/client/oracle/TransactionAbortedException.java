package io.sibyl.client.oracle;

/** The oracle refused to commit a transaction; {@link #reason()} says why. Carries no stack trace (it is routine). */
public final class TransactionAbortedException extends Exception {
    private static final long serialVersionUID = 1L;

    /** Why a commit was refused. */
    public enum Reason {
        /** Another transaction that overlapped in time committed a write to the same row first. */
        CONFLICT,
        /** T_max passed the transaction's start timestamp: the oracle can no longer check its conflicts. */
        TOO_OLD,
        /** The transaction had already been aborted (by its client, or when its connection was lost). */
        ALREADY_ABORTED,
        /** A row or range the serializable transaction read was committed by another since it began. */
        READ_CONFLICT
    }

    private final long startTimestamp;
    private final Reason reason;

    public TransactionAbortedException(long startTimestamp, Reason reason) {
        super("transaction " + startTimestamp + " aborted: " + describe(reason), null, false, false);
        this.startTimestamp = startTimestamp;
        this.reason = reason;
    }

    private static String describe(Reason reason) {
        return switch (reason) {
            case CONFLICT -> "write-write conflict with a transaction that committed first; retry it";
            case TOO_OLD -> "it ran so long that the oracle forgot the conflicts it needs to check; retry it";
            case ALREADY_ABORTED -> "it was already aborted";
            case READ_CONFLICT -> "a row or range it read was committed by another transaction since it began, so"
                    + " committing it would not be serializable; retry it";
        };
    }

    public long startTimestamp() {
        return startTimestamp;
    }

    public Reason reason() {
        return reason;
    }
}
