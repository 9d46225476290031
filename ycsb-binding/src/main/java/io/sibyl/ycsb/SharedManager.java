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
 * with the same settings in this JVM: YCSB starts every client thread at once, and each would otherwise wait out the
 * whole timeout in turn (16 threads, 30 s each: 8 minutes before the run fails). They fail at once with the first
 * one's error instead.
 */
final class SharedManager {
    private static TransactionManager manager;
    private static int users;
    /** Why creating a manager failed, by the settings it was created from ({@link BindingSettings#connectionKey}). */
    private static final Map<String, Exception> FAILED = new HashMap<>();

    private SharedManager() {
    }

    /**
     * The shared manager, created from {@code conf} by the first user (later users share it as it is). If creating it
     * from settings with the same {@code key} failed before in this JVM, throws that failure again at once.
     */
    static synchronized TransactionManager acquire(String key, Configuration conf) throws IOException {
        if (manager == null) {
            Exception failed = FAILED.get(key);
            if (failed instanceof IOException io) {
                throw io;
            } else if (failed != null) {
                throw (RuntimeException) failed;
            }
            try {
                manager = TransactionManager.create(conf);
            } catch (IOException | RuntimeException e) {
                FAILED.put(key, e);
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
