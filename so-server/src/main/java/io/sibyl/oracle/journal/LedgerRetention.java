package io.sibyl.oracle.journal;

import org.apache.bookkeeper.client.BKException;
import org.apache.bookkeeper.client.BookKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;

/**
 * What keeps the journal bounded: once a checkpoint is durable, the ledgers before the one holding checkpoint C are
 * dropped from the registry and then deleted in BookKeeper, when C's clock (an upper bound of every commit timestamp
 * journaled before C) is at or below the T_max of the newest durable checkpoint: every commit they hold then reads as
 * "committed long ago", and C carries the rest of their state. {@code journal.retain.ledgers.min} keeps more. A crash
 * between drop and delete leaves orphans, which the start-up {@link OrphanSweep} of a later leader deletes.
 */
final class LedgerRetention {
    private static final Logger LOG = LoggerFactory.getLogger(BookKeeperJournal.class);
    /** Attempts to delete a dropped ledger (pauses 0.5, 1, 2, 4 ... s between them, about 4 min in all). */
    static final int DELETE_ATTEMPTS = 10;
    static final long DELETE_FIRST_PAUSE_MS = 500;

    /** One attempt to delete a ledger in BookKeeper, completing with BookKeeper's return code. */
    interface DeleteAttempt {
        CompletableFuture<Integer> delete(long ledgerId);
    }

    /** A durable checkpoint: the ledger its acknowledged copy is in, its clock and its T_max. */
    private record CheckpointMark(long ledgerId, long clock, long tMax) {
    }

    private final JournalContext journal;
    private final LedgerRoller ledgers;
    private final LongConsumer deleteDropped;
    private final DeleteAttempt deleteAttempt;
    private final ArrayDeque<CheckpointMark> durableCheckpoints = new ArrayDeque<>(); // guarded by the lock
    private volatile CompletableFuture<List<Long>> orphanSweep = CompletableFuture.completedFuture(List.of());

    LedgerRetention(JournalContext journal, LedgerRoller ledgers, JournalFaults faults) {
        this.journal = journal;
        this.ledgers = ledgers;
        this.deleteDropped = faults.dropWithoutDelete() != null ? faults.dropWithoutDelete()
                : id -> deleteLedger(id, 1);
        this.deleteAttempt = faults.deleteAttempts().apply(this::deleteInBookKeeper);
    }

    /**
     * Deletes the unregistered ledgers of earlier epochs once, in the background. Only once the registry is fenced at
     * {@code epoch} and lists this journal's first ledger: nothing of an earlier epoch can be registered any more, so
     * the snapshot is final for those epochs.
     */
    void startOrphanSweep(long epoch) {
        orphanSweep = new OrphanSweep(journal.bk(), journal.registry(), epoch, journal.admin(), ledgers::registered,
                journal.halt()::stopped,
                id -> journal.stats().ledgersSwept.increment()).start();
    }

    /** Completes with the ledgers the orphan sweep deleted (empty when off or none), or exceptionally if it gave up. */
    CompletableFuture<List<Long>> orphanSweep() {
        return orphanSweep;
    }

    /** A checkpoint's first part {@code e} is durable (delivery order): records it and looks for ledgers to drop. */
    void checkpointDurable(JournalEntry e) {
        synchronized (journal.lock()) {
            if (e.ledger == null) {
                return;
            }
            durableCheckpoints.addLast(new CheckpointMark(e.ledger.id(), e.checkpoint.clock(), e.checkpoint.tMax()));
        }
        journal.onJournalThread(this::dropOldLedgers);
    }

