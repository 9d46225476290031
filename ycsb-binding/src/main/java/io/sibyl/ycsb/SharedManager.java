package io.sibyl.ycsb;

import io.sibyl.client.TransactionManager;
import org.apache.hadoop.conf.Configuration;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;

/**
 * The one {@link TransactionManager} of the JVM, shared by every YCSB client thread's {@link SibylClient}:
 * one oracle connection (with one replica of the commit metadata) and one HBase connection, as the client API
 * intends, instead of one per thread. Reference-counted: the last release closes it.
 *
 * <p>A manager that could not be created (no oracle answered within the failover timeout, say) is not tried again
 * with the same settings for a minute: YCSB starts every client thread at once, and each would otherwise wait out
 * the whole timeout in turn (16 threads, 30 s each: 8 minutes before the run fails). They fail at once with the
 * first one's error instead, and so does the closed economy's final check right after.
 */
final class SharedManager {
    private static TransactionManager manager;
    private static int users;
    /** How long a failure to create a manager is given to later users of the same settings. */
    static final long FAILURE_REUSE_NANOS = 60_000_000_000L;

    /** Why creating a manager failed and when, by the settings ({@link BindingSettings#connectionKey}). */
    private record Failure(Exception cause, long atNanos) {
    }

    private static final Map<String, Failure> FAILED = new HashMap<>();

    private SharedManager() {
    }

    /**
     * The shared manager, created from {@code conf} by the first user (later users share it as it is). If creating it
     * from settings with the same {@code key} failed less than a minute ago, throws that failure again at once.
     */
    static synchronized TransactionManager acquire(String key, Configuration conf) throws IOException {
        if (manager == null) {
            Failure failed = FAILED.get(key);
            if (failed != null && System.nanoTime() - failed.atNanos() < FAILURE_REUSE_NANOS) {
                if (failed.cause() instanceof IOException io) {
                    throw io;
                }
                throw (RuntimeException) failed.cause();
            }
            try {
                manager = TransactionManager.create(conf);
                FAILED.remove(key);
            } catch (IOException | RuntimeException e) {
                FAILED.put(key, new Failure(e, System.nanoTime()));
                throw e;
            }
        }
        users++;
        return manager;
    }

    /** Gives up one use; the last one closes the manager (rolling back what is still running). */
    static synchronized void release() {
        if (users == 0) {
            throw new IllegalStateException("released more often than acquired");
        }
        if (--users == 0) {
            try {
                manager.close();
            } finally {
                manager = null;
            }
        }
    }

    /** How many clients hold the manager (for tests). */
    static synchronized int users() {
        return users;
    }
}
