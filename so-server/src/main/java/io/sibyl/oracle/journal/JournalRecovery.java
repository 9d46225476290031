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
import java.util.function.Consumer;

/**
 * Takes the journal over and rebuilds the oracle state from it (paper Section IV, "Recovery").
 *
 * <ol>
 *   <li><b>Fence the registry</b>: bump the epoch in the ledger registry with a compare-and-set. From then on the
 *       previous writer cannot register a new ledger, so it cannot write anywhere this recovery does not read.</li>
 *   <li><b>Fence the ledgers</b>: open every registered ledger with recovery ({@code openLedger}, not
 *       {@code openLedgerNoRecovery}). BookKeeper fences it on the bookies, so the previous writer's next add fails
 *       (and its journal stops: no reply depending on an unrecovered write can leave), and closes it at the last
 *       entry that reached an ack quorum.</li>
 *   <li><b>Replay</b> every entry of every registered ledger, oldest ledger first, reading forwards (see
 *       {@link JournalReplay}).</li>
 * </ol>
 *
 * <p><b>Forwards, from a checkpoint.</b> The paper reads the log backwards until it meets a commit below T_max, and
 * bounds the aborted set's part of the read with periodic checkpoints. Here the journal itself stays bounded: each
 * ledger the oracle rolls over to starts with a {@link Checkpoint} (T_max, the highest timestamp, the aborted set, the
 * aborted ranges with their commits), and the ledgers before a checkpoint are deleted once T_max passed every commit
 * in them (see {@link BookKeeperJournal}). So the first registered ledger holds a checkpoint (or is the journal's very
 * first ledger), and reading forwards from it rebuilds the whole state: the checkpoint sets the aborted set and
 * ranges, later records continue from there, and the commits above T_max all lie after it.
 */
public final class JournalRecovery {
    private static final Logger LOG = LoggerFactory.getLogger(JournalRecovery.class);

    private JournalRecovery() {
    }

    /**
     * Fences the registry and every registered ledger, then replays them. {@code owner} names this process in the
     * registry (see {@link JournalClients#ownerName()}).
     */
    public static RecoveredState recover(BookKeeper bk, LedgerRegistry registry, JournalSettings settings,
                                         String owner) throws IOException, InterruptedException {
        long started = System.nanoTime();
        LedgerRegistry.Snapshot fenced = registry.fence(owner);
        LOG.info("journal recovery: registry {} fenced at epoch {}, {} ledgers to read", registry.path(),
                fenced.epoch(), fenced.ledgers().size());
        byte[] password = settings.password().getBytes(StandardCharsets.UTF_8);
        JournalReplay replay = new JournalReplay();
        for (long ledgerId : fenced.ledgers()) {
            replayLedger(bk, ledgerId, 0, password, replay);
            requireCheckpoint(fenced, ledgerId, replay);
        }
        requireCompleteCheckpoint(fenced, replay);
        long millis = (System.nanoTime() - started) / 1_000_000;
        RecoveredState state = replay.result(fenced, replay.stats(fenced.ledgers().size(), millis));
        LOG.info("journal recovered: {}", state);
        return state;
    }

    /**
     * Takes the journal over from the position a hot standby reached ({@link JournalTailer#stop()} first): fences the
     * registry, then opens with recovery (fencing) only the ledgers the standby has not read to their end, and replays
     * what it had not read yet into the standby's replay. The state is the same as {@link #recover} would rebuild;
     * the stats count only what this takeover read.
     */
    public static RecoveredState takeOver(BookKeeper bk, LedgerRegistry registry, JournalSettings settings,
                                          String owner, JournalTailer standby)
            throws IOException, InterruptedException {
        return takeOver(bk, registry, settings, owner, standby, fenced -> { });
    }

