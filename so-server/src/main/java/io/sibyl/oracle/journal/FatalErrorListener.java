package io.sibyl.oracle.journal;

/**
 * Told, exactly once, that the journal can no longer make decisions durable: this oracle was fenced by a newer one
 * (BookKeeper ledger fenced, ledger registry taken over), its ZooKeeper session is gone, or the bookies stayed
 * unwritable for longer than {@code journal.write.retry.ms}. From that moment the journal runs no callback, so no
 * reply that depends on a journal write can leave; the listener should stop serving at once.
 *
 * <p>Called on a dedicated thread, never while the journal holds a lock, so it may call {@code close()}.
 */
@FunctionalInterface
public interface FatalErrorListener {
    void onFatalError(String reason, Throwable cause);
}
