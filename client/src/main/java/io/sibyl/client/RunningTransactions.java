package io.sibyl.client;

import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;

/**
 * The transactions a manager has begun and that have not reached an outcome, and whether the manager is closed:
 * once it is, begins are refused, and closing rolls back what still runs.
 */
final class RunningTransactions {
    private final TransactionManager manager;
    private final RollbackProtocol rollbacks;
    private final ClientSettings settings;
    private final Set<HBaseTransaction> running = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    RunningTransactions(TransactionManager manager, RollbackProtocol rollbacks, ClientSettings settings) {
        this.manager = manager;
        this.rollbacks = rollbacks;
        this.settings = settings;
    }

    /** Counts {@code tx} as running until it is {@link #forget forgotten}; refused if the manager closed meanwhile. */
    HBaseTransaction track(HBaseTransaction tx) {
        running.add(tx);
        if (closed) { // closed concurrently: do not leave it running
            manager.rollback(tx);
            checkOpen();
        }
        return tx;
    }

    /** The transaction reached an outcome: close no longer needs to roll it back or wait for it. */
    void forget(HBaseTransaction tx) {
        running.remove(tx);
    }

    boolean isClosed() {
        return closed;
    }

    void checkOpen() {
        if (closed) {
            throw new IllegalStateException("this TransactionManager is closed; create a new one");
        }
    }

    /**
     * Closes: lets commits under way on other threads finish, then rolls back every transaction still running.
     *
     * @return false if it was closed already (nothing done)
     */
    boolean close() {
        if (closed) {
            return false;
        }
        closed = true;
        awaitCommitsUnderWay();
        for (HBaseTransaction tx : running.toArray(new HBaseTransaction[0])) {
            try {
                // A transaction another thread is committing or rolling back finishes on that thread: rolling it
                // back here could delete the versions of a commit the oracle has just decided.
                if (tx.claim(TransactionPhase.ROLLING_BACK)) {
                    try {
                        rollbacks.rollBack(tx, TransactionPhase.ROLLED_BACK_BY_CLOSE);
                    } finally {
                        tx.releaseClaim();
                    }
                }
            } catch (RuntimeException e) {
                TransactionManager.LOG.warn("rolling back transaction {} at close failed: {}", tx.getStartTimestamp(),
                        e.toString());
            }
        }
        // A commit that took its claim after the first wait (the loop above then left it alone) is under way too.
        awaitCommitsUnderWay();
        return true;
    }

    /**
     * Lets commits that other threads have under way finish before the oracle connection closes, for at most
     * {@code sibyl.client.oracle.timeout.ms} (a commit waits no longer for its reply): closing the connection under
     * them would leave their outcome unknown.
     */
    private void awaitCommitsUnderWay() {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(settings.oracleTimeoutMillis());
        for (HBaseTransaction tx : running.toArray(new HBaseTransaction[0])) {
            while (tx.phase().isClaimed() && System.nanoTime() < deadline) {
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }
}
