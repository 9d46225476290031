package io.sibyl.ycsb;

import io.sibyl.client.CommitOutcomeUnknownException;
import io.sibyl.client.RollbackException;
import io.sibyl.client.SnapshotExpiredException;
import io.sibyl.client.Transaction;
import io.sibyl.client.TransactionManager;
import site.ycsb.Status;

/**
 * Groups the YCSB {@code DB} calls a workload makes on one thread into one Sibyl transaction, since YCSB's DB API
 * has no begin or commit. {@link SibylClient} joins the scope open on the calling thread (YCSB's {@code DBWrapper}
 * calls the binding on the workload's thread) instead of running each call as its own transaction.
 *
 * <pre>{@code
 * try (TransactionScope scope = TransactionScope.open()) {
 *     db.read(table, a, fields, balanceA);
 *     db.update(table, a, newBalanceA);
 *     Status s = scope.commit();   // Outcomes.CONFLICT if a concurrent transfer wrote a first
 * }                                // closing without commit rolls back
 * }</pre>
 */
public final class TransactionScope implements AutoCloseable {
    private static final ThreadLocal<TransactionScope> CURRENT = new ThreadLocal<>();

    private final Thread owner = Thread.currentThread();
    private TransactionManager manager;
    private Transaction tx;
    private Exception failure;
    private boolean ended;
    private Status committed;

    private TransactionScope() {
    }

    /** Opens a scope on this thread; the DB calls that follow on this thread, until it ends, share one transaction. */
    public static TransactionScope open() {
        if (CURRENT.get() != null) {
            throw new IllegalStateException("a transaction scope is already open on thread "
                    + Thread.currentThread().getName() + ": scopes do not nest");
        }
        TransactionScope s = new TransactionScope();
        CURRENT.set(s);
        return s;
    }

    /** The scope open on this thread, or null. */
    static TransactionScope current() {
        TransactionScope s = CURRENT.get();
        return s == null || s.ended ? null : s;
    }

    /** The scope's transaction, begun on {@code m} by the first DB call that joins. */
    Transaction join(TransactionManager m) {
        if (tx == null) {
            manager = m;
            tx = m.begin();
        } else if (m != manager) {
            throw new IllegalStateException("one transaction scope cannot span two transaction managers");
        }
        return tx;
    }

    /** Records that a call inside the scope failed: the scope can then only roll back. */
    void fail(Exception e) {
        if (failure == null) {
            failure = e;
        }
    }

    /** True once a DB call has joined: a scope nobody joined means the DB binding does not honour scopes. */
    public boolean joined() {
        return tx != null;
    }

    /**
     * Fails the run unless a DB call joined this scope: a binding that ignores scopes would run a workload's
     * transactions as separate operations and make its checks meaningless.
     */
    public void requireJoined() {
        if (tx == null) {
            String why = "the -db binding does not honour transaction scopes (its calls ran outside the open scope);"
                    + " this workload needs -db " + SibylClient.class.getName();
            FailingExit.fail(why);
            throw new IllegalStateException(why);
        }
    }

    /** The scope's transaction, or null before a call joined (for tests). */
    Transaction transaction() {
        return tx;
    }

    /** Why a call inside the scope failed, or null. */
    public Exception failure() {
        return failure;
    }

    /**
     * Commits the scope's transaction: {@link Status#OK}, the {@link Outcomes} status that names why it was rolled
     * back, or, if a call inside it failed (then it is rolled back), {@link Outcomes#SNAPSHOT_EXPIRED} when the call
     * could no longer read its snapshot and {@link Status#ERROR} otherwise.
     */
    public Status commit() {
        checkOwner();
        if (ended) {
            throw new IllegalStateException("this transaction scope has already ended");
        }
        ended = true;
        CURRENT.remove();
        committed = end();
        return committed;
    }

    /** What {@link #commit()} returned, or null if it was not called. */
    public Status committed() {
        return committed;
    }

    private Status end() {
        if (tx == null) {
            return Status.OK;
        }
        if (failure != null) {
            rollbackQuietly(failure);
            return failure instanceof SnapshotExpiredException ? Outcomes.SNAPSHOT_EXPIRED : Status.ERROR;
        }
        try {
            manager.commit(tx);
            return Status.OK;
        } catch (RollbackException e) {
            return Outcomes.of(e);
        } catch (CommitOutcomeUnknownException e) {
            return Outcomes.COMMIT_OUTCOME_UNKNOWN;
        } catch (RuntimeException e) {
            // Anything else must not escape into YCSB's client thread, which would exit 0 without its summary.
            rollbackQuietly(e);
            System.err.println("sibyl: commit of transaction " + tx.getStartTimestamp() + " failed: " + e);
            return Status.ERROR;
        }
    }

    /**
     * Rolls a still running transaction back after {@code cause}; a rollback that fails too (say the commit's outcome
     * is unknown) is added to it, not thrown into YCSB's client thread.
     */
    private void rollbackQuietly(Exception cause) {
        if (tx.getStatus() == Transaction.Status.RUNNING) {
            try {
                manager.rollback(tx);
            } catch (RuntimeException re) {
                cause.addSuppressed(re);
            }
        }
    }

    /** Rolls the transaction back unless it was committed, and ends the scope. */
    @Override
    public void close() {
        checkOwner();
        if (ended) {
            return;
        }
        ended = true;
        CURRENT.remove();
        if (tx != null && tx.getStatus() == Transaction.Status.RUNNING) {
            manager.rollback(tx);
        }
    }

    private void checkOwner() {
        if (Thread.currentThread() != owner) {
            throw new IllegalStateException("a transaction scope belongs to the thread that opened it");
        }
    }
}
