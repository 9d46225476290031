package io.sibyl.oracle.journal;

import org.apache.bookkeeper.client.BKException;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.LedgerHandle;
import org.apache.bookkeeper.client.api.LastConfirmedAndEntry;
import io.sibyl.protocol.ProtocolException;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * A hot standby's reader of the journal: follows the registered ledgers as the leader writes them, without fencing
 * ({@code openLedgerNoRecovery}, then the last-add-confirmed the bookies report), and replays each entry into a
 * {@link JournalReplay} as it appears. At takeover {@link JournalRecovery#takeOver} then only fences and reads what
 * lies past {@link #position()}.
 *
 * <p>Ledgers are read strictly in registry order, and a ledger is left only once it is closed and read to its last
 * entry: replay order must be journal order (ABORT/FORGET of one timestamp, the rewritten suffix after a write
 * failure). Entries up to the last-add-confirmed reached an ack quorum, and recovery never closes a ledger below it,
 * so what the standby replayed is a prefix of what any recovery reads. The newest entry of an open ledger is not
 * visible until the next one confirms it; the takeover reads it.
 *
 * <p>The leader deletes old ledgers after checkpoints. Ledgers this standby finished may vanish from the head of the
 * registry (forgotten here too); if the one it is reading, or every one it knows, was dropped, it fell behind: it
 * starts again with a fresh replay from the first registered ledger, which holds a checkpoint.
 *
 * <p>Once it has read everything the bookies confirmed in the newest ledger, the standby waits for the next entry with
 * a long poll (the bookies answer when it is confirmed, or after {@link #LONG_POLL_MS}) instead of asking for the
 * last-add-confirmed again and again: an idle leader then costs its standby and the bookies next to nothing, and a
 * new entry reaches the standby with the poll's answer instead of at the next poll.
 *
 * <p>Not thread-safe: {@link #start} runs {@link #poll} on its own thread; {@link #stop} ends it, after which the
 * caller owns the replay and the position.
 */
public final class JournalTailer {
    private static final Logger LOG = LoggerFactory.getLogger(JournalTailer.class);
    /** How long an open ledger that is not the newest may show no progress before its metadata is read again. */
    private static final long REOPEN_STALLED_NANOS = 500_000_000L;
    private static final int READ_BATCH = 256;
    private static final long STUCK_WARN_NANOS = 10_000_000_000L;
    /** While the ledger being read is open, the registry can only have grown behind it: look at it this often. */
    private static final long REGISTRY_REFRESH_NANOS = 200_000_000L;
    /**
     * Longest a long poll waits for the next entry. Short enough that a rollover (the ledger closed, no entry will
     * come) and registry changes are noticed about as soon as the registry is read again anyway.
     */
    static final long LONG_POLL_MS = 100;

    /**
     * Where the standby is: {@code finished} ledgers were read to their end (closed), {@code current} (or -1) is
     * being read and {@code nextEntry} is its first entry not replayed yet.
     */
    public record Position(List<Long> finished, long current, long nextEntry) {
        public Position {
            finished = List.copyOf(finished);
        }
    }

    private final BookKeeper bk;
    private final LedgerRegistry registry;
    private final byte[] password;
    private JournalReplay replay = new JournalReplay();
    private final List<Long> finished = new ArrayList<>();
    private LedgerHandle handle;
    private long currentId = -1;
    private long nextEntry;
    private long lastProgressNanos = System.nanoTime();
    private long lastWarnNanos;
    private long failingSinceNanos;
    private long epochSeen;
    private long deletedSeen;
    private long restarts;
    private List<Long> ledgers = List.of();
    private long registryReadNanos;
    private Thread thread;
    private volatile boolean stopping;
    /** Completed by {@link #stop}: ends a long poll at once instead of after its timeout (a takeover waits for it). */
    private final CompletableFuture<Void> stopped = new CompletableFuture<>();
    private volatile IOException failure;
    /** When the last poll began that read everything the newest ledger had confirmed (0: not yet); for the lag. */
    private volatile long caughtUpNanos;
    /** Entries replayed so far, readable from any thread (the replay itself is the polling thread's). */
    private volatile long entriesRead;

    public JournalTailer(BookKeeper bk, LedgerRegistry registry, JournalSettings settings) {
        this.bk = bk;
        this.registry = registry;
        this.password = settings.password().getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Reads every entry that became visible since the last call. Returns the number of entries replayed.
     *
     * @throws IOException if the journal cannot be read as a journal (a registered ledger is missing, an entry is not
     *                     a sequence of decision blocks); transient BookKeeper or ZooKeeper errors only delay it
     */
    public int poll() throws IOException, InterruptedException {
        if (handle == null || handle.isClosed() || System.nanoTime() - registryReadNanos > REGISTRY_REFRESH_NANOS) {
            LedgerRegistry.Snapshot snap = registry.read();
            registryReadNanos = System.nanoTime();
            if (snap.epoch() != epochSeen) {
                LOG.info("standby: the journal is at epoch {} of {}, ledgers {}", snap.epoch(), snap.owner(),
                        snap.ledgers());
                epochSeen = snap.epoch();
            }
            ledgers = snap.ledgers();
            deletedSeen = snap.deleted();
        }
        if (!align()) {
            throw new IOException("ledger registry " + registry.path() + " lists " + ledgers + ", which does not start"
                    + " with the ledgers already read, " + finished);
        }
        int replayed = 0;
        while (finished.size() < ledgers.size()) {
            long id = ledgers.get(finished.size());
            boolean newest = finished.size() == ledgers.size() - 1;
            // Taken before anything is read: everything confirmed by then is what "caught up" can promise.
            long asOf = System.nanoTime();
            try {
                if (currentId != id || handle == null) {
                    openCurrent(id);
                } else if (!newest && !handle.isClosed()
                        && System.nanoTime() - lastProgressNanos > REOPEN_STALLED_NANOS) {
                    openCurrent(id); // no news about a ledger the writer has moved past: read its metadata again
                }
                boolean closed = handle.isClosed(); // before the last entry: a close seen late is caught next time
                long last;
                if (closed) {
                    last = handle.getLedgerMetadata().getLastEntryId();
                } else if (newest && nextEntry > handle.getLastAddConfirmed()) {
                    long before = nextEntry;
                    last = awaitNextEntry();
                    replayed += (int) (nextEntry - before);
                    if (last < nextEntry) {
                        caughtUpNanos = asOf;
                        break; // nothing more confirmed for now
                    }
                } else {
                    last = handle.readLastConfirmed();
                }
                if (closed && handle.getLastAddConfirmed() < last) {
                    // Closed since we opened it: the handle still checks reads against its old last-add-confirmed.
                    openCurrent(id);
                }
                while (nextEntry <= last) {
                    long to = Math.min(last, nextEntry + READ_BATCH - 1);
                    LedgerReading.replay(handle, nextEntry, to, replay);
                    replayed += (int) (to - nextEntry + 1);
                    nextEntry = to + 1;
                    lastProgressNanos = System.nanoTime();
                }
                failingSinceNanos = 0;
                if (!closed) {
                    if (newest) {
                        caughtUpNanos = asOf; // read up to what the newest ledger had confirmed when asked
                    }
                    break;
                }
                finished.add(id);
                closeHandle();
                currentId = -1;
                nextEntry = 0;
            } catch (BKException | LedgerReading.ReadFailedException e) {
                // Transient (a bookie restarting, a ledger changing under us): open it afresh at the next poll.
                long now = System.nanoTime();
                if (failingSinceNanos == 0) {
                    failingSinceNanos = now;
                }
                if (now - failingSinceNanos > STUCK_WARN_NANOS && now - lastWarnNanos > STUCK_WARN_NANOS) {
                    LOG.warn("standby: cannot read journal ledger {} from entry {} for {} s: {}", id, nextEntry,
                            (now - failingSinceNanos) / 1_000_000_000L, e.getMessage());
                    lastWarnNanos = now;
                } else {
                    LOG.debug("standby: reading journal ledger {}: {}", id, e.getMessage());
                }
                closeHandle();
                break;
            }
        }
        entriesRead += replayed; // one writer: the polling thread
        return replayed;
    }

    /**
     * How far behind the journal this standby may be: the time since the start of the last poll after which it held
     * every entry the newest ledger had confirmed (a leader's decision reaches it within this); -1 before the first.
     * Any thread.
     */
    public long lagMillis() {
        long at = caughtUpNanos;
        return at == 0 ? -1 : TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - at);
    }

    /** Entries replayed so far; any thread (unlike {@link #entries()}, which is the caller's after {@link #stop()}). */
    public long entriesRead() {
        return entriesRead;
    }

    /**
     * Lines the position up with the registry's ledger list: forgets finished ledgers the leader dropped, or starts
     * over from the first registered ledger when the position is gone. False if the registry does not continue what
     * was read although nothing was ever dropped (not a journal this standby can follow).
     */
    private boolean align() {
        int done = finishedPrefix(ledgers, finished, currentId);
        if (done == finished.size()) {
            return true;
        }
        if (deletedSeen == 0) {
            return false;
        }
        if (done >= 0) {
            LOG.info("standby: journal ledgers {} were deleted by the leader after a checkpoint",
                    finished.subList(0, finished.size() - done));
            finished.subList(0, finished.size() - done).clear();
            return true;
        }
        LOG.info("standby: fell behind the leader's deleted ledgers (was at entry {} of ledger {}, after {});"
                + " starting again from the checkpoint of ledger {}", nextEntry, currentId, finished, ledgers.get(0));
        closeHandle();
        replay = new JournalReplay();
        finished.clear();
        currentId = -1;
        nextEntry = 0;
        restarts++;
        return true;
    }

    /**
     * How many of {@code registered}'s first ledgers are the tail of {@code finished} (read to their end, the
     * registry having dropped the rest), or -1 if the registry does not continue the position {@code finished} +
     * {@code current}: its ledgers before the one being read were dropped, or that one too.
     */
    static int finishedPrefix(List<Long> registered, List<Long> finished, long current) {
        if (registered.isEmpty()) {
            return finished.isEmpty() ? 0 : -1;
        }
        int from = finished.indexOf(registered.get(0));
        if (from < 0) {
            return registered.get(0) == current || (finished.isEmpty() && current == -1) ? 0 : -1;
        }
        List<Long> kept = finished.subList(from, finished.size());
        if (registered.size() < kept.size() || !registered.subList(0, kept.size()).equals(kept)) {
            return -1;
        }
        return kept.size();
    }

    /**
     * Long-polls the bookies for entry {@code nextEntry} of the open newest ledger and replays it if it came. Returns
     * the last-add-confirmed the bookies reported (below {@code nextEntry} if nothing new came in time, or on stop).
     */
    private long awaitNextEntry() throws IOException, InterruptedException, BKException {
        CompletableFuture<LastConfirmedAndEntry> poll =
                handle.readLastAddConfirmedAndEntryAsync(nextEntry, LONG_POLL_MS, false);
        try {
            CompletableFuture.anyOf(poll, stopped).get();
        } catch (ExecutionException e) {
            // the poll failed: reported below
        }
        if (!poll.isDone()) {
            poll.thenAccept(LastConfirmedAndEntry::close); // stopping: release it whenever it answers
            return nextEntry - 1;
        }
        LastConfirmedAndEntry answer;
        try {
            answer = poll.get();
        } catch (ExecutionException e) {
            if (e.getCause() instanceof BKException.BKNoSuchLedgerExistsException
                    || e.getCause() instanceof BKException.BKNoSuchEntryException) {
                // The leader has not written this ledger's first entry yet, and bookies answer a long poll on a
                // ledger they do not hold at once: wait as long as a poll would have, instead of asking in a loop.
                try {
                    stopped.get(LONG_POLL_MS, TimeUnit.MILLISECONDS);
                } catch (TimeoutException | ExecutionException quiet) {
                    // nothing came: the next poll asks again
                }
                return nextEntry - 1;
            }
            if (e.getCause() instanceof BKException bke) {
                throw bke;
            }
            throw new IOException("long poll of journal ledger " + handle.getId() + ": " + e.getCause(), e.getCause());
        }
        try (answer) {
            long lac = answer.getLastAddConfirmed();
            if (!answer.hasEntry() || answer.getEntry().getEntryId() != nextEntry || nextEntry > lac) {
                // Only a confirmed entry may be replayed: recovery can still drop an unconfirmed one.
                return Math.min(lac, nextEntry - 1);
            }
            try {
                replay.entry(answer.getEntry().getEntryBytes());
            } catch (ProtocolException e) {
                throw new IOException("journal ledger " + handle.getId() + " entry " + nextEntry
                        + " is not a sequence of decision blocks: " + e.getMessage(), e);
            }
            nextEntry++;
            lastProgressNanos = System.nanoTime();
            return lac;
        }
    }

    private void openCurrent(long id) throws BKException, InterruptedException, IOException {
        closeHandle();
        if (currentId != id) {
            currentId = id;
            nextEntry = 0;
        }
        try {
            handle = bk.openLedgerNoRecovery(id, BookKeeper.DigestType.CRC32C, password);
        } catch (BKException.BKNoSuchLedgerExistsException
                 | BKException.BKNoSuchLedgerExistsOnMetadataServerException e) {
            LedgerRegistry.Snapshot now = registry.read();
            if (now.ledgers().contains(id)) {
                throw new IOException("journal ledger " + id + " is registered but does not exist", e);
            }
            registryReadNanos = 0; // dropped by the leader since we read the registry: catch up at the next poll
            throw e;
        }
        replay.sawWriterGrace(WriterGrace.of(handle));
        lastProgressNanos = System.nanoTime();
    }

    private void closeHandle() {
        if (handle != null) {
            try {
                handle.close(); // read-only: releases the metadata listener, writes nothing
            } catch (BKException | InterruptedException e) {
                LOG.debug("standby: closing ledger handle {}: {}", handle.getId(), e.toString());
            }
            handle = null;
        }
    }

    /** Polls on a daemon thread, pausing {@code intervalMs} whenever a poll found nothing new. */
    public void start(long intervalMs) {
        thread = new Thread(() -> {
            while (!stopping) {
                try {
                    if (poll() == 0) {
                        Thread.sleep(intervalMs);
                    }
                } catch (InterruptedException e) {
                    return;
                } catch (IOException e) {
                    LOG.error("standby: cannot follow the journal", e);
                    failure = e;
                    return;
                } catch (RuntimeException e) {
                    LOG.error("standby: cannot follow the journal", e);
                    failure = new IOException("standby tail failed: " + e, e);
                    return;
                }
            }
        }, "sibyl-standby-tail");
        thread.setDaemon(true);
        thread.start();
    }

    /**
     * Ends the polling thread (waiting for a poll in progress to finish) and releases the ledger handle. Afterwards
     * {@link #position()} and {@link #replay()} are the caller's.
     *
     * @throws IOException if the tail had failed: the standby must then recover from scratch
     */
    public void stop() throws IOException, InterruptedException {
        stopping = true;
        stopped.complete(null);
        if (thread != null) {
            thread.join();
        }
        closeHandle();
        if (failure != null) {
            throw failure;
        }
    }

    public Position position() {
        return new Position(finished, currentId, nextEntry);
    }

    /** The state replayed so far. */
    public JournalReplay replay() {
        return replay;
    }

    /** Times this standby fell behind deleted ledgers and started again from a checkpoint. */
    public long restarts() {
        return restarts;
    }

    /** Entries replayed so far. */
    public long entries() {
        return replay.stats(0, 0).entries();
    }
}
