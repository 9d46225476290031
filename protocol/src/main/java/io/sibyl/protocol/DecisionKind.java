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
    RESERVE,
    /**
     * Written once by an oracle that recovered from the journal, in its first block: every start timestamp in
     * {@code (from, to]} that has no COMMIT record (before this one) belongs to a transaction that was running at the
     * crash, and is aborted. See {@link AbortedRange}.
     */
    ABORT_RANGE,
    /**
     * The aborted range {@code (from, to]} of an earlier recovery is forgotten: the versions its in-doubt transactions
     * left in the data store were deleted and every reader that started before that finished (protocol version 4).
     */
    FORGET_RANGE;

    private static final DecisionKind[] VALUES = values();

    static DecisionKind of(int code) {
        if (code >= VALUES.length) {
            throw new ProtocolException("unknown decision record kind " + code);
        }
        return VALUES[code];
    }
}
