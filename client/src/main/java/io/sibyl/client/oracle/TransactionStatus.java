package io.sibyl.client.oracle;

import io.sibyl.protocol.Wire;

/** The oracle's answer to a commit query about one start timestamp. */
public record TransactionStatus(State state, long commitTimestamp) {
    /** What the oracle knows of the transaction. */
    public enum State {
        /** Committed; {@code commitTimestamp} is set. */
        COMMITTED,
        /** Committed before the oracle's T_max; the commit timestamp is forgotten but lies at or below T_max. */
        COMMITTED_LONG_AGO,
        ABORTED,
        RUNNING,
        /** Never started, or finished without writing anything. */
        UNKNOWN
    }

    static TransactionStatus fromWire(byte code, long commitTs) {
        State s = switch (code) {
            case Wire.STATUS_COMMITTED -> State.COMMITTED;
            case Wire.STATUS_COMMITTED_LONG_AGO -> State.COMMITTED_LONG_AGO;
            case Wire.STATUS_ABORTED -> State.ABORTED;
            case Wire.STATUS_RUNNING -> State.RUNNING;
            default -> State.UNKNOWN;
        };
        return new TransactionStatus(s, commitTs);
    }

    public boolean isCommitted() {
        return state == State.COMMITTED || state == State.COMMITTED_LONG_AGO;
    }
}
