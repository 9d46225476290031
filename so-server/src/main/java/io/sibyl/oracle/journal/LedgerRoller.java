package io.sibyl.oracle.journal;

import org.apache.bookkeeper.client.BKException;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.LedgerHandle;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;

/**
 * The journal's ledgers: the one being written, the retired ones still answering adds, and the registry snapshot
 * that lists them. Creates and registers a new ledger (registered before its first entry is written) when the
 * pipeline asks for a rollover: the current one is full, a checkpoint must open the next, or a write failed; in the
 * last case the next ledger starts one bookie smaller (never below the write quorum), since the client's bookie list
 * may still show the lost bookie for a while. State is guarded by the journal lock; the slow work (creating,
 * registering, closing) runs on the journal thread, never under the lock, because BookKeeper runs callbacks that take
 * the journal lock while holding its own locks.
 */
final class LedgerRoller {
    private static final Logger LOG = LoggerFactory.getLogger(BookKeeperJournal.class);

    /** What the roller tells the entry pipeline. */
    interface Writer {
        /** A new ledger can be written (called under the journal lock). */
        void ledgerReady();

        /** Issues the adds the pipeline decided (called without the journal lock). */
        void issueAdds();
    }

    private final JournalContext journal;
    private final WriteProgress progress;
    private final WriterGrace.Recording graceTag;
    private final byte[] password;
    private final Writer writer;

    // Guarded by the journal lock.
    private LedgerRegistry.Snapshot registered;
    private JournalLedger current; // null while a rollover is under way
    private final List<JournalLedger> retired = new ArrayList<>();
    private boolean rolling;
    private int nextEnsemble; // ensemble size the next ledger starts from

    LedgerRoller(JournalContext journal, LedgerRegistry.Snapshot fenced, WriteProgress progress,
                 WriterGrace.Recording graceTag, Writer writer) {
        this.journal = journal;
        this.registered = fenced;
        this.progress = progress;
        this.graceTag = graceTag;
        this.writer = writer;
        this.password = journal.settings().password().getBytes(StandardCharsets.UTF_8);
        this.nextEnsemble = journal.settings().ensembleSize();
    }

    /** Creates and registers the journal's first ledger; returns the registry that lists it. */
    LedgerRegistry.Snapshot openFirst() throws IOException, InterruptedException {
        LedgerRegistry.Snapshot fenced = registered();
        JournalLedger first;
        try {
            first = createLedger(fenced);
        } catch (BKException e) {
            throw new IOException("cannot create a journal ledger: " + e.getMessage(), e);
        }
        LedgerRegistry.Snapshot next = register(first, fenced);
        synchronized (journal.lock()) {
            registered = next;
            current = first;
        }
        LOG.info("journal open: epoch {}, ledger {} (E{}/W{}/A{}), {} ledgers registered in {}", next.epoch(),
                first.id(), first.ensemble, journal.settings().writeQuorum(), journal.settings().ackQuorum(),
                next.ledgers().size(), journal.registry().path());
        return next;
    }

    LedgerRegistry.Snapshot registered() {
        synchronized (journal.lock()) {
            return registered;
        }
    }

    /** The registry after a change made on the journal thread (ledgers dropped). */
    void registryChanged(LedgerRegistry.Snapshot now) {
        synchronized (journal.lock()) {
            registered = now;
        }
    }

    /** The ledger to write to, or null during a rollover (lock held). */
    JournalLedger current() {
        return rolling ? null : current;
    }

    /** True while a rollover is under way (lock held). */
    boolean rolling() {
        return rolling;
    }

    long currentLedgerId() {
        synchronized (journal.lock()) {
            return current == null ? -1 : current.id();
        }
    }

    /** Retires the current ledger and starts a new one on the journal thread (lock held). */
    void startRollover(String reason) {
        startRollover(reason, 0);
    }

