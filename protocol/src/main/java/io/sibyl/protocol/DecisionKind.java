package io.sibyl.protocol;

/** Kinds of record in a decision block (the journal entry that is also the replication delta). */
public enum DecisionKind {
    /** A transaction committed: start and commit timestamps. */
    COMMIT,
    /** A transaction is aborted: its writes must be ignored by every reader. */
    ABORT,
    /** An aborted transaction was cleaned up and every older reader finished: forget it. */
    FORGET,
    /** T_max rose: commit timestamps at or below it may be forgotten. */
    T_MAX,
    /** Timestamps up to this value may have been handed out (durable reservation). */
    RESERVE;

    private static final DecisionKind[] VALUES = values();

    static DecisionKind of(int code) {
        if (code >= VALUES.length) {
            throw new ProtocolException("unknown decision record kind " + code);
        }
        return VALUES[code];
    }
}
