package io.sibyl.client;

import java.io.UncheckedIOException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Function;

/**
 * {@link TransactionManager#run}: runs work in a transaction and commits it, beginning again after a retryable
 * rollback with a growing, jittered back-off.
 */
final class RetryingRunner {
    private final TransactionManager manager;
    private final TransactionStarts starts;
    private final ClientSettings settings;

    RetryingRunner(TransactionManager manager, TransactionStarts starts, ClientSettings settings) {
        this.manager = manager;
        this.starts = starts;
        this.settings = settings;
    }

    /** See {@link TransactionManager#run(IsolationLevel, Function)}. */
    <T> T run(IsolationLevel isolation, Function<Transaction, T> work) throws RollbackException {
        long backoff = settings.retryBackoffMillis();
        for (int attempt = 1; ; attempt++) {
            HBaseTransaction tx = starts.readWrite(isolation);
            T result;
            try {
                result = work.apply(tx);
            } catch (Throwable e) {
                // Throwable, not RuntimeException | Error: a checked exception thrown undeclared (Kotlin, Scala or
                // Groovy work, Lombok's @SneakyThrows) would otherwise leave the transaction running at the oracle,
                // holding the low watermark until transaction.max.age.ms. Rethrown as is (precise rethrow).
                if (tx.getStatus() == Transaction.Status.RUNNING && !tx.isInDoubt()) {
                    try {
                        manager.rollback(tx);
                    } catch (RuntimeException re) {
                        e.addSuppressed(re);
                    }
                }
                if (!isExpiredSnapshot(e) || attempt >= settings.retryAttempts()) {
                    throw e;
                }
                backoff = backOff(backoff);
                continue;
            }
            if (tx.wasRolledBackByClose()) {
                // Not the work's own rollback: the manager was closed (by another thread) after the work's last
                // write. Returning the result would report work as done that the close undid.
                throw new IllegalStateException("this TransactionManager was closed while run's work was under way:"
                        + " its transaction " + tx.getStartTimestamp() + " was rolled back and nothing of it was"
                        + " committed; create a new manager and run it again");
            }
            if (tx.getStatus() != Transaction.Status.RUNNING) {
                return result;
            }
            try {
                manager.commit(tx);
                return result;
            } catch (RollbackException e) {
                if (!e.isRetryable()) {
                    throw e;
                }
                if (attempt >= settings.retryAttempts()) {
                    throw e.afterAttempts(attempt, TransactionManager.RETRY_ATTEMPTS);
                }
            }
            backoff = backOff(backoff);
        }
    }

    /** A read refused because the oracle connection was lost long ago: a new transaction reads on a live one. */
    private static boolean isExpiredSnapshot(Throwable e) {
        return e instanceof UncheckedIOException u && u.getCause() instanceof SnapshotExpiredException;
    }

    /** Sleeps about {@code backoff} ms (jittered) and returns the next, doubled back-off. */
    private long backOff(long backoff) {
        if (backoff <= 0) {
            return backoff;
        }
        long sleep = backoff / 2 + ThreadLocalRandom.current().nextLong(backoff / 2 + 1);
        try {
            Thread.sleep(sleep);
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while backing off before a retry", ie);
        }
        return Math.min(backoff * 2, settings.retryBackoffMaxMillis());
    }
}
