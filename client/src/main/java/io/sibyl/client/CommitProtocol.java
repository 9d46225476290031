package io.sibyl.client;

import io.sibyl.client.oracle.OracleClient;
import io.sibyl.client.oracle.OracleConnection;
import io.sibyl.client.oracle.OracleException;
import io.sibyl.client.oracle.OracleUnavailableException;
import io.sibyl.client.oracle.TransactionAbortedException;
import io.sibyl.client.oracle.TransactionStatus;

import java.io.IOException;
import java.util.concurrent.CompletionException;

import static io.sibyl.client.TransactionManager.LOG;

/**
 * How a transaction commits: the buffered writes go to HBase, then the write set to the oracle, whose decision
 * commits it or rolls it back; a reply lost with its connection is asked of the oracle that serves next. Runs on the
 * thread that holds the transaction's commit claim.
 */
final class CommitProtocol {
    private final OracleConnection oracle;
    private final OracleReplies replies;
    private final RollbackProtocol rollbacks;

    CommitProtocol(OracleConnection oracle, OracleReplies replies, RollbackProtocol rollbacks) {
        this.oracle = oracle;
        this.replies = replies;
        this.rollbacks = rollbacks;
    }

    void commit(HBaseTransaction tx) throws RollbackException {
        long startTs = tx.getStartTimestamp();
        // Writes racing the commit on other threads: those under way finish first and later ones were refused from
        // the claim on, so a write that returned normally is committed (or rolled back) with the rest, never dropped
        // or half applied, and nothing reaches HBase that is not in the write set (and the roll-back-only check below
        // sees them).
        tx.awaitWriteUnderWay();
        Exception failedWrite = tx.writes().failure();
        if (failedWrite != null) {
            throw rollbacks.afterWriteFailure(tx, failedWrite);
        }
        OracleClient client = tx.begunOn();
        if (tx.isReadOnly()) {
            tx.endingAtOracle(); // reads refused from here: the snapshot is let go
            tx.snapshot().finish();
            tx.endCommitted(startTs);
            return;
        }
        if (!client.isOpen()) {
            throw rollbacks.lostBeforeCommit(tx, client);
        }
        try {
            tx.flush();
        } catch (IOException | RuntimeException e) {
            throw rollbacks.afterWriteFailure(tx, e);
        }
        if (!client.isOpen()) { // lost while the writes were sent
            throw rollbacks.lostBeforeCommit(tx, client);
        }
        long commitTs;
        long commitSentNanos = System.nanoTime();
        tx.endingAtOracle();
        try {
            commitTs = replies.await(client.commit(startTs, tx.writes().writeSet(), tx.readsToCertify(),
                    tx.granulesWritten()), client, "a commit");
        } catch (CompletionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof TransactionAbortedException tae) {
                rollbacks.rollBackLocally(tx, true);
                throw aborted(tx, tae, client);
            }
            if (cause instanceof OracleUnavailableException oue) {
                resolveInDoubt(tx, oue, commitSentNanos, client.readWindowMillis());
                return;
            }
            if (cause instanceof OracleException oe) {
                // Refused without a decision (e.g. write set too large): make sure it is aborted, then clean up.
                rollbacks.abortAtOracle(tx);
                rollbacks.rollBackLocally(tx, true);
                throw new RollbackException(tx, RollbackException.Reason.ABORTED_BY_ORACLE,
                        "the oracle refused the commit: " + describe(oe), oe);
            }
            throw e;
        }
        tx.endCommitted(commitTs);
    }

    /** The oracle aborted the commit: why, as the application is told. */
    private static RollbackException aborted(HBaseTransaction tx, TransactionAbortedException tae,
                                             OracleClient client) {
        boolean tooOld = tx.snapshot().outlivedMaxAge();
        RollbackException.Reason reason = switch (tae.reason()) {
            case CONFLICT -> RollbackException.Reason.CONFLICT;
            case READ_CONFLICT -> RollbackException.Reason.READ_CONFLICT;
            case TOO_OLD -> RollbackException.Reason.TOO_OLD;
            // Aborted by transaction.max.age.ms (the commit left after the client's own count ended, with nothing
            // left to flush): as retryable as T_max passing it.
            case ALREADY_ABORTED -> tooOld ? RollbackException.Reason.TOO_OLD
                    : RollbackException.Reason.ABORTED_BY_ORACLE;
        };
        String why = tae.getMessage() + (tooOld ? " (it ran longer than the oracle's transaction.max.age.ms, "
                + client.transactionMaxAgeNanos() / 1_000_000L + " ms)" : "");
        return new RollbackException(tx, reason, why, null);
    }

    private static String describe(OracleException e) {
        return e.getMessage() == null ? e.toString() : e.getMessage();
    }

    /**
     * The connection was lost while the commit request was in flight. The oracle that serves now (the same one
     * after a network failure, or the one that took over from the journal) knows the outcome: ask it. A transaction
     * it reports still running never reached its commit; it is aborted first, so the answer cannot change.
     *
     * <p>"Committed before T_max" is trusted only while less than the read window has passed since the commit was
     * sent. An aborted transaction is forgotten once its versions were swept (a dead client's abort, or an aborted
     * range after a crash), and after that the oracle answers "committed before T_max" for its timestamp, as for any
     * old commit. Forgetting waits for the low watermark, which the oracle holds down for the whole reader grace
     * (twice the read window) after the connection was lost or the new oracle started, and the commit was sent at
     * most a read window after the client last heard from the oracle (writes stop then). So an answer within a read
     * window of sending cannot come from a forgotten abort; a later one (the client stalled) is "outcome unknown".
     */
    private void resolveInDoubt(HBaseTransaction tx, OracleUnavailableException lost, long commitSentNanos,
                                long readWindowMillis) throws RollbackException {
        long startTs = tx.getStartTimestamp();
        boolean askAgain = true;
        for (int attempt = 0; attempt < 3 && askAgain; attempt++) {
            try {
                OracleClient client = oracle.current();
                TransactionStatus status = replies.await(client.query(startTs), client, "a commit query");
                switch (status.state()) {
                    case COMMITTED, COMMITTED_LONG_AGO -> {
                        long sinceSentMillis = (System.nanoTime() - commitSentNanos) / 1_000_000L;
                        if (status.state() == TransactionStatus.State.COMMITTED_LONG_AGO
                                && sinceSentMillis >= readWindowMillis) {
                            LOG.warn("the oracle at {} reports in-doubt transaction {} committed before T_max, but {}"
                                    + " ms after its commit was sent, longer than the read window ({} ms): an abort"
                                    + " swept and forgotten meanwhile would read the same, so the outcome is unknown",
                                    client.address(), startTs, sinceSentMillis, readWindowMillis);
                            askAgain = false;
                        } else {
                            tx.endCommitted(status.commitTimestamp());
                            LOG.info("commit of transaction {} was in flight when the oracle connection was lost;"
                                    + " the oracle at {} reports it committed", startTs, client.address());
                            return;
                        }
                    }
                    case ABORTED -> {
                        rollbacks.rollBackLocally(tx, true);
                        throw new RollbackException(tx, RollbackException.Reason.ORACLE_FAILOVER, "the connection to"
                                + " the oracle was lost while the commit was in flight, and the oracle at "
                                + client.address() + " reports it aborted; run it again", lost);
                    }
                    // Never reached its commit: abort it, then ask again, when the answer can no longer change.
                    case RUNNING -> replies.await(client.abort(startTs), client, "an abort");
                    case UNKNOWN -> {
                        LOG.warn("the oracle at {} does not know transaction {} (was it restarted without its"
                                + " journal?)", client.address(), startTs);
                        askAgain = false;
                    }
                }
            } catch (CompletionException | OracleException e) {
                LOG.warn("asking the oracle about in-doubt transaction {} failed: {}", startTs, e.toString());
            }
        }
        tx.end(TransactionPhase.IN_DOUBT);
        throw new CommitOutcomeUnknownException(tx, lost);
    }
}
