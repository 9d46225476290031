package io.sibyl.oracle.journal;

import io.sibyl.oracle.Journal;
import org.apache.bookkeeper.client.BKException;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.LedgerHandle;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.LongConsumer;
import java.util.function.LongFunction;

/**
 * The durable {@link Journal}: decision blocks go to a BookKeeper ledger, several blocks per entry (group commit),
 * several entries in flight, callbacks released strictly in append order as entries are acknowledged.
 *
 * <h2>Group commit</h2>
 * Appended blocks collect in a batch. The batch becomes one ledger entry (the plain concatenation of its blocks, each
 * self-delimiting) when it reaches {@code journal.group.max.bytes}, when no add is in flight and
 * {@code journal.group.flush.when.idle} is set (an idle oracle pays no added latency), or when its first block has
 * waited {@code journal.group.max.delay.us}. At most {@code journal.max.adds.in.flight} entries are outstanding;
 * meanwhile the batch keeps growing, so a slow bookie produces bigger entries rather than a queue of small ones.
 * {@code append} blocks its caller only when {@code journal.max.pending.bytes} are unacknowledged.
 *
 * <h2>Ordering</h2>
 * Every sealed entry joins one queue in append order; an entry's callbacks run once it and every earlier entry are
 * acknowledged, under one delivery lock (so callbacks never run concurrently). A null block (barrier) joins the open
 * batch, or else the newest unacknowledged entry, or runs at once when nothing is outstanding.
 *
 * <h2>Ledgers</h2>
 * A ledger is registered in the {@link LedgerRegistry} before its first entry is written. The journal rolls over to a
 * new ledger after {@code journal.ledger.max.bytes} / {@code journal.ledger.max.entries}. When a write fails for any
 * reason but fencing (typically a bookie lost while the ensemble cannot be repaired, e.g. E3 on only 3 bookies),
 * the ledger is abandoned, a new one is created (with a smaller ensemble, down to the write quorum, if bookies are
 * missing), and every unacknowledged entry is sent again in order. Recovery tolerates the duplicates this can leave
 * (see {@link JournalRecovery}).
 *
 * <h2>Checkpoints and deletion</h2>
 * When the oracle supplies checkpoints ({@link #checkpointsFollow()}), the size limits count entries as they are
 * sealed: once the entries since the last checkpoint fill a ledger, the journal asks for a {@link Checkpoint}
 * ({@link #wantsCheckpoint()}), which the sequencer takes right after its next append, and rolls over when that
 * checkpoint is next to send, so it is the new ledger's first entry (a checkpoint above 1 MB is several consecutive
 * part entries, see {@link Checkpoint}: bookies refuse entries above 5 MB). Once a checkpoint is
 * durable (delivered: it and everything before it acknowledged), the ledgers before the one holding checkpoint C are
 * dropped from the registry and then deleted when C's clock (an upper bound of every commit timestamp journaled
 * before C) is at or below the T_max of the newest durable checkpoint: every commit they hold is then
 * "committed long ago", and C carries the rest of their state. {@code journal.retain.ledgers.min} keeps more.
 * A crash between drop and delete leaves orphans; with {@code journal.sweep.orphans}, a journal that starts as leader
 * deletes the unregistered ledgers of earlier epochs of its registry once ({@link OrphanSweep}).
 *
 * <h2>Fatal errors</h2>
 * The journal stops for good, runs no further callback (so no dependent reply leaves) and tells the
 * {@link FatalErrorListener} once, when: a ledger is fenced (a newer oracle opened it for recovery); the registry was
 * taken over (compare-and-set failed, or a watch shows another epoch); the ZooKeeper session expired or stayed
 * disconnected for longer than its timeout; no ledger could be written for {@code journal.write.retry.ms}; or the
 * oldest undelivered entry's add stayed pending that long with no entry delivered meanwhile, failed or not (and at
 * least BookKeeper's add timeout).
 *
 * <p>{@code append} may be called from any thread; callbacks run on BookKeeper's callback threads (or on the
 * appending thread for a barrier with nothing outstanding).
 */
public final class BookKeeperJournal implements Journal {
    private static final Logger LOG = LoggerFactory.getLogger(BookKeeperJournal.class);
    private static final long WATCHDOG_PERIOD_MS = 100;
    /** Attempts to delete a dropped ledger (pauses 0.5, 1, 2, 4 ... s between them, about 4 min in all). */
    static final int DELETE_ATTEMPTS = 10;
    static final long DELETE_FIRST_PAUSE_MS = 500;
    /** Pause before the rollover after the second write failure in a row; doubles with each, up to the max. */
    static final long ROLLOVER_FIRST_PAUSE_MS = 50;
    static final long ROLLOVER_MAX_PAUSE_MS = 1000;

    /** One ledger entry: the concatenation of sealed blocks, with the callbacks that wait for it. */
    private static final class Entry {
        final byte[] data;
        final int blocks;
        final ArrayList<Runnable> callbacks;
        Checkpoint checkpoint; // non-null for a checkpoint entry (the first, for a checkpoint in several parts)
        LedgerState ledger; // where the current attempt was sent; null while waiting to be (re)sent
        int attempt;
        long sentNanos; // when the current attempt was sent
        boolean acked;

        Entry(byte[] data, int blocks, ArrayList<Runnable> callbacks) {
            this.data = data;
            this.blocks = blocks;
            this.callbacks = callbacks;
        }
    }

    /** One add to issue: {@code entry} to {@code ledger} as attempt {@code attempt}. */
    private record Send(Entry entry, LedgerState ledger, int attempt) {
    }

    /** A ledger the journal writes or wrote. */
    private static final class LedgerState {
        final LedgerHandle handle;
        final int ensemble;
        long bytesSent;
        long entriesSent;
        int outstanding;
        boolean broken;
        boolean retired;
        boolean closeRequested;

        LedgerState(LedgerHandle handle, int ensemble) {
            this.handle = handle;
            this.ensemble = ensemble;
        }
    }

    /** A durable checkpoint: the ledger its acknowledged copy is in, its clock and its T_max. */
    private record CheckpointMark(long ledgerId, long clock, long tMax) {
    }

