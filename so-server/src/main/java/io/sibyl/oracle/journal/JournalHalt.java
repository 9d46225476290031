package io.sibyl.oracle.journal;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.atomic.AtomicBoolean;

/**
 * Whether the journal still runs: stopped for good by a fatal error (told to the {@link FatalErrorListener} once,
 * on a thread of its own) or closing. Every part of the journal checks it before it acts.
 */
final class JournalHalt {
    private static final Logger LOG = LoggerFactory.getLogger(BookKeeperJournal.class);

    private final AtomicBoolean failed = new AtomicBoolean();
    private final FatalErrorListener listener;
    /** Wakes whatever waits under the journal lock, so a failure never leaves an appender blocked. */
    private final Runnable wakeWaiters;
    private volatile String reason;
    private volatile boolean closing;

    JournalHalt(FatalErrorListener listener, Runnable wakeWaiters) {
        this.listener = listener;
        this.wakeWaiters = wakeWaiters;
    }

    /** Stops the journal for good (the first call only): no callback runs after this, the listener is told. */
    void fail(String why, Throwable cause) {
        if (!failed.compareAndSet(false, true)) {
            return;
        }
        reason = why;
        LOG.error("journal stopped: {}", why, cause);
        wakeWaiters.run();
        // Not on the caller's thread: that may be BookKeeper's or ZooKeeper's, and the listener closes clients.
        Thread t = new Thread(() -> listener.onFatalError(why, cause), "sibyl-journal-fatal");
        t.setDaemon(true);
        t.start();
    }

    boolean failed() {
        return failed.get();
    }

    /** Why the journal failed, or null. */
    String reason() {
        return reason;
    }

    /** Starts a clean close; false if one was already under way. */
    boolean startClosing() {
        if (closing) {
            return false;
        }
        closing = true;
        return true;
    }

    boolean closing() {
        return closing;
    }

    /** Failed or closing: nothing new is accepted or started. */
    boolean stopped() {
        return failed.get() || closing;
    }
}
