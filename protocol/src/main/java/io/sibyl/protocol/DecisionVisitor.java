package io.sibyl.protocol;

/** Receives the records of decision blocks in the order the oracle made the decisions. */
public interface DecisionVisitor {
    void onCommit(long startTs, long commitTs);

    void onAbort(long startTs);

    void onForget(long startTs);

    void onTmax(long tMax);

    /** Timestamps up to {@code limit} may have been handed out. Replicas ignore it; recovery needs it. */
    default void onReserve(long limit) {
    }

    /**
     * Every start timestamp in {@code (from, to]} that has no COMMIT record belongs to a transaction that was running
     * when the previous oracle stopped: it is aborted (an oracle that recovered from the journal writes this once, in
     * its first block; see {@link AbortedRange}). A visitor that keeps transaction state (a replica, journal replay)
     * must handle it; the default ignores it, which only counting visitors may do.
     */
    default void onAbortRange(long from, long to) {
    }

    /**
     * The aborted range {@code (from, to]} is forgotten (see {@link DecisionKind#FORGET_RANGE}): its writers that are
     * not aborted otherwise now follow the ordinary rules. A visitor that keeps the ranges must drop it; one that
     * does not know it ignores it.
     */
    default void onForgetRange(long from, long to) {
    }

    /** Called after the last record of each block. */
    default void onBlockEnd() {
    }
}
