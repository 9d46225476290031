package io.sibyl.oracle.journal;

import io.sibyl.oracle.Journal;
import org.apache.bookkeeper.client.BookKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledThreadPoolExecutor;

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
 *
 * <h2>Parts</h2>
 * This class only wires and exposes them: {@link EntryPipeline} (group commit, adds, ordered delivery),
 * {@link LedgerRoller} (ledgers and rollover), {@link LedgerRetention} (drop and delete behind checkpoints, orphan
 * sweep), {@link FencingWatch} (registry watch and watchdog), {@link JournalHalt} (fatal errors and closing) and
 * {@link JournalStatistics} (counters).
 */
public final class BookKeeperJournal implements Journal {
    private static final Logger LOG = LoggerFactory.getLogger(BookKeeperJournal.class);

    private final JournalContext journal;
    private final ScheduledThreadPoolExecutor admin;
    private final EntryPipeline pipeline;
    private final LedgerRoller ledgers;
    private final LedgerRetention retention;
    private final FencingWatch watch;
    private final List<AutoCloseable> owned = new CopyOnWriteArrayList<>();

    private BookKeeperJournal(BookKeeper bk, LedgerRegistry registry, LedgerRegistry.Snapshot fenced,
                              JournalSettings settings, FatalErrorListener listener, WriterGrace.Recording grace,
                              JournalFaults faults) {
        this.admin = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "sibyl-journal");
            t.setDaemon(true);
            return t;
        });
        admin.setRemoveOnCancelPolicy(true);
        Object lock = new Object();
        JournalHalt halt = new JournalHalt(listener, () -> {
            synchronized (lock) {
                pipeline().failed();
            }
        });
        this.journal = new JournalContext(bk, registry, settings, lock, admin, halt, new JournalStatistics());
        WriteProgress progress = new WriteProgress();
        this.pipeline = new EntryPipeline(journal, progress,
                writer -> new LedgerRoller(journal, fenced, progress, grace, writer));
        this.ledgers = pipeline.roller();
        this.retention = new LedgerRetention(journal, ledgers, faults);
        this.watch = new FencingWatch(journal, ledgers, pipeline);
    }

    private EntryPipeline pipeline() {
        return pipeline;
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
        return open(bk, registry, fenced, settings, listener, readerGraceMillis, inheritedGraceMillis,
                JournalFaults.NONE);
    }

    /** As above, with {@code faults} injected (tests). */
    static BookKeeperJournal open(BookKeeper bk, LedgerRegistry registry, LedgerRegistry.Snapshot fenced,
                                  JournalSettings settings, FatalErrorListener listener, long readerGraceMillis,
                                  long inheritedGraceMillis, JournalFaults faults)
            throws IOException, InterruptedException {
        var grace = new WriterGrace.Recording(readerGraceMillis, inheritedGraceMillis, System.nanoTime());
        BookKeeperJournal j = new BookKeeperJournal(bk, registry, fenced, settings, listener, grace, faults);
        try {
            j.start();
        } catch (IOException | InterruptedException | RuntimeException e) {
            j.admin.shutdownNow();
            j.watch.unwatch();
            throw e;
        }
        return j;
    }

    private void start() throws IOException, InterruptedException {
        watch.watch();
        LedgerRegistry.Snapshot registered = ledgers.openFirst();
        watch.startWatchdog();
        ledgers.warnIfNoSpareBookie();
        if (journal.settings().sweepOrphans()) {
            retention.startOrphanSweep(registered.epoch());
        }
    }

    /** Clients (or anything else) closed after the journal's ledgers, in the order given. */
    public void closeAfterwards(AutoCloseable... resources) {
        owned.addAll(List.of(resources));
    }

    @Override
    public void append(byte[] block, Runnable onDurable) {
        pipeline.append(block, onDurable);
    }

    @Override
    public void checkpointsFollow() {
        pipeline.checkpointsFollow();
    }

    @Override
    public boolean wantsCheckpoint() {
        return pipeline.wantsCheckpoint();
    }

    /**
     * Queues {@code checkpoint} as an entry of its own (or, above {@link Checkpoint#PART_BYTES}, consecutive part
     * entries) after every block appended so far; it (its first part) becomes the first entry of the next ledger.
     * Once its last part and everything before it are durable, it is recorded, in the ledger of its first part, for
     * dropping the ledgers before it ({@link LedgerRetention}).
     */
    @Override
    public void appendCheckpoint(Checkpoint checkpoint) {
        pipeline.appendCheckpoint(checkpoint, retention::checkpointDurable);
    }

    /**
     * Clean shutdown: sends what is batched, waits (up to the ZooKeeper session timeout) for every accepted block to
     * be acknowledged and its callback run, then closes the ledgers so recovery has nothing to repair. Appends after
     * this are ignored (their callbacks never run). Does not close the BookKeeper or ZooKeeper clients.
     */
    @Override
    public void close() {
        synchronized (journal.lock()) {
            if (!journal.halt().startClosing()) {
                return;
            }
            pipeline.flush();
        }
        pipeline.issueAdds();
        List<JournalLedger> open;
        synchronized (journal.lock()) {
            pipeline.awaitDelivered(System.nanoTime() + journal.settings().zkSessionTimeoutMs() * 1_000_000L);
            open = ledgers.detachForClose();
        }
        admin.shutdownNow();
        watch.unwatch();
        ledgers.close(open);
        LOG.info("journal closed: {}", stats());
        for (AutoCloseable r : owned) {
            try {
                r.close();
            } catch (Exception e) {
                LOG.warn("closing {}: {}", r, e.toString());
            }
        }
    }

    @Override
    public long appendedBlocks() {
        return journal.stats().appendedBlocks.sum();
    }

    /** True once a fatal error stopped the journal. */
    public boolean isFailed() {
        return journal.halt().failed();
    }

    /** Why the journal stopped, or null. */
    public String failure() {
        return journal.halt().reason();
    }

    /** Id of the ledger being written, or -1 during a rollover. */
    public long currentLedgerId() {
        return ledgers.currentLedgerId();
    }

    /** Epoch of this journal in the ledger registry. */
    public long epoch() {
        return ledgers.registered().epoch();
    }

    /** The journal's counters and gauges now. */
    public Stats stats() {
        return pipeline.stats();
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

    /**
     * Checkpoints appended, ledgers dropped from the registry, ledgers deleted in BookKeeper after their drop, and
     * orphan ledgers of earlier epochs deleted by the sweep, so far.
     */
    public Retention retention() {
        return journal.stats().retention();
    }

    /**
     * Counters of the bounded journal: checkpoints appended, ledgers dropped from the registry, dropped ledgers
     * deleted, and orphans (of earlier epochs, never deleted or never registered) deleted by the start-up sweep.
     */
    public record Retention(long checkpoints, long ledgersDropped, long ledgersDeleted, long ledgersSwept) {
    }

    /**
     * Completes with the ledgers the start-up orphan sweep deleted (empty when it is off or found none), or
     * exceptionally when it gave up (tests).
     */
    CompletableFuture<List<Long>> orphanSweep() {
        return retention.orphanSweep();
    }
}
