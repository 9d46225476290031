package io.sibyl.oracle.journal;

import org.apache.bookkeeper.client.BKException;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.api.LedgerMetadata;
import org.apache.bookkeeper.client.api.LedgersIterator;
import org.apache.bookkeeper.client.api.ListLedgersResult;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.BooleanSupplier;
import java.util.function.LongConsumer;
import java.util.function.Supplier;

/**
 * Frees the journal ledgers that nothing will ever read (orphans), once, when a journal starts as leader at epoch E.
 *
 * <p>Orphans come from a crash (or a failed delete) between dropping ledgers from the registry and deleting them, and
 * from a crash between creating a ledger and registering it. A ledger is swept only if its custom metadata says it is
 * a journal ledger ({@link #APPLICATION}) of this very registry ({@link #REGISTRY_KEY}) written at an epoch below E,
 * and the registry does not list it. Why that is safe: E fenced the registry, so no writer of an earlier epoch can
 * register a ledger any more, and the ones it registered before are in our snapshot unless dropped; ledgers of E or
 * later are never touched (this journal's own, or a newer leader's if we are being deposed), nor ledgers without the
 * tags (other applications, other registries on the same bookies, ledgers written before the registry tag existed).
 *
 * <p>It runs on the journal's thread in short steps (list a few hundred ids, read their metadata asynchronously,
 * continue in a new task), so rollovers and batch timers queued on that thread are not held up by a large listing.
 * Best effort: a failure is logged and the journal carries on; the next leader sweeps again.
 */
final class OrphanSweep {
    private static final Logger LOG = LoggerFactory.getLogger(OrphanSweep.class);

    static final String APPLICATION_KEY = "application";
    static final String APPLICATION = "sibyl-oracle-journal";
    static final String EPOCH_KEY = "sibyl-epoch";
    static final String OWNER_KEY = "sibyl-owner";
    static final String REGISTRY_KEY = "sibyl-registry";

    /** Metadata reads issued per step: bounds how long one step keeps the journal thread. */
    private static final int LEDGERS_PER_STEP = 256;
    private static final long LIST_TIMEOUT_SECONDS = 30;

    private final BookKeeper bk;
    private final LedgerRegistry registry;
    private final long epoch;
    private final Executor journalThread;
    private final Supplier<LedgerRegistry.Snapshot> registered;
    private final BooleanSupplier stopped;
    private final LongConsumer onSwept;
    private final CompletableFuture<List<Long>> done = new CompletableFuture<>();
    // Touched only on the journal thread, one step at a time.
    private ListLedgersResult listing;
    private LedgersIterator ids;
    private final List<Long> orphans = new ArrayList<>();
    private long examined;
    private int unreadable;

    /**
     * @param registered the journal's current registry snapshot (it changes as the journal rolls over and drops)
     * @param stopped    true once the journal failed or is closing: the sweep then ends without deleting
     * @param onSwept    told of each ledger the sweep deleted
     */
    OrphanSweep(BookKeeper bk, LedgerRegistry registry, long epoch, Executor journalThread,
                Supplier<LedgerRegistry.Snapshot> registered, BooleanSupplier stopped, LongConsumer onSwept) {
        this.bk = bk;
        this.registry = registry;
        this.epoch = epoch;
        this.journalThread = journalThread;
        this.registered = registered;
        this.stopped = stopped;
        this.onSwept = onSwept;
    }

    /** The custom metadata of every journal ledger: what {@link #isOrphan} recognises. */
    static Map<String, byte[]> ledgerMetadata(LedgerRegistry.Snapshot reg, String registryPath) {
        return Map.of(
                APPLICATION_KEY, APPLICATION.getBytes(StandardCharsets.UTF_8),
                EPOCH_KEY, Long.toString(reg.epoch()).getBytes(StandardCharsets.UTF_8),
                OWNER_KEY, reg.owner().getBytes(StandardCharsets.UTF_8),
                REGISTRY_KEY, registryPath.getBytes(StandardCharsets.UTF_8));
    }

    /**
     * The sweep rule: a journal ledger of {@code registryPath}, written at an epoch below {@code epoch}, that
     * {@code registeredLedgers} does not list.
     */
    static boolean isOrphan(long ledgerId, Map<String, byte[]> custom, String registryPath, long epoch,
                            Set<Long> registeredLedgers) {
        if (registeredLedgers.contains(ledgerId)
                || !APPLICATION.equals(text(custom, APPLICATION_KEY))
                || !registryPath.equals(text(custom, REGISTRY_KEY))) {
            return false;
        }
        String written = text(custom, EPOCH_KEY);
        if (written == null) {
            return false;
        }
        try {
            return Long.parseLong(written) < epoch;
        } catch (NumberFormatException e) {
            return false; // not written by us, whatever its tags say
        }
    }

    private static String text(Map<String, byte[]> custom, String key) {
        byte[] v = custom.get(key);
        return v == null ? null : new String(v, StandardCharsets.UTF_8);
    }

    /** Queues the first step on the journal thread; the future completes with the ledgers deleted. */
    CompletableFuture<List<Long>> start() {
        onJournalThread(this::step);
        return done;
    }

    private void onJournalThread(Runnable task) {
        try {
            journalThread.execute(task);
        } catch (RejectedExecutionException e) {
            end("the journal closed");
        }
    }

