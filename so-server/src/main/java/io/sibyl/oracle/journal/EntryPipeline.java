package io.sibyl.oracle.journal;

import org.apache.bookkeeper.client.BKException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Consumer;
import java.util.function.Function;

/**
 * The journal's entry pipeline: blocks are batched (group commit), sealed into entries, sent to the current ledger
 * with at most {@code journal.max.adds.in.flight} adds outstanding, and their callbacks delivered strictly in append
 * order once each entry and every earlier one is acknowledged. After a write failure every entry from the first one
 * the broken ledger left unacknowledged is sent again, in order, to the next ledger.
 *
 * <p>State is guarded by the journal lock, which {@code append} may wait on for back-pressure. Adds are issued, and
 * callbacks run, outside it: BookKeeper runs an add's callback while holding its own locks, and that callback takes
 * the journal lock.
 */
final class EntryPipeline implements LedgerRoller.Writer {
    private static final Logger LOG = LoggerFactory.getLogger(BookKeeperJournal.class);

    /** One add to issue: {@code entry} to {@code ledger} as attempt {@code attempt}. */
    private record Send(JournalEntry entry, JournalLedger ledger, int attempt) {
    }

    private final JournalContext journal;
    private final WriteProgress progress;
    private final LedgerRoller roller;
    /** Callbacks never run concurrently: one thread delivers at a time. */
    private final Object deliveryLock = new Object();
    private final AtomicBoolean issuing = new AtomicBoolean();
    private final CheckpointTrigger checkpoints;

    // Guarded by the journal lock.
    private final GroupCommitBatch batch = new GroupCommitBatch();
    private final ArrayDeque<JournalEntry> unacked = new ArrayDeque<>(); // not yet delivered, in append order
    private final ArrayDeque<JournalEntry> waiting = new ArrayDeque<>(); // sealed and not (re)sent yet, in order
    private final ArrayDeque<Send> outbox = new ArrayDeque<>(); // adds decided, to be issued in this order
    private int inFlight;
    private long pendingBytes;
    private boolean spaceWaiters;
    /**
     * When the head of the queue last moved (an entry delivered). A pending add is timed from the later of its send
     * and this: with many adds in flight to slow bookies, the last one sent can wait longer than the stall limit
     * while the ones ahead of it are still being acknowledged, and a journal that progresses is not stuck.
     */
    private long lastDeliveryNanos = System.nanoTime();

    EntryPipeline(JournalContext journal, WriteProgress progress, Function<LedgerRoller.Writer, LedgerRoller> rollers) {
        this.journal = journal;
        this.progress = progress;
        this.checkpoints = new CheckpointTrigger(journal.settings());
        this.roller = rollers.apply(this); // the roller only keeps it, to call back after a rollover
    }

    LedgerRoller roller() {
        return roller;
    }

    /** {@link io.sibyl.oracle.Journal#append}: batches {@code block}, or queues a barrier if it is null. */
    void append(byte[] block, Runnable onDurable) {
        boolean runNow = false;
        synchronized (journal.lock()) {
            if (journal.halt().stopped()) {
                journal.stats().droppedAppends.increment();
                return;
            }
            if (block == null) {
                if (!batch.isEmpty()) {
                    batch.addBarrier(onDurable);
                } else if (!unacked.isEmpty()) {
                    unacked.peekLast().callbacks.add(onDurable);
                } else {
                    runNow = true;
                }
            } else {
                awaitSpace(block.length);
                if (journal.halt().stopped()) {
                    journal.stats().droppedAppends.increment();
                    return;
                }
                if (!batch.isEmpty() && batch.bytes() + block.length > journal.settings().groupMaxBytes()) {
                    seal();
                }
                batch.add(block, onDurable);
                pendingBytes += block.length;
                journal.stats().appendedBlocks.increment();
                journal.stats().appendedBytes.add(block.length);
                if (batch.bytes() >= journal.settings().groupMaxBytes()) {
                    seal();
                }
                pump();
            }
        }
        issueAdds();
        if (runNow) {
            synchronized (deliveryLock) {
                if (!journal.halt().failed()) {
                    runCallback(onDurable);
                }
            }
        }
    }

