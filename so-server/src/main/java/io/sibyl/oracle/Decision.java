package io.sibyl.oracle;

import io.sibyl.protocol.Wire;

/**
 * What {@link OracleState#begin} and {@link OracleState#commit} decide instead of a timestamp. They return a
 * {@code long}, a timestamp when positive and {@link #code} otherwise, so that no decision allocates on the sequencer's
 * path; {@link #of} turns a code back into its meaning, in one place, for those who act on it.
 */
enum Decision {
    /** Commit: the write set conflicts with a transaction that committed after it started. */
    CONFLICT(-Wire.ABORT_CONFLICT),
    /** Commit: T_max passed the transaction (its conflicts can no longer be checked). */
    TOO_OLD(-Wire.ABORT_TOO_OLD),
    /** Commit: the transaction was already aborted (by its client or on disconnect). */
    ALREADY_ABORTED(-Wire.ABORT_ALREADY_ABORTED),
    /** Commit: a row or range the transaction read was committed by another after it began (serializable only). */
    READ_CONFLICT(-Wire.ABORT_READ_CONFLICT),
    /** Commit: the start timestamp is of no transaction the oracle knows. */
    UNKNOWN(-100),
    /** Begin: {@code max.running.transactions} are running. */
    OVERLOADED(-101),
    /** Begin: the connection holds {@code max.running.transactions.per.connection}; others are not refused. */
    OWNER_OVERLOADED(-102),
    /**
     * Begin: {@code max.aborted.transactions} wait for their clean-up: each is in every replica and every HELLO, so
     * the set is bounded; the sweep frees it.
     */
    ABORTED_SET_FULL(-103),
    /** Begin: the connections of one identity hold {@code max.running.transactions.per.identity} together. */
    IDENTITY_OVERLOADED(-104);

    /** {@link #values()} copies its array on every call; {@link #of} must not allocate. */
    private static final Decision[] ALL = values();

    /** The negative {@code long} that stands for this decision. */
    final long code;

    Decision(long code) {
        this.code = code;
    }

    /** The decision {@code code} stands for: an abort code (-1 to -4) or a refusal (-100 to -104). */
    static Decision of(long code) {
        for (Decision d : ALL) {
            if (d.code == code) {
                return d;
            }
        }
        throw new IllegalArgumentException("no decision has the code " + code);
    }

    /** For an abort, the {@code Wire.ABORT_*} reason its client is told; -1 for a refusal. */
    int abortReason() {
        return code >= -Wire.ABORT_READ_CONFLICT ? (int) -code : -1;
    }
}
