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

    /** Called after the last record of each block. */
    default void onBlockEnd() {
    }
}