    private final BookKeeper bk;
    private final LedgerRegistry registry;
    private final JournalSettings settings;
    /** The writing oracle's reader.grace.ms, recorded in each ledger's metadata (0: not recorded). */
    private final long readerGraceMillis;
    /**
     * The longest grace the journal's earlier writers recorded: recorded instead while it lasts from this journal's
     * start, so that an oracle taking over from this one soon holds long enough for those writers' readers too.
     */
    private final long inheritedGraceMillis;
    private final long startedNanos = System.nanoTime();
    private final FatalErrorListener listener;
    private final byte[] password;
    private final ScheduledThreadPoolExecutor admin;
    private final Object deliveryLock = new Object();
    private final AtomicBoolean fatal = new AtomicBoolean();
    private final AtomicBoolean issuing = new AtomicBoolean();
    private final Watcher registryWatcher = this::onZooKeeperEvent;
    private volatile String fatalReason;
    private volatile long disconnectedSinceNanos = -1;
    private volatile boolean checkpointsFollow;
    private volatile boolean checkpointWanted;
    /** Deletes a dropped ledger in BookKeeper; tests replace it to leave orphans, as a crash after the drop does. */
    private volatile LongConsumer deleter = id -> deleteLedger(id, 1);
    /** One delete of a ledger in BookKeeper, completing with its return code; tests make it fail. */
    private volatile LongFunction<CompletableFuture<Integer>> deleteAttempt = this::deleteInBookKeeper;

    // Everything below is guarded by 'this'.
    private LedgerRegistry.Snapshot registered;
    private LedgerState current; // null while a rollover is under way
    private final List<LedgerState> retired = new ArrayList<>();
    private final List<AutoCloseable> owned = new ArrayList<>();
    private boolean rolling;
    private int nextEnsemble; // ensemble size the next ledger starts from
    private volatile boolean closing;
    private final ArrayDeque<Entry> unacked = new ArrayDeque<>(); // every entry not yet delivered, in append order
    private final ArrayDeque<Entry> waiting = new ArrayDeque<>(); // sealed and not (re)sent yet, in append order
    private final ArrayDeque<Send> outbox = new ArrayDeque<>(); // adds decided, to be issued in this order
    private final ArrayList<byte[]> batchBlocks = new ArrayList<>();
    private ArrayList<Runnable> batchCallbacks = new ArrayList<>();
    private int batchBytes;
    private long batchStartNanos;
    private long batchGeneration;
    private ScheduledFuture<?> batchTimer;
    private int inFlight;
    private long pendingBytes;
    /**
     * When writes started failing with no progress since: set by the first failed add or rollover, reset only when
     * the oldest undelivered entry is acknowledged (an entry that no ledger accepts must not be excused by the entries
     * behind it). Past journal.write.retry.ms the error is fatal, checked on every failure and by the watchdog (an add
     * to a ledger with faulty bookies can take BookKeeper's add timeout to fail, or never complete).
     */
    private long failingSinceNanos = -1;
    /**
     * When the head of the queue last moved (an entry delivered). A pending add is timed from the later of its send
     * and this: with many adds in flight to slow bookies, the last one sent can wait longer than the stall limit
     * while the ones ahead of it are still being acknowledged, and a journal that progresses is not stuck.
     */
    private long lastDeliveryNanos = System.nanoTime();
    /** Ledgers broken by a write failure since the oldest undelivered entry last progressed: paces the rollovers. */
    private int writeFailuresInARow;
    private boolean spaceWaiters;
    private long entriesSinceCheckpoint; // sealed since the last checkpoint (or the start): the next ledger's size
    private long bytesSinceCheckpoint;
    private final ArrayDeque<CheckpointMark> durableCheckpoints = new ArrayDeque<>();

    // Statistics (guarded by 'this').
    private long appendedBlocks;
    private long appendedBytes;
    private long sealedEntries;
    private long ackedEntries;
    private long ackedBytes;
    private long resentEntries;
    private long ledgersCreated;
    private long droppedAppends;
    private long checkpointsAppended;
    private long ledgersDropped;
    private long ledgersDeleted;
    private long ledgersSwept;
    private volatile CompletableFuture<List<Long>> orphanSweep = CompletableFuture.completedFuture(List.of());

