package io.sibyl.client.oracle;

import io.sibyl.protocol.Timestamps;

import java.util.Arrays;

/**
 * Where a read of the past reads (the oracle's answer to a history query): the state at timestamp {@code bound}, given
 * as a point the oracle recorded (its clock {@code snapshotTs} and the transactions running then) and the transactions
 * that committed after the point, at or below the bound (docs/architecture.md, "Reads of the past").
 *
 * @param snapshotTs     the oracle's clock at the point
 * @param bound          the timestamp whose state is read ({@code >= snapshotTs})
 * @param running        start timestamps of the transactions running at the point, ascending
 * @param committedAfter start timestamps of the transactions that committed after the point, at or below the bound,
 *                       ascending
 */
public record HistoryPoint(long snapshotTs, long bound, long[] running, long[] committedAfter) {
    /** What the point says of a writer. */
    public enum Judgement {
        /** Committed at or below the bound. */
        VISIBLE,
        /** Running at the point and not committed by the bound, or started after the point and not committed by it. */
        INVISIBLE,
        /** Started before the point and finished by then: visible unless it aborted. */
        UNLESS_ABORTED
    }

    /** What the point says of the version written by {@code writerTs}. */
    public Judgement judge(long writerTs) {
        if (Timestamps.isSelfCommitted(writerTs)) {
            return writerTs <= bound ? Judgement.VISIBLE : Judgement.INVISIBLE; // committed at its own version
        }
        if (Arrays.binarySearch(committedAfter, writerTs) >= 0) {
            return Judgement.VISIBLE;
        }
        if (writerTs < snapshotTs && Arrays.binarySearch(running, writerTs) < 0) {
            return Judgement.UNLESS_ABORTED;
        }
        return Judgement.INVISIBLE;
    }

    @Override
    public String toString() {
        return "HistoryPoint[point=" + snapshotTs + ", bound=" + bound + ", running=" + running.length
                + ", committedAfter=" + committedAfter.length + "]";
    }
}