    private void startRollover(String reason, long pauseMs) {
        if (rolling || journal.halt().failed()) {
            return;
        }
        rolling = true;
        JournalLedger old = current;
        current = null;
        if (old != null && !old.broken) {
            old.retired = true;
            retired.add(old);
            maybeCloseRetired(old);
        }
        LOG.info("journal rolling over to a new ledger{}: {}", pauseMs > 0 ? " in " + pauseMs + " ms" : "", reason);
        try {
            journal.admin().schedule(this::rollover, pauseMs, TimeUnit.MILLISECONDS);
        } catch (RejectedExecutionException e) {
            // journal closed
        }
    }

    /**
     * Gives up on {@code l} after a write failure (lock held; the pipeline has taken its entries back) and, if it was
     * the current ledger, rolls over, paced by {@link WriteProgress#nextRolloverPauseMs()}.
     */
    void abandon(JournalLedger l, int rc) {
        closeLater(l, false); // BookKeeper may have closed it already
        // The next size-driven rollover tries the full ensemble again.
        nextEnsemble = Math.max(journal.settings().writeQuorum(), Math.min(nextEnsemble, l.ensemble - 1));
        if (l == current) {
            current = null;
            startRollover("write failure on ledger " + l.id() + ": " + BKException.getMessage(rc),
                    progress.nextRolloverPauseMs());
        }
    }

    /** Closes a retired ledger once every add sent to it is answered (lock held). */
    void maybeCloseRetired(JournalLedger l) {
        if (l.retired && !l.broken && l.outstanding == 0 && !l.closeRequested) {
            l.closeRequested = true;
            retired.remove(l);
            closeLater(l, true);
        }
    }

    /** Closes a ledger from the journal thread (never under the journal lock, for the same reason as adds). */
    private void closeLater(JournalLedger l, boolean fencedIsFatal) {
        journal.onJournalThread(() -> l.handle.closeAsync().whenComplete((ignored, error) -> {
            int rc = error == null ? BKException.Code.OK : BKException.getExceptionCode(error);
            if (rc == BKException.Code.LedgerFencedException && fencedIsFatal) {
                journal.halt().fail("journal ledger " + l.id() + " was fenced while closing", BKException.create(rc));
            } else if (rc != BKException.Code.OK && fencedIsFatal) {
                LOG.warn("closing journal ledger {}: {}", l.id(), BKException.getMessage(rc));
            }
        }));
    }

