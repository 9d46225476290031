package io.sibyl.ycsb;

import io.sibyl.client.RollbackException;
import site.ycsb.Status;

import java.util.EnumMap;
import java.util.Map;

/** The YCSB {@link Status} each way a Sibyl transaction can end without committing, named after its cause. */
public final class Outcomes {
    /** A concurrent transaction committed a write to one of the same rows first (first committer wins). */
    public static final Status CONFLICT = new Status("CONFLICT",
            "write-write conflict: a concurrent transaction committed a write to one of the same rows first");
    /** The commit was in flight when the oracle connection broke and no oracle could tell its outcome. */
    public static final Status COMMIT_OUTCOME_UNKNOWN = new Status("COMMIT_OUTCOME_UNKNOWN",
            "the oracle connection broke during the commit and no oracle could tell its outcome");

    /**
     * A read or write could no longer be served from the transaction's snapshot (its oracle connection was lost for
     * longer than the read window, or it outlived the oracle's {@code transaction.max.age.ms}): rolled back, and a new
     * transaction may well succeed.
     */
    public static final Status SNAPSHOT_EXPIRED = new Status("SNAPSHOT_EXPIRED",
            "rolled back: the transaction's snapshot could no longer be read (oracle connection lost, or too old)");

    private static final Map<RollbackException.Reason, Status> BY_REASON =
            new EnumMap<>(RollbackException.Reason.class);

    static {
        BY_REASON.put(RollbackException.Reason.CONFLICT, CONFLICT);
        BY_REASON.put(RollbackException.Reason.READ_CONFLICT, new Status("READ_CONFLICT",
                "rolled back: a row or range it read was committed by another transaction since it began"));
        BY_REASON.put(RollbackException.Reason.TOO_OLD, new Status("TOO_OLD",
                "rolled back: the transaction ran too long for the oracle to check its conflicts"));
        BY_REASON.put(RollbackException.Reason.ABORTED_BY_ORACLE, new Status("ABORTED_BY_ORACLE",
                "rolled back: the oracle had aborted the transaction or refused its commit"));
        BY_REASON.put(RollbackException.Reason.ORACLE_FAILOVER, new Status("ORACLE_FAILOVER",
                "rolled back: the oracle connection was lost before the commit was decided"));
        BY_REASON.put(RollbackException.Reason.WRITE_FAILED, new Status("WRITE_FAILED",
                "rolled back: writing the buffered mutations to HBase failed"));
    }

    private Outcomes() {
    }

    /** The status that names why {@code e}'s transaction was rolled back. */
    public static Status of(RollbackException e) {
        return BY_REASON.get(e.getReason());
    }

    /**
     * True for the statuses of a rollback that a new attempt may well avoid (conflict, read conflict, too old,
     * failover, expired snapshot).
     */
    public static boolean isRetryable(Status s) {
        return s.equals(CONFLICT) || s.equals(BY_REASON.get(RollbackException.Reason.TOO_OLD))
                || s.equals(BY_REASON.get(RollbackException.Reason.ORACLE_FAILOVER)) || s.equals(SNAPSHOT_EXPIRED)
                || s.equals(BY_REASON.get(RollbackException.Reason.READ_CONFLICT));
    }
}
