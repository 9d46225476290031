package io.sibyl.client;

import java.util.EnumSet;
import java.util.Set;

/**
 * Where a transaction is in its life, and which phase may follow which (docs/architecture.md, "Transaction phases").
 * A commit or a rollback first claims the transaction (from {@link #OPEN}, or {@link #UNFINISHED} to try again), so
 * only one of them runs; the claim holder alone moves it on from there.
 */
enum TransactionPhase {
    /** Reads and writes. */
    OPEN(Transaction.Status.RUNNING, null),
    /**
     * A commit holds the claim and sends the buffered writes; the write operation under way may still finish, later
     * ones are refused, reads still resolve.
     */
    COMMITTING(Transaction.Status.RUNNING, null),
    /**
     * The commit sent its request (commit, finish, or the abort of a commit that could not be sent) and waits for
     * the outcome, resolving a lost reply or deleting versions if it aborted. From here on the replica may trim
     * commits this snapshot needs and the oracle forget aborts whose versions it fetched: reads are refused.
     */
    COMMITTING_AT_ORACLE(Transaction.Status.RUNNING, null),
    /** A rollback holds the claim: nothing more reaches HBase, reads still resolve. */
    ROLLING_BACK(Transaction.Status.RUNNING, null),
    /** The rollback sent its abort or finish and deletes the versions sent; reads are refused. */
    ROLLING_BACK_AT_ORACLE(Transaction.Status.RUNNING, null),
    /**
     * A commit or rollback stopped on an unexpected error before an outcome: no more reads or writes, but another
     * commit or rollback (the manager's close, {@link TransactionManager#run}) may claim it and try again.
     */
    UNFINISHED(Transaction.Status.RUNNING, null),
    /** The commit was sent and no oracle could tell its outcome: it may have committed, so nothing may undo it. */
    IN_DOUBT(Transaction.Status.RUNNING, "in doubt (its commit outcome is unknown)"),
    COMMITTED(Transaction.Status.COMMITTED, "already committed"),
    ROLLED_BACK(Transaction.Status.ROLLED_BACK, "already rolled back"),
    /** Rolled back by its manager's close, not by the application ({@link TransactionManager#run} tells them apart). */
    ROLLED_BACK_BY_CLOSE(Transaction.Status.ROLLED_BACK, "rolled back because its TransactionManager was closed");

    private static final Set<TransactionPhase> CLAIMS = EnumSet.of(COMMITTING, ROLLING_BACK);

    private final Transaction.Status status;
    private final String finishedAs;

    TransactionPhase(Transaction.Status status, String finishedAs) {
        this.status = status;
        this.finishedAs = finishedAs;
    }

    /** What the application sees of this phase. */
    Transaction.Status status() {
        return status;
    }

    /** How a finished transaction is described in the error of a later use ("already committed"), else null. */
    String finishedAs() {
        return finishedAs;
    }

    /** The legal moves: every other one is a bug in the client. */
    boolean canMoveTo(TransactionPhase next) {
        return switch (this) {
            case OPEN, UNFINISHED -> CLAIMS.contains(next);
            case COMMITTING -> next == COMMITTING_AT_ORACLE || next == UNFINISHED;
            case COMMITTING_AT_ORACLE -> next == COMMITTED || next == ROLLED_BACK || next == IN_DOUBT
                    || next == UNFINISHED;
            case ROLLING_BACK -> next == ROLLING_BACK_AT_ORACLE || next == UNFINISHED;
            case ROLLING_BACK_AT_ORACLE -> next == ROLLED_BACK || next == ROLLED_BACK_BY_CLOSE || next == UNFINISHED;
            case IN_DOUBT, COMMITTED, ROLLED_BACK, ROLLED_BACK_BY_CLOSE -> false;
        };
    }

    /** A commit or rollback may claim the transaction in this phase. */
    boolean isClaimable() {
        return this == OPEN || this == UNFINISHED;
    }

    /** A commit or rollback holds the claim and has not reached an outcome. */
    boolean isClaimed() {
        return this == COMMITTING || this == COMMITTING_AT_ORACLE || this == ROLLING_BACK
                || this == ROLLING_BACK_AT_ORACLE;
    }

    /** The phase once the claim holder's request is sent to the oracle (itself if it already was). */
    TransactionPhase atOracle() {
        return switch (this) {
            case COMMITTING, COMMITTING_AT_ORACLE -> COMMITTING_AT_ORACLE;
            case ROLLING_BACK, ROLLING_BACK_AT_ORACLE -> ROLLING_BACK_AT_ORACLE;
            default -> throw new IllegalStateException("no commit or rollback under way, so nothing to send to the"
                    + " oracle in phase " + this);
        };
    }

    /** A rollback claimed the transaction: nothing more may reach HBase. */
    boolean isRollingBack() {
        return this == ROLLING_BACK || this == ROLLING_BACK_AT_ORACLE;
    }

    /**
     * Buffered writes may be added and sent to HBase: while open, and while a commit waits out the write operation
     * under way and then sends the buffer.
     */
    boolean sendsWrites() {
        return this == OPEN || this == COMMITTING;
    }

    /**
     * What a read resolved in this phase is still exactly the snapshot: not once a commit, finish or abort was sent
     * (the oracle's answer lets the replica trim and the oracle forget what the snapshot needs).
     */
    boolean resolvesReads() {
        return this == OPEN || this == COMMITTING || this == ROLLING_BACK;
    }
}