    /** Lists the next ids, skips the registered ones, and reads the others' metadata without waiting for it. */
    private void step() {
        if (stopped.getAsBoolean()) {
            end("the journal stopped");
            return;
        }
        Set<Long> keep = registeredNow();
        List<Long> batch = new ArrayList<>();
        try {
            if (ids == null) {
                listing = bk.newListLedgersOp().execute().get(LIST_TIMEOUT_SECONDS, TimeUnit.SECONDS);
                ids = listing.iterator();
            }
            while (batch.size() < LEDGERS_PER_STEP && ids.hasNext()) {
                long id = ids.next();
                examined++;
                if (!keep.contains(id)) {
                    batch.add(id);
                }
            }
        } catch (IOException | ExecutionException | TimeoutException | RuntimeException e) {
            fail("cannot list the ledgers in BookKeeper", e);
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            end("interrupted");
            return;
        }
        if (batch.isEmpty()) {
            deleteOrphans();
            return;
        }
        List<CompletableFuture<LedgerMetadata>> reads = new ArrayList<>(batch.size());
        for (long id : batch) {
            reads.add(bk.getLedgerMetadata(id));
        }
        CompletableFuture.allOf(reads.toArray(new CompletableFuture<?>[0]))
                .whenComplete((ignored, error) -> onJournalThread(() -> {
                    collect(batch, reads);
                    step();
                }));
    }

    private void collect(List<Long> batch, List<CompletableFuture<LedgerMetadata>> reads) {
        Set<Long> keep = registeredNow();
        for (int i = 0; i < batch.size(); i++) {
            long id = batch.get(i);
            LedgerMetadata md;
            try {
                md = reads.get(i).join();
            } catch (CompletionException e) {
                if (!isGone(e.getCause())) {
                    unreadable++; // reported at the end; the next leader will look again
                }
                continue;
            }
            if (isOrphan(id, md.getCustomMetadata(), registry.path(), epoch, keep)) {
                orphans.add(id);
            }
        }
    }

    /**
     * Reads the registry once more before deleting: if it moved to another epoch we are being deposed (the journal's
     * watch will stop it) and the sweep leaves everything to the new leader.
     */
    private void deleteOrphans() {
        closeListing();
        if (stopped.getAsBoolean()) {
            end("the journal stopped");
            return;
        }
        LedgerRegistry.Snapshot mine = registered.get();
        LedgerRegistry.Snapshot now;
        try {
            now = registry.read();
        } catch (IOException e) {
            fail("cannot read the ledger registry before deleting", e);
            return;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            end("interrupted");
            return;
        }
        if (now.epoch() != epoch || !now.owner().equals(mine.owner())) {
            end("the registry moved to epoch " + now.epoch());
            return;
        }
        Set<Long> keep = registeredNow();
        keep.addAll(now.ledgers());
        List<Long> targets = orphans.stream().filter(id -> !keep.contains(id)).toList();
        if (targets.isEmpty()) {
            LOG.info("journal orphan sweep of {} at epoch {}: no orphan ledgers among {} ledgers in BookKeeper{}",
                    registry.path(), epoch, examined, unreadableNote());
            done.complete(List.of());
            return;
        }
        String summary = "of " + examined + " ledgers in BookKeeper" + unreadableNote();
        List<Long> deleted = new ArrayList<>();
        List<String> failures = new ArrayList<>();
        AtomicInteger left = new AtomicInteger(targets.size());
        for (long id : targets) {
            bk.asyncDeleteLedger(id, (rc, ctx) -> {
                synchronized (deleted) {
                    if (rc == BKException.Code.OK) {
                        deleted.add(id);
                        onSwept.accept(id);
                    } else if (rc != BKException.Code.NoSuchLedgerExistsException
                            && rc != BKException.Code.NoSuchLedgerExistsOnMetadataServerException) {
                        failures.add(id + " (" + BKException.getMessage(rc) + ")");
                    }
                }
                if (left.decrementAndGet() == 0) {
                    report(deleted, failures, summary);
                }
            }, null);
        }
    }

    /** Runs on the BookKeeper callback thread of the last delete. */
    private void report(List<Long> deleted, List<String> failures, String summary) {
        List<Long> sorted;
        synchronized (deleted) {
            sorted = deleted.stream().sorted().toList();
            LOG.info("journal orphan sweep of {} at epoch {}: deleted {} orphan ledgers {} ({})", registry.path(),
                    epoch, sorted.size(), sorted, summary);
            if (!failures.isEmpty()) {
                LOG.warn("journal orphan sweep of {}: could not delete {}; the next leader tries again",
                        registry.path(), failures);
            }
        }
        done.complete(sorted);
    }

    private String unreadableNote() {
        return unreadable == 0 ? "" : "; metadata of " + unreadable + " ledgers unreadable, left for the next sweep";
    }

    private Set<Long> registeredNow() {
        return new HashSet<>(registered.get().ledgers());
    }

    private static boolean isGone(Throwable t) {
        return t instanceof BKException.BKNoSuchLedgerExistsException
                || t instanceof BKException.BKNoSuchLedgerExistsOnMetadataServerException;
    }

    private void fail(String what, Exception e) {
        closeListing();
        LOG.warn("journal orphan sweep of {} at epoch {} gave up: {}: {}", registry.path(), epoch, what,
                e.toString());
        done.completeExceptionally(e);
    }

    private void end(String why) {
        closeListing();
        LOG.info("journal orphan sweep of {} at epoch {} ended without deleting: {}", registry.path(), epoch, why);
        done.complete(List.of());
    }

    private void closeListing() {
        if (listing != null) {
            try {
                listing.close();
            } catch (Exception e) {
                // only marks it closed
            }
            listing = null;
        }
    }
}