    void checkpointsFollow() {
        checkpoints.follow();
    }

    boolean wantsCheckpoint() {
        return checkpoints.wanted();
    }

    /**
     * Queues a checkpoint's part entries after every block appended so far; its first part will open the next
     * ledger. {@code onDurable} gets that first part once the last part and everything before it are delivered.
     */
    void appendCheckpoint(Checkpoint checkpoint, Consumer<JournalEntry> onDurable) {
        // Several entries when the checkpoint is above Checkpoint.PART_BYTES: bookies refuse entries above 5 MB.
        List<byte[]> parts = checkpoint.entries();
        synchronized (journal.lock()) {
            checkpoints.answered();
            if (journal.halt().stopped()) {
                return;
            }
            if (!batch.isEmpty()) {
                seal();
            }
            JournalEntry first = null;
            JournalEntry e = null;
            for (byte[] data : parts) {
                e = new JournalEntry(data, 0, new ArrayList<>());
                if (first == null) {
                    first = e;
                    e.checkpoint = checkpoint; // the first part opens the next ledger (see send)
                }
                unacked.addLast(e);
                waiting.addLast(e);
                pendingBytes += data.length;
            }
            JournalEntry opening = first;
            e.callbacks.add(() -> onDurable.accept(opening));
            journal.stats().checkpointsAppended.increment();
            checkpoints.queued();
            pump();
        }
        issueAdds();
    }