    private BookKeeperJournal(BookKeeper bk, LedgerRegistry registry, LedgerRegistry.Snapshot fenced,
                              JournalSettings settings, FatalErrorListener listener, long readerGraceMillis,
                              long inheritedGraceMillis) {
        this.bk = bk;
        this.readerGraceMillis = readerGraceMillis;
        this.inheritedGraceMillis = inheritedGraceMillis;
        this.registry = registry;
        this.settings = settings;
        this.listener = listener;
        this.password = settings.password().getBytes(StandardCharsets.UTF_8);
        this.registered = fenced;
        this.nextEnsemble = settings.ensembleSize();
        this.admin = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "sibyl-journal");
            t.setDaemon(true);
            return t;
        });
        admin.setRemoveOnCancelPolicy(true);
    }

    /**
     * Starts a journal that continues the registry {@code fenced} (the snapshot {@link JournalRecovery} returned,
     * or {@link LedgerRegistry#fence} for a brand-new journal): creates and registers the first ledger, then accepts
     * appends. The caller keeps ownership of {@code bk} and of the registry's ZooKeeper client.
     */
    public static BookKeeperJournal open(BookKeeper bk, LedgerRegistry registry, LedgerRegistry.Snapshot fenced,
                                         JournalSettings settings, FatalErrorListener listener)
            throws IOException, InterruptedException {
        return open(bk, registry, fenced, settings, listener, 0, 0);
    }

    /**
     * As {@link #open(BookKeeper, LedgerRegistry, LedgerRegistry.Snapshot, JournalSettings, FatalErrorListener)},
     * recording {@code readerGraceMillis} (the writing oracle's {@code reader.grace.ms}) in every ledger it creates,
     * for the oracle that recovers them ({@link RecoveredState#writerGraceMillis()}); for ledgers created within
     * {@code inheritedGraceMillis} (the recovered {@code writerGraceMillis}) of now, the longer of the two.
     */
    public static BookKeeperJournal open(BookKeeper bk, LedgerRegistry registry, LedgerRegistry.Snapshot fenced,
                                         JournalSettings settings, FatalErrorListener listener,
                                         long readerGraceMillis, long inheritedGraceMillis)
            throws IOException, InterruptedException {
        BookKeeperJournal j = new BookKeeperJournal(bk, registry, fenced, settings, listener, readerGraceMillis,
                inheritedGraceMillis);
        try {
            j.startFirstLedger();
        } catch (IOException | InterruptedException | RuntimeException e) {
            j.admin.shutdownNow();
            j.removeWatch();
            throw e;
        }
        return j;
    }

    /** Clients (or anything else) closed after the journal's ledgers, in the order given. */
    public void closeAfterwards(AutoCloseable... resources) {
        synchronized (this) {
            owned.addAll(List.of(resources));
        }
    }

    private void removeWatch() {
        try {
            registry.zooKeeper().removeWatches(registry.path(), registryWatcher, Watcher.WatcherType.Any, true);
        } catch (KeeperException | InterruptedException | RuntimeException e) {
            // the session may be gone; nothing to clean up then
        }
    }

    private void startFirstLedger() throws IOException, InterruptedException {
        ZooKeeper zk = registry.zooKeeper();
        try {
            zk.addWatch(registry.path(), registryWatcher, AddWatchMode.PERSISTENT);
        } catch (KeeperException e) {
            throw new IOException("cannot watch the ledger registry " + registry.path() + ": " + e.getMessage(), e);
        }
        LedgerState first;
        LedgerRegistry.Snapshot next;
        try {
            first = createLedger(registered);
        } catch (BKException e) {
            throw new IOException("cannot create a journal ledger: " + e.getMessage(), e);
        }
        try {
            next = registry.addLedger(registered, first.handle.getId());
        } catch (IOException e) {
            deleteQuietly(first.handle);
            throw e;
        }
        synchronized (this) {
            registered = next;
            current = first;
        }
        // A takeover between fence() and the watch being set would be missed by the watch; read once to be sure.
        checkRegistry();
        admin.scheduleWithFixedDelay(this::watchdog, WATCHDOG_PERIOD_MS, WATCHDOG_PERIOD_MS, TimeUnit.MILLISECONDS);
        LOG.info("journal open: epoch {}, ledger {} (E{}/W{}/A{}), {} ledgers registered in {}", next.epoch(),
                first.handle.getId(), first.ensemble, settings.writeQuorum(), settings.ackQuorum(),
                next.ledgers().size(), registry.path());
        warnIfNoSpareBookie();
        if (settings.sweepOrphans()) {
            // Only now: the registry is fenced at our epoch and lists our first ledger, so nothing of an earlier
            // epoch can be registered any more and the snapshot is final for those epochs.
            orphanSweep = new OrphanSweep(bk, registry, next.epoch(), admin, this::registeredSnapshot,
                    () -> fatal.get() || closing, id -> {
                        synchronized (this) {
                            ledgersSwept++;
                        }
                    }).start();
        }
    }

    private synchronized LedgerRegistry.Snapshot registeredSnapshot() {
        return registered;
    }

    // ----------------------------------------------------------------------------------------------- appending

    @Override
    public void append(byte[] block, Runnable onDurable) {
        boolean runNow = false;
        synchronized (this) {
            if (fatal.get() || closing) {
                droppedAppends++;
                return;
            }
            if (block == null) {
                if (!batchBlocks.isEmpty()) {
                    batchCallbacks.add(onDurable);
                } else if (!unacked.isEmpty()) {
                    unacked.peekLast().callbacks.add(onDurable);
                } else {
                    runNow = true;
                }
            } else {
                awaitSpace(block.length);
                if (fatal.get() || closing) {
                    droppedAppends++;
                    return;
                }
                if (!batchBlocks.isEmpty() && batchBytes + block.length > settings.groupMaxBytes()) {
                    seal();
                }
                if (batchBlocks.isEmpty()) {
                    batchStartNanos = System.nanoTime();
                }
                batchBlocks.add(block);
                batchCallbacks.add(onDurable);
                batchBytes += block.length;
                pendingBytes += block.length;
                appendedBlocks++;
                appendedBytes += block.length;
                if (batchBytes >= settings.groupMaxBytes()) {
                    seal();
                }
                pump();
            }
        }
        issueAdds();
        if (runNow) {
            synchronized (deliveryLock) {
                if (!fatal.get()) {
                    runCallback(onDurable);
                }
            }
        }
    }

    @Override
    public void checkpointsFollow() {
        checkpointsFollow = true;
    }

    @Override
    public boolean wantsCheckpoint() {
        return checkpointWanted;
    }

    /**
     * Queues {@code checkpoint} as an entry of its own (or, above {@link Checkpoint#PART_BYTES}, consecutive part
     * entries) after every block appended so far; it (its first part) becomes the first entry of the next ledger. Its
     * callback (run in delivery order, when its last part and everything before it are durable) records it, in the
     * ledger of its first part, for {@link #dropOldLedgers()}.
     */
    @Override
    public void appendCheckpoint(Checkpoint checkpoint) {
        // Several entries when the checkpoint is above Checkpoint.PART_BYTES: bookies refuse entries above 5 MB.
        List<byte[]> parts = checkpoint.entries();
        synchronized (this) {
            checkpointWanted = false;
            if (fatal.get() || closing) {
                return;
            }
            if (!batchBlocks.isEmpty()) {
                seal();
            }
            Entry first = null;
            Entry e = null;
            for (byte[] data : parts) {
                e = new Entry(data, 0, new ArrayList<>());
                if (first == null) {
                    first = e;
                    e.checkpoint = checkpoint; // the first part opens the next ledger (see send)
                }
                unacked.addLast(e);
                waiting.addLast(e);
                pendingBytes += data.length;
            }
            Entry opening = first;
            // Durable once its last part is (and so every part before it); recovery starts at the first part's ledger.
            e.callbacks.add(() -> checkpointDurable(opening));
            checkpointsAppended++;
            entriesSinceCheckpoint = 0;
            bytesSinceCheckpoint = 0;
            pump();
        }
        issueAdds();
    }

    /** Blocks (releasing the lock) while too many bytes are unacknowledged. */
    private void awaitSpace(int bytes) {
        boolean interrupted = false;
        while (pendingBytes > 0 && pendingBytes + bytes > settings.maxPendingBytes() && !fatal.get() && !closing) {
            spaceWaiters = true;
            try {
                wait();
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
        if (batchBlocks.isEmpty() || fatal.get()) {
            return;
        }
        if (rolling || current == null || inFlight >= settings.maxAddsInFlight() || !waiting.isEmpty()) {
            return;
        }
        long age = System.nanoTime() - batchStartNanos;
        long delay = settings.groupMaxDelayMicros() * 1000;
        if ((settings.flushWhenIdle() && inFlight == 0) || age >= delay) {
            seal();
            send();
        } else if (batchTimer == null) {
            long generation = batchGeneration;
            batchTimer = admin.schedule(() -> onBatchTimer(generation), delay - age, TimeUnit.NANOSECONDS);
        }
    }

    private void onBatchTimer(long generation) {
        synchronized (this) {
            if (generation == batchGeneration && !fatal.get()) {
                batchTimer = null;
                pump();
            }
        }
        issueAdds();
    }

    /** Turns the batch into an entry queued for sending. */
    private void seal() {
        byte[] data;
        if (batchBlocks.size() == 1) {
            data = batchBlocks.get(0);
        } else {
            data = new byte[batchBytes];
            int at = 0;
            for (byte[] b : batchBlocks) {
                System.arraycopy(b, 0, data, at, b.length);
                at += b.length;
            }
        }
        Entry e = new Entry(data, batchBlocks.size(), batchCallbacks);
        batchBlocks.clear();
        batchCallbacks = new ArrayList<>();
        batchBytes = 0;
        batchGeneration++;
        if (batchTimer != null) {
            batchTimer.cancel(false);
            batchTimer = null;
        }
        unacked.addLast(e);
        waiting.addLast(e);
        sealedEntries++;
        // Counted in append order, not when sent: the checkpoint must follow the entries that fill the ledger.
        entriesSinceCheckpoint++;
        bytesSinceCheckpoint += data.length;
        if (checkpointsFollow && (entriesSinceCheckpoint >= settings.ledgerMaxEntries()
                || bytesSinceCheckpoint >= settings.ledgerMaxBytes())) {
            checkpointWanted = true;
        }
    }

    /**
     * Moves waiting entries to the outbox while the current ledger is usable and add slots are free. The adds are
     * issued by {@link #issueAdds()} once the lock is released: BookKeeper may run an add's callback while holding
     * its own locks, and the callback takes this journal's lock, so adds must never be issued under it.
     */
    private void send() {
        while (!waiting.isEmpty() && current != null && !rolling && inFlight < settings.maxAddsInFlight()
                && !fatal.get()) {
            Entry head = waiting.peekFirst();
            if (head.checkpoint != null && head.attempt == 0) {
                if (current.entriesSent > 0) {
                    // A resent checkpoint may land mid-ledger (harmless: replaying it replaces the state with what
                    // it already is); a new one opens its ledger, so recovery can start there.
                    startRollover("ledger " + current.handle.getId() + " reached " + current.entriesSent
                            + " entries / " + current.bytesSent + " bytes; a checkpoint starts the next");
                    return;
                }
            }
            Entry e = waiting.pollFirst();
            LedgerState l = current;
            int attempt = ++e.attempt;
            e.ledger = l;
            e.sentNanos = System.nanoTime();
            l.outstanding++;
            l.bytesSent += e.data.length;
            l.entriesSent++;
            inFlight++;
            outbox.addLast(new Send(e, l, attempt));
            if (!checkpointsFollow
                    && (l.bytesSent >= settings.ledgerMaxBytes() || l.entriesSent >= settings.ledgerMaxEntries())) {
                startRollover("ledger " + l.handle.getId() + " reached " + l.entriesSent + " entries / "
                        + l.bytesSent + " bytes");
            }
        }
    }

    /**
     * Issues the outbox's adds in order, outside the journal lock. One thread issues at a time (so each ledger
     * receives its entries in append order); a thread that finds another issuing leaves its adds to it, and never
     * waits, since the issuing thread may be blocked inside BookKeeper on a lock held by the thread that came here
     * from an add callback.
     */
    private void issueAdds() {
        while (true) {
            if (!issuing.compareAndSet(false, true)) {
                return;
            }
            try {
                while (!fatal.get()) {
                    Send[] batch;
                    synchronized (this) {
                        if (outbox.isEmpty()) {
                            break;
                        }
                        batch = outbox.toArray(new Send[0]);
                        outbox.clear();
                    }
                    for (Send s : batch) {
                        s.ledger().handle.asyncAddEntry(s.entry().data,
                                (rc, lh, entryId, ctx) -> onAdded(rc, s.entry(), s.ledger(), s.attempt()), null);
                    }
                }
            } finally {
                issuing.set(false);
            }
            synchronized (this) {
                if (outbox.isEmpty() || fatal.get()) {
                    return;
                }
            }
        }
    }

    private void onAdded(int rc, Entry e, LedgerState l, int attempt) {
        String fatalWhy = null;
        synchronized (this) {
            if (e.attempt != attempt || e.ledger != l || fatal.get()) {
                return; // a stale attempt: the entry was re-sent after its ledger broke
            }
            if (rc == BKException.Code.OK) {
                inFlight--;
                l.outstanding--;
                e.acked = true;
                ackedEntries++;
                ackedBytes += e.data.length;
                if (everyEarlierEntryAcked(e)) {
                    failingSinceNanos = -1; // progress where it matters: the next delivery can happen
                    writeFailuresInARow = 0;
                }
                maybeCloseRetired(l);
            } else if (rc == BKException.Code.LedgerFencedException
                    || rc == BKException.Code.UnauthorizedAccessException) {
                fatalWhy = "journal ledger " + l.handle.getId() + " was fenced (" + BKException.getMessage(rc)
                        + "): a newer oracle took over";
            } else {
                breakLedger(l, rc);
                long failingFor = failingForMs();
                if (failingFor >= settings.writeRetryMs()) {
                    fatalWhy = "journal unwritable for " + failingFor + " ms: adds keep failing ("
                            + BKException.getMessage(rc) + ")";
                }
            }
            if (fatalWhy == null) {
                pump();
            }
        }
        if (fatalWhy != null) {
            fatal(fatalWhy, BKException.create(rc));
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
    private void breakLedger(LedgerState l, int rc) {
        if (l.broken) {
            return;
        }
        l.broken = true;
        if (failingSinceNanos < 0) {
            failingSinceNanos = System.nanoTime();
        }
        ArrayList<Entry> again = new ArrayList<>();
        boolean fromHere = false;
        for (Entry e : unacked) {
            if (!fromHere && !e.acked && e.ledger == l) {
                fromHere = true;
            }
            if (fromHere) {
                if (e.ledger != null && !e.acked) {
                    inFlight--;
                    e.ledger.outstanding--;
                }
                LedgerState was = e.ledger;
                e.acked = false;
                e.ledger = null;
                again.add(e);
                if (was != null && was != l) {
                    maybeCloseRetired(was);
                }
            }
        }
        waiting.clear();
        waiting.addAll(again);
        resentEntries += again.size();
        LOG.warn("journal ledger {} failed ({}); {} entries will be written again to a new ledger",
                l.handle.getId(), BKException.getMessage(rc), again.size());
        closeLater(l, false); // BookKeeper may have closed it already
        // A bookie of this ledger is gone and could not be replaced: the client's bookie list may still show it for
        // a while, so start the next ledger one bookie smaller (never below the write quorum). The next size-driven
        // rollover tries the full ensemble again.
        nextEnsemble = Math.max(settings.writeQuorum(), Math.min(nextEnsemble, l.ensemble - 1));
        if (l == current) {
            current = null;
            // The first failure (a lost bookie) rolls over at once; repeated ones are paced, so a journal whose adds
            // fail on every ledger does not create and register hundreds of ledgers before its deadline.
            writeFailuresInARow++;
            long pauseMs = writeFailuresInARow < 2 ? 0
                    : Math.min(ROLLOVER_MAX_PAUSE_MS, ROLLOVER_FIRST_PAUSE_MS << Math.min(10, writeFailuresInARow - 2));
            startRollover("write failure on ledger " + l.handle.getId() + ": " + BKException.getMessage(rc), pauseMs);
        }
    }

    /** True when every undelivered entry before {@code e} is acknowledged (stops at the first that is not). */
    private boolean everyEarlierEntryAcked(Entry e) {
        for (Entry u : unacked) {
            if (u == e) {
                return true;
            }
            if (!u.acked) {
                return false;
            }
        }
        return true;
    }

    /** How long writes have failed without progress (guarded by 'this'), or -1 when they are not failing. */
    private long failingForMs() {
        return failingSinceNanos < 0 ? -1 : (System.nanoTime() - failingSinceNanos) / 1_000_000;
    }

    private void maybeCloseRetired(LedgerState l) {
        if (l.retired && !l.broken && l.outstanding == 0 && !l.closeRequested) {
            l.closeRequested = true;
            retired.remove(l);
            closeLater(l, true);
        }
    }

    /** Closes a ledger from the journal thread (never under the journal lock, for the same reason as adds). */
    private void closeLater(LedgerState l, boolean fencedIsFatal) {
        try {
            admin.execute(() -> l.handle.asyncClose((rc, lh, ctx) -> {
                if (rc == BKException.Code.LedgerFencedException && fencedIsFatal) {
                    fatal("journal ledger " + l.handle.getId() + " was fenced while closing", BKException.create(rc));
                } else if (rc != BKException.Code.OK && fencedIsFatal) {
                    LOG.warn("closing journal ledger {}: {}", l.handle.getId(), BKException.getMessage(rc));
                }
            }, null));
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // journal closed
        }
    }

    // ----------------------------------------------------------------------------------------------- rollover

    private void startRollover(String reason) {
        startRollover(reason, 0);
    }

    private void startRollover(String reason, long pauseMs) {
        if (rolling || fatal.get()) {
            return;
        }
        rolling = true;
        LedgerState old = current;
        current = null;
        if (old != null && !old.broken) {
            old.retired = true;
            retired.add(old);
            maybeCloseRetired(old);
        }
        LOG.info("journal rolling over to a new ledger{}: {}", pauseMs > 0 ? " in " + pauseMs + " ms" : "", reason);
        try {
            admin.schedule(this::rollover, pauseMs, TimeUnit.MILLISECONDS);
        } catch (java.util.concurrent.RejectedExecutionException e) {
            // journal closed
        }
    }

    /** Runs on the journal thread: creates and registers a new ledger, retrying until it works or time is up. */
    private void rollover() {
        long backoffMs = 50;
        while (!fatal.get()) {
            LedgerRegistry.Snapshot expected;
            long failingFor;
            synchronized (this) {
                expected = registered;
                failingFor = failingForMs();
            }
            if (failingFor >= settings.writeRetryMs()) {
                fatal("journal unwritable for " + failingFor + " ms: no new ledger accepted the pending entries", null);
                return;
            }
            try {
                LedgerState next = createLedger(expected);
                LedgerRegistry.Snapshot now;
                try {
                    now = registry.addLedger(expected, next.handle.getId());
                } catch (IOException e) {
                    deleteQuietly(next.handle);
                    throw e;
                }
                synchronized (this) {
                    registered = now;
                    current = next;
                    rolling = false;
                    if (unacked.isEmpty()) {
                        failingSinceNanos = -1; // nothing waits to be written: the new ledger is all we needed
                        writeFailuresInARow = 0;
                    }
                    pump();
                }
                issueAdds();
                LOG.info("journal ledger {} (E{}/W{}/A{}) registered, {} ledgers in {}", next.handle.getId(),
                        next.ensemble, settings.writeQuorum(), settings.ackQuorum(), now.ledgers().size(),
                        registry.path());
                return;
            } catch (LedgerRegistry.FencedException e) {
                fatal("ledger registry taken over: " + e.getMessage(), e);
                return;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (IOException | BKException | RuntimeException e) {
                synchronized (this) {
                    if (failingSinceNanos < 0) {
                        failingSinceNanos = System.nanoTime();
                    }
                    failingFor = failingForMs();
                }
                if (failingFor >= settings.writeRetryMs()) {
                    fatal("journal unwritable for " + failingFor + " ms: " + e.getMessage(), e);
                    return;
                }
                LOG.warn("journal cannot start a new ledger yet ({}); retrying in {} ms", e.getMessage(), backoffMs);
                try {
                    Thread.sleep(backoffMs);
                } catch (InterruptedException ie) {
                    Thread.currentThread().interrupt();
                    return;
                }
                backoffMs = Math.min(1000, backoffMs * 2);
            }
        }
    }

    /**
     * Recovering a ledger (the next takeover) writes its entries past the last-add-confirmed again, and a lost bookie
     * in their write set can only be replaced by one outside the ledger's ensemble: with an ensemble of every bookie,
     * no oracle can take over while one of them is down. Said at start-up, where an operator looks.
     */
    private void warnIfNoSpareBookie() {
        try {
            // Asynchronous: a takeover opens the journal on its critical path.
            bk.getMetadataClientDriver().getRegistrationClient().getWritableBookies().whenComplete((bookies, e) -> {
                if (e != null) {
                    LOG.debug("cannot count the writable bookies: {}", e.toString());
                } else if (settings.ensembleSize() >= bookies.getValue().size()) {
                    LOG.warn("journal.ensemble.size={} but only {} bookies are writable: if a bookie of the ledger"
                            + " being written is lost, BookKeeper has no spare bookie to recover that ledger with, and"
                            + " no oracle can take over until the bookie is back; run more bookies than"
                            + " journal.ensemble.size (docs/journal.md)", settings.ensembleSize(),
                            bookies.getValue().size());
                }
            });
        } catch (RuntimeException e) {
            LOG.debug("cannot count the writable bookies: {}", e.toString());
        }
    }

    /** Creates a ledger at the configured ensemble, or a smaller one (not below the write quorum) if bookies lack. */
    private LedgerState createLedger(LedgerRegistry.Snapshot reg) throws BKException, InterruptedException {
        boolean inheriting = System.nanoTime() - startedNanos < inheritedGraceMillis * 1_000_000L;
        var meta = WriterGrace.tag(OrphanSweep.ledgerMetadata(reg, registry.path()),
                inheriting ? Math.max(readerGraceMillis, inheritedGraceMillis) : readerGraceMillis);
        int ensemble;
        synchronized (this) {
            ensemble = nextEnsemble;
            nextEnsemble = settings.ensembleSize();
        }
        while (true) {
            try {
                LedgerHandle lh = bk.createLedger(ensemble, settings.writeQuorum(), settings.ackQuorum(),
                        BookKeeper.DigestType.CRC32C, password, meta);
                synchronized (this) {
                    ledgersCreated++;
                }
                if (ensemble < settings.ensembleSize()) {
                    LOG.warn("journal ledger {} runs on a reduced ensemble of {} bookies (configured {})",
                            lh.getId(), ensemble, settings.ensembleSize());
                }
                return new LedgerState(lh, ensemble);
            } catch (BKException.BKNotEnoughBookiesException e) {
                if (ensemble <= settings.writeQuorum()) {
                    throw e;
                }
                ensemble--;
            }
        }
    }

    // ----------------------------------------------------------------------------------------------- deletion

    private void checkpointDurable(Entry e) {
        synchronized (this) {
            if (e.ledger == null) {
                return;
            }
            durableCheckpoints.addLast(new CheckpointMark(e.ledger.handle.getId(), e.checkpoint.clock(),
                    e.checkpoint.tMax()));
        }
        try {
            admin.execute(this::dropOldLedgers);
        } catch (java.util.concurrent.RejectedExecutionException ex) {
            // closed
        }
    }

    /**
     * Runs on the journal thread (as rollovers do, so the registry snapshot cannot change meanwhile): finds the newest
     * durable checkpoint C whose clock is at or below the newest durable checkpoint's T_max and which leaves
     * at least {@code journal.retain.ledgers.min} ledgers, drops every ledger before C's from the registry
     * (compare-and-set: a deposed journal drops nothing), then deletes them in BookKeeper.
     */
    private void dropOldLedgers() {
        if (fatal.get() || closing) {
            return;
        }
        LedgerRegistry.Snapshot reg;
        int drop = 0;
        synchronized (this) {
            reg = registered;
            if (durableCheckpoints.isEmpty()) {
                return;
            }
            long tMax = durableCheckpoints.peekLast().tMax();
            List<Long> ledgers = reg.ledgers();
            CheckpointMark target = null;
            for (CheckpointMark m : durableCheckpoints) {
                int at = ledgers.indexOf(m.ledgerId());
                if (m.clock() > tMax) {
                    break; // later checkpoints have later clocks
                }
                if (at >= 0 && ledgers.size() - at >= settings.retainLedgersMin()) {
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
            now = registry.dropLedgers(reg, drop);
        } catch (LedgerRegistry.FencedException e) {
            fatal("ledger registry taken over: " + e.getMessage(), e);
            return;
        } catch (IOException e) {
            LOG.warn("cannot drop journal ledgers {} from the registry ({}); trying again after the next checkpoint",
                    dropped, e.getMessage());
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return;
        }
        synchronized (this) {
            registered = now;
            ledgersDropped += dropped.size();
        }
        LOG.info("journal ledgers {} dropped from {} after a checkpoint (T_max passed their commits); {} ledgers"
                + " registered", dropped, registry.path(), now.ledgers().size());
        for (long id : dropped) {
            deleter.accept(id);
        }
    }

    /**
     * Deletes a dropped ledger, trying again after a growing pause when BookKeeper fails (a ZooKeeper hiccup, bookies
     * restarting): a ledger that stays is only freed by the next leader's orphan sweep, which may be months away.
     */
    private void deleteLedger(long id, int attempt) {
        deleteAttempt.apply(id).whenComplete((code, error) -> {
            int rc = error != null ? BKException.Code.UnexpectedConditionException : code;
            if (rc == BKException.Code.OK || rc == BKException.Code.NoSuchLedgerExistsException
                    || rc == BKException.Code.NoSuchLedgerExistsOnMetadataServerException) {
                synchronized (this) {
                    ledgersDeleted++;
                }
                if (attempt > 1) {
                    LOG.info("journal ledger {} deleted at attempt {}", id, attempt);
                }
                return;
            }
            String why = error != null ? error.toString() : BKException.getMessage(rc);
            if (attempt < DELETE_ATTEMPTS && !closing && !fatal.get()) {
                long pauseMs = DELETE_FIRST_PAUSE_MS << (attempt - 1);
                LOG.warn("journal ledger {} was dropped from the registry but could not be deleted ({}); trying again"
                        + " in {} ms", id, why, pauseMs);
                try {
                    admin.schedule(() -> deleteLedger(id, attempt + 1), pauseMs, TimeUnit.MILLISECONDS);
                    return;
                } catch (java.util.concurrent.RejectedExecutionException closed) {
                    // fall through: closing
                }
            }
            // Unregistered already: nothing reads it any more; only its storage is not freed (an orphan).
            LOG.warn("journal ledger {} was dropped from the registry but could not be deleted after {} attempt(s)"
                    + " ({}); the next leader's orphan sweep deletes it", id, attempt, why);
        });
    }

    /** One delete of {@code id} in BookKeeper, completing with its return code (tests let some attempts through). */
    CompletableFuture<Integer> deleteInBookKeeper(long id) {
        CompletableFuture<Integer> done = new CompletableFuture<>();
        bk.asyncDeleteLedger(id, (rc, ctx) -> done.complete(rc), null);
        return done;
    }

    /** Test hook: one attempt to delete a ledger in BookKeeper (to make some attempts fail). */
    void deleteAttemptsWith(LongFunction<CompletableFuture<Integer>> attempt) {
        deleteAttempt = attempt;
    }

    /** Test hook: what deletes a dropped ledger (a no-op leaves orphans, as a crash right after the drop does). */
    void deleteLedgersWith(LongConsumer d) {
        deleter = d;
    }

    /**
     * Checkpoints appended, ledgers dropped from the registry, ledgers deleted in BookKeeper after their drop, and
     * orphan ledgers of earlier epochs deleted by the sweep, so far.
     */
    public synchronized Retention retention() {
        return new Retention(checkpointsAppended, ledgersDropped, ledgersDeleted, ledgersSwept);
    }

    /**
     * Counters of the bounded journal: checkpoints appended, ledgers dropped from the registry, dropped ledgers
     * deleted, and orphans (of earlier epochs, never deleted or never registered) deleted by the start-up sweep.
     */
    public record Retention(long checkpoints, long ledgersDropped, long ledgersDeleted, long ledgersSwept) {
    }

    /**
     * Test hook: completes with the ledgers the start-up orphan sweep deleted (empty when it is off or found none),
     * or exceptionally when it gave up.
     */
    CompletableFuture<List<Long>> orphanSweep() {
        return orphanSweep;
    }

    private void deleteQuietly(LedgerHandle lh) {
        try {
            lh.close();
        } catch (Exception e) {
            // ignore
        }
        bk.asyncDeleteLedger(lh.getId(), (rc, ctx) -> { }, null);
    }

    // ----------------------------------------------------------------------------------------------- delivery

    /** Runs, in order, the callbacks of every acknowledged entry at the head of the queue. */
    private void deliver() {
        synchronized (deliveryLock) {
            while (!fatal.get()) {
                Entry e;
                synchronized (this) {
                    e = unacked.peekFirst();
                    if (e == null || !e.acked) {
                        return;
                    }
                    unacked.pollFirst();
                    lastDeliveryNanos = System.nanoTime();
                    pendingBytes -= e.data.length;
                    if (spaceWaiters || closing) {
                        spaceWaiters = false;
                        notifyAll();
                    }
                }
                for (Runnable cb : e.callbacks) {
                    if (fatal.get()) {
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

    // ----------------------------------------------------------------------------------------------- failures

    private void fatal(String reason, Throwable cause) {
        if (!fatal.compareAndSet(false, true)) {
            return;
        }
        fatalReason = reason;
        LOG.error("journal stopped: {}", reason, cause);
        synchronized (this) {
            if (batchTimer != null) {
                batchTimer.cancel(false);
            }
            notifyAll();
        }
        Thread t = new Thread(() -> listener.onFatalError(reason, cause), "sibyl-journal-fatal");
        t.setDaemon(true);
        t.start();
    }

    private void onZooKeeperEvent(WatchedEvent event) {
        if (event.getType() == Watcher.Event.EventType.None) {
            switch (event.getState()) {
                case Expired -> fatal("ZooKeeper session expired", null);
                case Closed -> {
                    if (!isClosing()) {
                        fatal("ZooKeeper client closed under the journal", null);
                    }
                }
                case Disconnected -> {
                    if (disconnectedSinceNanos < 0) {
                        disconnectedSinceNanos = System.nanoTime();
                    }
                }
                case SyncConnected, ConnectedReadOnly -> disconnectedSinceNanos = -1;
                default -> { }
            }
            return;
        }
        if (!fatal.get()) {
            try {
                admin.execute(this::checkRegistry);
            } catch (java.util.concurrent.RejectedExecutionException e) {
                // closed
            }
        }
    }

    /** Compares the registry with what this journal wrote; another epoch or owner means we were deposed. */
    private void checkRegistry() {
        if (fatal.get() || isClosing()) {
            return;
        }
        try {
            LedgerRegistry.Snapshot now = registry.read();
            LedgerRegistry.Snapshot mine;
            synchronized (this) {
                mine = registered;
            }
            if (now.epoch() != mine.epoch() || !now.owner().equals(mine.owner())) {
                fatal("ledger registry " + registry.path() + " taken over by epoch " + now.epoch() + " ("
                        + now.owner() + "); this journal is epoch " + mine.epoch(), null);
            }
        } catch (IOException e) {
            LOG.warn("cannot read the ledger registry: {}", e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Periodic: session state and disconnection time; a disconnected leader must assume its session is gone. */
    private void watchdog() {
        if (fatal.get() || isClosing()) {
            return;
        }
        ZooKeeper zk = registry.zooKeeper();
        if (!zk.getState().isAlive()) {
            fatal("ZooKeeper session is " + zk.getState(), null);
            return;
        }
        long since = disconnectedSinceNanos;
        if (since >= 0 && (System.nanoTime() - since) / 1_000_000 >= settings.zkSessionTimeoutMs()) {
            fatal("disconnected from ZooKeeper for longer than the session timeout ("
                    + settings.zkSessionTimeoutMs() + " ms)", null);
            return;
        }
        long failingFor;
        long stalledFor = -1;
        long stalledLedger = -1;
        synchronized (this) {
            failingFor = unacked.isEmpty() && !rolling ? -1 : failingForMs();
            Entry oldest = unacked.peekFirst();
            if (oldest != null && oldest.ledger != null && !oldest.acked) {
                stalledFor = (System.nanoTime() - Math.max(oldest.sentNanos, lastDeliveryNanos)) / 1_000_000;
                stalledLedger = oldest.ledger.handle.getId();
            }
        }
        if (failingFor >= settings.writeRetryMs()) {
            // The retried add may hang on a ledger whose bookies are faulty; the deadline holds regardless.
            fatal("journal unwritable for " + failingFor + " ms: writes failed and none has succeeded since", null);
        } else if (stalledFor >= stallLimitMs()) {
            // An add that neither completes nor fails: BookKeeper can keep replacing bookies (an ensemble smaller
            // than the cluster has spares) for an entry no bookie takes, or wait on a bookie that never answers.
            // Without this the oracle would hang, neither serving nor letting a standby take over.
            fatal("journal unwritable for " + stalledFor + " ms: an add to ledger " + stalledLedger + " has not"
                    + " completed (BookKeeper is still retrying it)", null);
        }
    }

    /**
     * How long the oldest undelivered add may stay pending: journal.write.retry.ms, but never less than BookKeeper's
     * add timeout. An add is not stuck before BookKeeper itself gives up on a silent bookie, and a retry time of 0
     * (give up at the first failure) must not make every add in flight fatal.
     */
    private long stallLimitMs() {
        return Math.max(settings.writeRetryMs(), JournalClients.ADD_TIMEOUT_SECONDS * 1000L);
    }

    private boolean isClosing() {
        return closing;
    }

    // ----------------------------------------------------------------------------------------------- lifecycle

    /**
     * Clean shutdown: sends what is batched, waits (up to the ZooKeeper session timeout) for every accepted block to
     * be acknowledged and its callback run, then closes the ledgers so recovery has nothing to repair. Appends after
     * this are ignored (their callbacks never run). Does not close the BookKeeper or ZooKeeper clients.
     */
    @Override
    public void close() {
        List<LedgerState> toClose = new ArrayList<>();
        synchronized (this) {
            if (closing) {
                return;
            }
            closing = true;
            if (!batchBlocks.isEmpty() && !fatal.get()) {
                seal();
                send();
            }
        }
        issueAdds();
        synchronized (this) {
            long deadline = System.nanoTime() + settings.zkSessionTimeoutMs() * 1_000_000L;
            boolean interrupted = false;
            while (!unacked.isEmpty() && !fatal.get()) {
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    LOG.warn("journal closed with {} entries unacknowledged; their replies are never sent",
                            unacked.size());
                    break;
                }
                try {
                    wait(Math.max(1, left / 1_000_000));
                } catch (InterruptedException e) {
                    interrupted = true;
                    break;
                }
            }
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
            if (current != null) {
                toClose.add(current);
            }
            for (LedgerState l : retired) {
                if (!l.closeRequested) {
                    toClose.add(l);
                }
            }
            current = null;
            rolling = true; // nothing is sent any more
        }
        admin.shutdownNow();
        removeWatch();
        for (LedgerState l : toClose) {
            if (!l.broken && !fatal.get()) {
                try {
                    l.handle.close();
                } catch (BKException e) {
                    LOG.warn("closing journal ledger {}: {}", l.handle.getId(), e.getMessage());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
        LOG.info("journal closed: {}", stats());
        List<AutoCloseable> resources;
        synchronized (this) {
            resources = new ArrayList<>(owned);
        }
        for (AutoCloseable r : resources) {
            try {
                r.close();
            } catch (Exception e) {
                LOG.warn("closing {}: {}", r, e.toString());
            }
        }
    }

    // ----------------------------------------------------------------------------------------------- monitoring

    @Override
    public synchronized long appendedBlocks() {
        return appendedBlocks;
    }

    /** True once a fatal error stopped the journal. */
    public boolean isFailed() {
        return fatal.get();
    }

    /** Why the journal stopped, or null. */
    public String failure() {
        return fatalReason;
    }

    /** Id of the ledger being written, or -1 during a rollover. */
    public synchronized long currentLedgerId() {
        return current == null ? -1 : current.handle.getId();
    }

    /** Epoch of this journal in the ledger registry. */
    public synchronized long epoch() {
        return registered.epoch();
    }

    public synchronized Stats stats() {
        return new Stats(appendedBlocks, appendedBytes, sealedEntries, ackedEntries, ackedBytes, resentEntries,
                ledgersCreated, inFlight, unacked.size(), pendingBytes, droppedAppends);
    }

    /**
     * Counters: blocks and bytes appended; entries sealed (group commit: fewer than blocks) and acknowledged; entries
     * sent again after a ledger failed; ledgers created; adds in flight; entries not yet delivered; bytes appended
     * and not yet delivered; appends ignored because the journal was closed or had failed.
     */
    public record Stats(long appendedBlocks, long appendedBytes, long sealedEntries, long ackedEntries,
                        long ackedBytes, long resentEntries, long ledgersCreated, int addsInFlight,
                        int undeliveredEntries, long pendingBytes, long droppedAppends) {
    }
}
