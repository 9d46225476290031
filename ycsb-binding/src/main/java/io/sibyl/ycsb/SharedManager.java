package io.sibyl.ycsb;

import io.sibyl.client.TransactionManager;
import org.apache.hadoop.conf.Configuration;

import java.io.IOException;

/**
 * The one {@link TransactionManager} of the JVM, shared by every YCSB client thread's {@link SibylClient}:
 * one oracle connection (with one replica of the commit metadata) and one HBase connection, as the client API
 * intends, instead of one per thread. Reference-counted: the last release closes it.
 */
final class SharedManager {
    private static TransactionManager manager;
    private static int users;

    private SharedManager() {
    }

    /** The shared manager, created from {@code conf} by the first user (later users share it as it is). */
    static synchronized TransactionManager acquire(Configuration conf) throws IOException {
        if (manager == null) {
            manager = TransactionManager.create(conf);
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
