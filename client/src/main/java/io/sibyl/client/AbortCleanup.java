package io.sibyl.client;

import io.sibyl.client.oracle.OracleClient;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Deletes, in the background, the versions of aborted transactions that could not be deleted when they aborted
 * (HBase unavailable, a region in transition), retrying with a growing pause until it works or the manager closes,
 * then reports the clean-up to the oracle so that it can forget the transaction.
 *
 * <p>Until then the versions are invisible to every snapshot (the oracle and every replica hold the transaction in
 * the aborted set): the retries free storage and the oracle's memory, they never affect what anyone reads.
 */
final class AbortCleanup implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(AbortCleanup.class);
    static final long FIRST_PAUSE_MS = 200;
    static final long MAX_PAUSE_MS = 30_000;

    private final Supplier<OracleClient> oracle;
    private final ScheduledThreadPoolExecutor retries;
    private final Set<HBaseTransaction> pending = ConcurrentHashMap.newKeySet();
    private volatile boolean closed;

    AbortCleanup(Supplier<OracleClient> oracle) {
        this.oracle = oracle;
        this.retries = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "sibyl-abort-cleanup");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Deletes {@code tx}'s versions now on the calling thread; if that fails, logs why once and keeps trying in the
     * background. {@code report}: tell the oracle once they are gone.
     */
    void deleteNowOrLater(HBaseTransaction tx, boolean report) {
        IOException failure = tx.deleteSentVersions();
        if (failure == null) {
            reportCleanedUp(tx, report);
            return;
        }
        Interrupts.keepInterrupt(failure); // an interrupted rollback: the caller's flag stays set (HBase cleared it)
        LOG.warn("could not delete the versions of aborted transaction {}: {}; they stay invisible (the oracle keeps"
                + " the transaction in its aborted set) and are deleted in the background once HBase takes them",
                tx.getStartTimestamp(), failure.toString());
        later(tx, report, FIRST_PAUSE_MS);
    }

    /** Deletes {@code tx}'s versions in the background only (the caller must not wait for HBase again). */
    void deleteLater(HBaseTransaction tx, boolean report) {
        later(tx, report, 0);
    }

    /** Aborted transactions whose versions are still to be deleted. */
    int pending() {
        return pending.size();
    }

    private void later(HBaseTransaction tx, boolean report, long pauseMs) {
        if (closed) {
            return;
        }
        pending.add(tx);
        try {
            retries.schedule(() -> attempt(tx, report, pauseMs), pauseMs, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            pending.remove(tx); // closing
        }
    }

    private void attempt(HBaseTransaction tx, boolean report, long pauseMs) {
        if (closed) {
            return;
        }
        IOException failure = tx.deleteSentVersions();
        if (failure == null) {
            pending.remove(tx);
            if (pauseMs > 0) {
                LOG.info("versions of aborted transaction {} deleted after all", tx.getStartTimestamp());
            }
            reportCleanedUp(tx, report);
            return;
        }
        long next = Math.min(MAX_PAUSE_MS, Math.max(FIRST_PAUSE_MS, pauseMs * 2));
        if (pauseMs == 0) {
            LOG.warn("could not delete the versions of aborted transaction {}: {}; they stay invisible and are"
                    + " deleted in the background once HBase takes them", tx.getStartTimestamp(), failure.toString());
        } else {
            LOG.debug("deleting the versions of aborted transaction {} failed again: {}", tx.getStartTimestamp(),
                    failure.toString());
        }
        try {
            retries.schedule(() -> attempt(tx, report, next), next, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // closing: reported by close()
        }
    }

    private void reportCleanedUp(HBaseTransaction tx, boolean report) {
        if (report && tx.mayHaveLateWrites()) {
            // A batch HBase gave up on may still be applied by a region server after these deletes; if a major
            // compaction dropped the delete markers first, the version would come back, and once the oracle forgot
            // the abort it would read as committed. Left in the aborted set, bin/sibyl-sweep deletes it again after
            // its settle time, the same as a dead client's.
            LOG.info("aborted transaction {} had a write batch HBase gave up on, which a region server may still apply;"
                    + " its versions are deleted, and the clean-up is left to bin/sibyl-sweep", tx.getStartTimestamp());
            return;
        }
        OracleClient client = oracle.get();
        if (report && client != null && client.isOpen()) {
            client.cleanedUp(tx.getStartTimestamp()).whenComplete((v, e) -> {
                if (e != null) {
                    LOG.debug("clean-up report for {} failed: {}", tx.getStartTimestamp(), e.toString());
                }
            });
        }
    }

    /** Stops retrying; says which aborted transactions keep (invisible) versions in HBase. */
    @Override
    public void close() {
        closed = true;
        retries.shutdownNow();
        if (!pending.isEmpty()) {
            List<Long> left = new ArrayList<>();
            for (HBaseTransaction tx : pending) {
                left.add(tx.getStartTimestamp());
            }
            LOG.warn("closing with the versions of {} aborted transaction(s) still in HBase, {}: they stay invisible"
                    + " (the oracle keeps them in its aborted set)", left.size(), left);
        }
    }
}