    /**
     * As {@link #takeOver(BookKeeper, LedgerRegistry, JournalSettings, String, JournalTailer)}, calling
     * {@code afterFence} with the fenced registry as soon as the registry is fenced, before the ledgers are: from
     * then on the old writer can no longer register a ledger, so the caller may start the new journal
     * ({@link BookKeeperJournal#open}) while the tail is read.
     */
    public static RecoveredState takeOver(BookKeeper bk, LedgerRegistry registry, JournalSettings settings,
                                          String owner, JournalTailer standby,
                                          Consumer<LedgerRegistry.Snapshot> afterFence)
            throws IOException, InterruptedException {
        long started = System.nanoTime();
        JournalTailer.Position at = standby.position();
        JournalReplay replay = standby.replay();
        RecoveredState.Stats before = replay.stats(0, 0);
        LedgerRegistry.Snapshot fenced = registry.fence(owner);
        afterFence.accept(fenced);
        List<Long> ledgers = fenced.ledgers();
        int done = JournalTailer.finishedPrefix(ledgers, at.finished(), at.current());
        long firstEntry = at.nextEntry();
        if (done < 0 || (done < at.finished().size() && fenced.deleted() == 0)) {
            if (fenced.deleted() == 0) {
                throw new IOException("ledger registry " + registry.path() + " lists " + ledgers + ", which does not"
                        + " start with the ledgers this standby read to their end, " + at.finished());
            }
            // The leader deleted what this standby was reading: read the journal from its first checkpoint instead.
            LOG.info("standby fell behind deleted ledgers (at entry {} of ledger {}); takeover reads every registered"
                    + " ledger from the first one's checkpoint", at.nextEntry(), at.current());
            replay = new JournalReplay();
            before = replay.stats(0, 0);
            done = 0;
            firstEntry = 0;
            at = new JournalTailer.Position(List.of(), -1, 0);
        }
        byte[] password = settings.password().getBytes(StandardCharsets.UTF_8);
        List<Long> opened = new ArrayList<>();
        for (int i = done; i < ledgers.size(); i++) {
            long first = i == done && ledgers.get(i) == at.current() ? firstEntry : 0;
            replayLedger(bk, ledgers.get(i), first, password, replay);
            opened.add(ledgers.get(i));
            if (at.current() == -1 && at.finished().isEmpty()) {
                requireCheckpoint(fenced, ledgers.get(i), replay);
            }
        }
        if (at.current() == -1 && at.finished().isEmpty()) {
            requireCompleteCheckpoint(fenced, replay);
        }
        long millis = (System.nanoTime() - started) / 1_000_000;
        RecoveredState.Stats all = replay.stats(ledgers.size(), millis);
        RecoveredState.Stats tail = new RecoveredState.Stats(opened.size(), all.entries() - before.entries(),
                all.blocks() - before.blocks(), all.records() - before.records(), all.bytes() - before.bytes(), millis);
        RecoveredState state = replay.result(fenced, tail);
        LOG.info("journal taken over by a standby at epoch {}: fenced and read the tail of ledgers {} from entry {} of"
                + " ledger {} ({} entries, {} records, {} bytes) in {} ms; {} entries were replayed while standing by",
                fenced.epoch(), opened, at.nextEntry(), at.current(), tail.entries(), tail.records(), tail.bytes(),
                millis, before.entries());
        return state;
    }

    /**
     * After each registered ledger of a journal that lost ledgers: without a checkpoint, state is missing. A
     * checkpoint in parts may begin in the first ledger and end in a later one (a write failure between its parts
     * makes the journal write the rest again in a new ledger); it counts while its parts continue.
     */
    private static void requireCheckpoint(LedgerRegistry.Snapshot fenced, long ledgerId, JournalReplay replay)
            throws IOException {
        if (fenced.deleted() > 0 && replay.checkpoints() == 0 && !replay.checkpointInProgress()) {
            throw new IOException("journal ledger " + ledgerId + " is " + (ledgerId == fenced.ledgers().get(0)
                    ? "the first registered" : "registered") + " after " + fenced.deleted() + " older ledgers were"
                    + " deleted, but holds no checkpoint (nor the start of one) from the first registered ledger on:"
                    + " the journal is incomplete");
        }
    }

    /** After the last ledger: a checkpoint begun in parts must also have ended. */
    private static void requireCompleteCheckpoint(LedgerRegistry.Snapshot fenced, JournalReplay replay)
            throws IOException {
        if (fenced.deleted() > 0 && replay.checkpoints() == 0) {
            throw new IOException("the journal's registered ledgers " + fenced.ledgers() + " begin a checkpoint but"
                    + " never finish it, after " + fenced.deleted() + " older ledgers were deleted: the journal is"
                    + " incomplete");
        }
    }

    private static void replayLedger(BookKeeper bk, long ledgerId, long first, byte[] password, JournalReplay replay)
            throws IOException, InterruptedException {
        LedgerHandle lh;
        try {
            lh = bk.openLedger(ledgerId, BookKeeper.DigestType.CRC32C, password);
        } catch (BKException.BKNoSuchLedgerExistsException
                 | BKException.BKNoSuchLedgerExistsOnMetadataServerException e) {
            // Ledgers are unregistered before they are deleted; a registered one missing means data loss: refuse.
            throw new IOException("journal ledger " + ledgerId + " is registered but does not exist", e);
        } catch (BKException e) {
            throw new IOException("cannot open journal ledger " + ledgerId + " for recovery: " + e.getMessage(), e);
        }
        try {
            replay.sawWriterGrace(WriterGrace.of(lh));
            long last = lh.getLastAddConfirmed();
            LedgerReading.replay(lh, first, last, replay);
            LOG.info("journal ledger {}: entries {}..{} replayed", ledgerId, first, last);
        } finally {
            try {
                lh.close();
            } catch (BKException e) {
                LOG.debug("closing recovered ledger {}: {}", ledgerId, e.getMessage());
            }
        }
    }
}