    /**
     * Runs on the journal thread (as rollovers do, so the registry snapshot cannot change meanwhile): finds the newest
     * durable checkpoint C whose clock is at or below the newest durable checkpoint's T_max and which leaves
     * at least {@code journal.retain.ledgers.min} ledgers, drops every ledger before C's from the registry
     * (compare-and-set: a deposed journal drops nothing), then deletes them in BookKeeper.
     */
    private void dropOldLedgers() {
        if (journal.halt().stopped()) {
            return;
        }
        LedgerRegistry.Snapshot reg;
        int drop = 0;
        synchronized (journal.lock()) {
            reg = ledgers.registered();
            if (durableCheckpoints.isEmpty()) {
                return;
            }
            long tMax = durableCheckpoints.peekLast().tMax();
            List<Long> listed = reg.ledgers();
            CheckpointMark target = null;
            for (CheckpointMark m : durableCheckpoints) {
                int at = listed.indexOf(m.ledgerId());
                if (m.clock() > tMax) {
                    break; // later checkpoints have later clocks
                }
                if (at >= 0 && listed.size() - at >= journal.settings().retainLedgersMin()) {
                    target = m;
                    drop = at;
                }
            }
            if (target == null || drop == 0) {
                return;
            }
            while (durableCheckpoints.peekFirst() != target) {
                durableCheckpoints.pollFirst();
            }
        }
        List<Long> dropped = List.copyOf(reg.ledgers().subList(0, drop));
        LedgerRegistry.Snapshot now;
        try {
            now = journal.registry().dropLedgers(reg, drop);
        } catch (LedgerRegistry.FencedException e) {
            journal.halt().fail("ledger registry taken over: " + e.getMessage(), e);
            return;
        } catch (IOException e) {
            LOG.warn("cannot drop journal ledgers {} from the registry ({}); trying again after the next checkpoint",
                    dropped, e.getMessage());
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        ledgers.registryChanged(now);
        journal.stats().ledgersDropped.add(dropped.size());
        LOG.info("journal ledgers {} dropped from {} after a checkpoint (T_max passed their commits); {} ledgers"
                + " registered", dropped, journal.registry().path(), now.ledgers().size());
        for (long id : dropped) {
            deleteDropped.accept(id);
        }
    }

    /**
     * Deletes a dropped ledger, trying again after a growing pause when BookKeeper fails (a ZooKeeper hiccup, bookies
     * restarting): a ledger that stays is only freed by the next leader's orphan sweep, which may be months away.
     */
    private void deleteLedger(long id, int attempt) {
        deleteAttempt.delete(id).whenComplete((code, error) -> {
            int rc = error != null ? BKException.Code.UnexpectedConditionException : code;
            if (rc == BKException.Code.OK || rc == BKException.Code.NoSuchLedgerExistsException
                    || rc == BKException.Code.NoSuchLedgerExistsOnMetadataServerException) {
                journal.stats().ledgersDeleted.increment();
                if (attempt > 1) {
                    LOG.info("journal ledger {} deleted at attempt {}", id, attempt);
                }
                return;
            }
            String why = error != null ? error.toString() : BKException.getMessage(rc);
            if (attempt < DELETE_ATTEMPTS && !journal.halt().stopped()) {
                long pauseMs = DELETE_FIRST_PAUSE_MS << (attempt - 1);
                LOG.warn("journal ledger {} was dropped from the registry but could not be deleted ({}); trying again"
                        + " in {} ms", id, why, pauseMs);
                try {
                    journal.admin().schedule(() -> deleteLedger(id, attempt + 1), pauseMs, TimeUnit.MILLISECONDS);
                    return;
                } catch (RejectedExecutionException closed) {
                    // fall through: closing
                }
            }
            // Unregistered already: nothing reads it any more; only its storage is not freed (an orphan).
            LOG.warn("journal ledger {} was dropped from the registry but could not be deleted after {} attempt(s)"
                    + " ({}); the next leader's orphan sweep deletes it", id, attempt, why);
        });
    }

    /** One delete of {@code id} in BookKeeper, completing with its return code (never exceptionally). */
    private CompletableFuture<Integer> deleteInBookKeeper(long id) {
        return journal.bk().newDeleteLedgerOp().withLedgerId(id).execute()
                .handle((done, error) -> error == null ? BKException.Code.OK : BKException.getExceptionCode(error));
    }
}
