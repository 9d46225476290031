package io.sibyl.client;

import io.sibyl.client.oracle.OracleClient;

import java.util.concurrent.CompletionException;

/**
 * How a transaction rolls back, on the application's request, at its manager's close, or after a commit that could
 * not commit: the oracle is told (an abort, or a one-way finish when nothing reached HBase), the versions sent are
 * deleted (now, or in the background) and the clean-up reported. Every method is called by the thread that holds
 * the transaction's commit or rollback claim.
 */
final class RollbackProtocol {
    private final AbortCleanup cleanup;
    private final OracleReplies replies;

    RollbackProtocol(AbortCleanup cleanup, OracleReplies replies) {
        this.cleanup = cleanup;
        this.replies = replies;
    }

    /**
     * Rolls back a transaction this thread claimed for a rollback, ending it in {@code outcome}
     * ({@link TransactionPhase#ROLLED_BACK}, or {@link TransactionPhase#ROLLED_BACK_BY_CLOSE} at the manager's close).
     */
    void rollBack(HBaseTransaction tx, TransactionPhase outcome) {
        // The claim closed the transaction for writes, so what has been sent now is all there will ever be.
        if (!tx.writes().hasSent()) {
            tx.endingAtOracle();
            tx.snapshot().finish();
            tx.end(outcome);
            return;
        }
        abortAtOracle(tx);
        rollBackLocally(tx, true, outcome);
    }

    /** Makes sure the oracle aborted the transaction, so that no commit of it can follow. */
    void abortAtOracle(HBaseTransaction tx) {
        tx.endingAtOracle();
        OracleClient begunOn = tx.begunOn();
        if (!begunOn.isOpen()) {
            return; // the oracle aborts what a lost connection was running (a new oracle: all it did not decide)
        }
        try {
            replies.await(begunOn.abort(tx.getStartTimestamp()), begunOn, "an abort");
        } catch (CompletionException e) {
            TransactionManager.LOG.warn("abort of transaction {} at the oracle failed: {}", tx.getStartTimestamp(),
                    e.getCause().toString());
        }
    }

    /** Deletes the transaction's versions and, if all went and the oracle is reachable, reports the clean-up. */
    void rollBackLocally(HBaseTransaction tx, boolean reportCleanUp) {
        rollBackLocally(tx, reportCleanUp, TransactionPhase.ROLLED_BACK);
    }

    private void rollBackLocally(HBaseTransaction tx, boolean reportCleanUp, TransactionPhase outcome) {
        cleanup.deleteNowOrLater(tx, reportCleanUp);
        tx.end(outcome);
    }

    /**
     * Sending the writes to HBase failed (now, or in an earlier flush): the transaction is aborted at the oracle and
     * its versions deleted in the background, since HBase just failed to take them and would make a deletion now
     * wait through its retries again.
     */
    RollbackException afterWriteFailure(HBaseTransaction tx, Exception e) {
        abortAtOracle(tx);
        tx.end(TransactionPhase.ROLLED_BACK);
        cleanup.deleteLater(tx, true);
        if (e instanceof SnapshotExpiredException) {
            // Not HBase's fault: the oracle went silent, and a new transaction on the next one may well succeed.
            return new RollbackException(tx, RollbackException.Reason.ORACLE_FAILOVER, e.getMessage(), e);
        }
        return new RollbackException(tx, RollbackException.Reason.WRITE_FAILED,
                "some of its writes may be missing: " + e, e);
    }

    /** The transaction's connection was lost before its commit request left: the oracle aborted it. */
    RollbackException lostBeforeCommit(HBaseTransaction tx, OracleClient client) {
        // The oracle ended it with the connection: a read on another thread during the clean-up is refused, as
        // during any other ending, instead of resolving against a replica that no longer keeps this snapshot.
        tx.endingAtOracle();
        rollBackLocally(tx, false);
        return new RollbackException(tx, RollbackException.Reason.ORACLE_FAILOVER, "the connection to the oracle at "
                + client.address() + " was lost before the commit was sent, so the oracle aborted it; run it again",
                null);
    }
}