    /** Runs on the journal thread: creates and registers a new ledger, retrying until it works or time is up. */
    private void rollover() {
        long backoffMs = 50;
        while (!journal.halt().failed()) {
            LedgerRegistry.Snapshot expected;
            long failingFor;
            synchronized (journal.lock()) {
                expected = registered;
                failingFor = progress.failingForMs();
            }
            if (failingFor >= journal.settings().writeRetryMs()) {
                journal.halt().fail("journal unwritable for " + failingFor + " ms: no new ledger accepted the"
                        + " pending entries", null);
                return;
            }
            try {
                JournalLedger next = createLedger(expected);
                LedgerRegistry.Snapshot now = register(next, expected);
                synchronized (journal.lock()) {
                    registered = now;
                    current = next;
                    rolling = false;
                    writer.ledgerReady();
                }
                writer.issueAdds();
                LOG.info("journal ledger {} (E{}/W{}/A{}) registered, {} ledgers in {}", next.id(), next.ensemble,
                        journal.settings().writeQuorum(), journal.settings().ackQuorum(), now.ledgers().size(),
                        journal.registry().path());
                return;
            } catch (LedgerRegistry.FencedException e) {
                journal.halt().fail("ledger registry taken over: " + e.getMessage(), e);
                return;
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            } catch (IOException | BKException | RuntimeException e) {
                synchronized (journal.lock()) {
                    progress.failing();
                    failingFor = progress.failingForMs();
                }
                if (failingFor >= journal.settings().writeRetryMs()) {
                    journal.halt().fail("journal unwritable for " + failingFor + " ms: " + e.getMessage(), e);
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

    /** Creates a ledger at the configured ensemble, or a smaller one (not below the write quorum) if bookies lack. */
    private JournalLedger createLedger(LedgerRegistry.Snapshot reg) throws BKException, InterruptedException {
        var meta = graceTag.tag(OrphanSweep.ledgerMetadata(reg, journal.registry().path()));
        int ensemble;
        synchronized (journal.lock()) {
            ensemble = nextEnsemble;
            nextEnsemble = journal.settings().ensembleSize();
        }
        while (true) {
            try {
                LedgerHandle lh = journal.bk().createLedger(ensemble, journal.settings().writeQuorum(),
                        journal.settings().ackQuorum(),
                        BookKeeper.DigestType.CRC32C, password, meta);
                journal.stats().ledgersCreated.increment();
                if (ensemble < journal.settings().ensembleSize()) {
                    LOG.warn("journal ledger {} runs on a reduced ensemble of {} bookies (configured {})",
                            lh.getId(), ensemble, journal.settings().ensembleSize());
                }
                return new JournalLedger(lh, ensemble);
            } catch (BKException.BKNotEnoughBookiesException e) {
                if (ensemble <= journal.settings().writeQuorum()) {
                    throw e;
                }
                ensemble--;
            }
        }
    }

    /** Adds {@code l} to the registry (compare-and-set against {@code expected}); deletes it if that fails. */
    private LedgerRegistry.Snapshot register(JournalLedger l, LedgerRegistry.Snapshot expected)
            throws IOException, InterruptedException {
        try {
            return journal.registry().addLedger(expected, l.id());
        } catch (IOException e) {
            deleteQuietly(l.handle);
            throw e;
        }
    }

    private void deleteQuietly(LedgerHandle lh) {
        try {
            lh.close();
        } catch (Exception e) {
            // ignore
        }
        journal.bk().asyncDeleteLedger(lh.getId(), (rc, ctx) -> { }, null);
    }

    /**
     * Recovering a ledger (the next takeover) writes its entries past the last-add-confirmed again, and a lost bookie
     * in their write set can only be replaced by one outside the ledger's ensemble: with an ensemble of every bookie,
     * no oracle can take over while one of them is down. Said at start-up, where an operator looks.
     */
    void warnIfNoSpareBookie() {
        try {
            // Asynchronous: a takeover opens the journal on its critical path.
            var registration = journal.bk().getMetadataClientDriver().getRegistrationClient();
            registration.getWritableBookies().whenComplete((bookies, e) -> {
                if (e != null) {
                    LOG.debug("cannot count the writable bookies: {}", e.toString());
                } else if (journal.settings().ensembleSize() >= bookies.getValue().size()) {
                    LOG.warn("journal.ensemble.size={} but only {} bookies are writable: if a bookie of the ledger"
                            + " being written is lost, BookKeeper has no spare bookie to recover that ledger with, and"
                            + " no oracle can take over until the bookie is back; run more bookies than"
                            + " journal.ensemble.size (docs/journal.md)", journal.settings().ensembleSize(),
                            bookies.getValue().size());
                }
            });
        } catch (RuntimeException e) {
            LOG.debug("cannot count the writable bookies: {}", e.toString());
        }
    }

    /** Stops rolling for good (lock held) and hands over every ledger still open, for a clean close. */
    List<JournalLedger> detachForClose() {
        List<JournalLedger> open = new ArrayList<>();
        if (current != null) {
            open.add(current);
        }
        for (JournalLedger l : retired) {
            if (!l.closeRequested) {
                open.add(l);
            }
        }
        current = null;
        rolling = true; // nothing is sent any more
        return open;
    }

    /** Closes the ledgers {@link #detachForClose()} returned, so recovery has nothing to repair. */
    void close(List<JournalLedger> ledgers) {
        for (JournalLedger l : ledgers) {
            if (!l.broken && !journal.halt().failed()) {
                try {
                    l.handle.close();
                } catch (BKException e) {
                    LOG.warn("closing journal ledger {}: {}", l.id(), e.getMessage());
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
            }
        }
    }
}