    /** Blocks (releasing the lock) while too many bytes are unacknowledged. */
    private void awaitSpace(int bytes) {
        boolean interrupted = false;
        long limit = journal.settings().maxPendingBytes();
        while (pendingBytes > 0 && pendingBytes + bytes > limit && !journal.halt().stopped()) {
            spaceWaiters = true;
            try {
                journal.lock().wait();
            } catch (InterruptedException e) {
                interrupted = true; // the block must still be journaled: keep waiting, restore the flag after
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /**
     * Sends what can be sent, then seals the open batch if the idle or time trigger says so (and sends it). When the
     * batch must wait for its time, a timer is armed; when it must wait for an add slot or a new ledger, the
     * acknowledgement or the rollover that frees it calls this again.
     */
    private void pump() {
        send();
        if (batch.isEmpty() || journal.halt().failed()) {
            return;
        }
        if (roller.current() == null || inFlight >= journal.settings().maxAddsInFlight() || !waiting.isEmpty()) {
            return;
        }
        long age = batch.ageNanos();
        long delay = journal.settings().groupMaxDelayMicros() * 1000;
        if ((journal.settings().flushWhenIdle() && inFlight == 0) || age >= delay) {
            seal();
            send();
        } else if (!batch.timerArmed()) {
            long generation = batch.generation();
            batch.timerArmed(journal.admin().schedule(() -> onBatchTimer(generation), delay - age,
                    TimeUnit.NANOSECONDS));
        }
    }

    private void onBatchTimer(long generation) {
        synchronized (journal.lock()) {
            if (!journal.halt().failed() && batch.timerFired(generation)) {
                pump();
            }
        }
        issueAdds();
    }

    /** Turns the batch into an entry queued for sending. */
    private void seal() {
        JournalEntry e = batch.seal();
        unacked.addLast(e);
        waiting.addLast(e);
        journal.stats().sealedEntries.increment();
        checkpoints.sealed(e.data.length);
    }

    /**
     * Moves waiting entries to the outbox while the current ledger is usable and add slots are free. The adds are
     * issued by {@link #issueAdds()} once the lock is released.
     */
    private void send() {
        JournalLedger l;
        while (!waiting.isEmpty() && (l = roller.current()) != null && inFlight < journal.settings().maxAddsInFlight()
                && !journal.halt().failed()) {
            JournalEntry head = waiting.peekFirst();
            if (head.checkpoint != null && head.attempt == 0 && l.entriesSent > 0) {
                // A resent checkpoint may land mid-ledger (harmless: replaying it replaces the state with what it
                // already is); a new one opens its ledger, so recovery can start there.
                roller.startRollover("ledger " + l.id() + " reached " + l.fill() + "; a checkpoint starts the next");
                return;
            }
            JournalEntry e = waiting.pollFirst();
            int attempt = ++e.attempt;
            e.ledger = l;
            e.sentNanos = System.nanoTime();
            l.outstanding++;
            l.bytesSent += e.data.length;
            l.entriesSent++;
            inFlight++;
            outbox.addLast(new Send(e, l, attempt));
            if (!checkpoints.follows() && (l.bytesSent >= journal.settings().ledgerMaxBytes()
                    || l.entriesSent >= journal.settings().ledgerMaxEntries())) {
                roller.startRollover("ledger " + l.id() + " reached " + l.fill());
            }
        }
    }

    /**
     * Issues the outbox's adds in order, outside the journal lock. One thread issues at a time (so each ledger
     * receives its entries in append order); a thread that finds another issuing leaves its adds to it, and never
     * waits, since the issuing thread may be blocked inside BookKeeper on a lock held by the thread that came here
     * from an add callback.
     */
    @Override
    public void issueAdds() {
        while (true) {
            if (!issuing.compareAndSet(false, true)) {
                return;
            }
            try {
                while (!journal.halt().failed()) {
                    Send[] sends;
                    synchronized (journal.lock()) {
                        if (outbox.isEmpty()) {
                            break;
                        }
                        sends = outbox.toArray(new Send[0]);
                        outbox.clear();
                    }
                    for (Send s : sends) {
                        // Not WriteHandle.appendAsync: a future per entry, for a callback this code has already.
                        s.ledger().handle.asyncAddEntry(s.entry().data,
                                (rc, lh, entryId, ctx) -> onAdded(rc, s.entry(), s.ledger(), s.attempt()), null);
                    }
                }
            } finally {
                issuing.set(false);
            }
            synchronized (journal.lock()) {
                if (outbox.isEmpty() || journal.halt().failed()) {
                    return;
                }
            }
        }
    }

    @Override
    public void ledgerReady() {
        if (unacked.isEmpty()) {
            progress.progressed(); // nothing waits to be written: the new ledger is all we needed
        }
        pump();
    }

    private void onAdded(int rc, JournalEntry e, JournalLedger l, int attempt) {
        String fatalWhy = null;
        synchronized (journal.lock()) {
            if (e.attempt != attempt || e.ledger != l || journal.halt().failed()) {
                return; // a stale attempt: the entry was re-sent after its ledger broke
            }
            if (rc == BKException.Code.OK) {
                inFlight--;
                l.outstanding--;
                e.acked = true;
                journal.stats().ackedEntries.increment();
                journal.stats().ackedBytes.add(e.data.length);
                if (everyEarlierEntryAcked(e)) {
                    progress.progressed(); // progress where it matters: the next delivery can happen
                }
                roller.maybeCloseRetired(l);
            } else if (rc == BKException.Code.LedgerFencedException
                    || rc == BKException.Code.UnauthorizedAccessException) {
                fatalWhy = "journal ledger " + l.id() + " was fenced (" + BKException.getMessage(rc)
                        + "): a newer oracle took over";
            } else {
                breakLedger(l, rc);
                long failingFor = progress.failingForMs();
                if (failingFor >= journal.settings().writeRetryMs()) {
                    fatalWhy = "journal unwritable for " + failingFor + " ms: adds keep failing ("
                            + BKException.getMessage(rc) + ")";
                }
            }
            if (fatalWhy == null) {
                pump();
            }
        }
        if (fatalWhy != null) {
            journal.halt().fail(fatalWhy, BKException.create(rc));
            return;
        }
        issueAdds();
        deliver();
    }

    /**
     * Abandons {@code l} after a write failure. Every entry from the first one {@code l} left unacknowledged to the
     * newest goes back, in order, to be written again, including entries other ledgers already acknowledged: the
     * journal then holds that whole suffix in order once more, after any partial copies, so replaying it in ledger
     * order ends in the right state (see {@link JournalReplay}). Those entries are delivered only once re-acknowledged.
     */
    private void breakLedger(JournalLedger l, int rc) {
        if (l.broken) {
            return;
        }
        l.broken = true;
        progress.failing();
        ArrayList<JournalEntry> again = new ArrayList<>();
        boolean fromHere = false;
        for (JournalEntry e : unacked) {
            if (!fromHere && !e.acked && e.ledger == l) {
                fromHere = true;
            }
            if (fromHere) {
                if (e.ledger != null && !e.acked) {
                    inFlight--;
                    e.ledger.outstanding--;
                }
                JournalLedger was = e.ledger;
                e.acked = false;
                e.ledger = null;
                again.add(e);
                if (was != null && was != l) {
                    roller.maybeCloseRetired(was);
                }
            }
        }
        waiting.clear();
        waiting.addAll(again);
        journal.stats().resentEntries.add(again.size());
        LOG.warn("journal ledger {} failed ({}); {} entries will be written again to a new ledger",
                l.id(), BKException.getMessage(rc), again.size());
        roller.abandon(l, rc);
    }

    /** True when every undelivered entry before {@code e} is acknowledged (stops at the first that is not). */
    private boolean everyEarlierEntryAcked(JournalEntry e) {
        for (JournalEntry u : unacked) {
            if (u == e) {
                return true;
            }
            if (!u.acked) {
                return false;
            }
        }
        return true;
    }

    /** Runs, in order, the callbacks of every acknowledged entry at the head of the queue. */
    private void deliver() {
        synchronized (deliveryLock) {
            while (!journal.halt().failed()) {
                JournalEntry e;
                synchronized (journal.lock()) {
                    e = unacked.peekFirst();
                    if (e == null || !e.acked) {
                        return;
                    }
                    unacked.pollFirst();
                    lastDeliveryNanos = System.nanoTime();
                    pendingBytes -= e.data.length;
                    if (spaceWaiters || journal.halt().closing()) {
                        spaceWaiters = false;
                        journal.lock().notifyAll();
                    }
                }
                for (Runnable cb : e.callbacks) {
                    if (journal.halt().failed()) {
                        return;
                    }
                    runCallback(cb);
                }
            }
        }
    }

    private static void runCallback(Runnable cb) {
        try {
            cb.run();
        } catch (Throwable t) {
            LOG.error("journal callback failed", t);
        }
    }

    /** After a fatal error (lock held): no batch timer fires any more, and waiting appenders and closers wake. */
    void failed() {
        batch.cancelTimer();
        journal.lock().notifyAll();
    }

    /** Seals and sends what is batched, for a clean close (lock held). */
    void flush() {
        if (!batch.isEmpty() && !journal.halt().failed()) {
            seal();
            send();
        }
    }

    /** Waits (lock held, releasing it) until every entry is delivered, the journal fails, or the deadline passes. */
    void awaitDelivered(long deadlineNanos) {
        boolean interrupted = false;
        while (!unacked.isEmpty() && !journal.halt().failed()) {
            long left = deadlineNanos - System.nanoTime();
            if (left <= 0) {
                LOG.warn("journal closed with {} entries unacknowledged; their replies are never sent", unacked.size());
                break;
            }
            try {
                journal.lock().wait(Math.max(1, left / 1_000_000));
            } catch (InterruptedException e) {
                interrupted = true;
                break;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** How long writes have failed, and the oldest undelivered add has been pending, and where (-1: none). */
    record Stall(long failingForMs, long pendingForMs, long ledgerId) {
    }

    Stall stall() {
        synchronized (journal.lock()) {
            long failingFor = unacked.isEmpty() && !roller.rolling() ? -1 : progress.failingForMs();
            JournalEntry oldest = unacked.peekFirst();
            if (oldest != null && oldest.ledger != null && !oldest.acked) {
                long pendingFor = (System.nanoTime() - Math.max(oldest.sentNanos, lastDeliveryNanos)) / 1_000_000;
                return new Stall(failingFor, pendingFor, oldest.ledger.id());
            }
            return new Stall(failingFor, -1, -1);
        }
    }

    /** The counters with the pipeline's gauges. */
    BookKeeperJournal.Stats stats() {
        synchronized (journal.lock()) {
            return journal.stats().snapshot(inFlight, unacked.size(), pendingBytes);
        }
    }
}
