package io.sibyl.oracle.journal;

import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

/**
 * Notices that the journal may no longer write and stops it: the registry taken over by another epoch or owner (a
 * persistent ZooKeeper watch), the ZooKeeper session expired, closed or disconnected for longer than its timeout, or
 * writes stuck (a watchdog every 100 ms). A disconnected leader must assume its session is gone, since a standby may
 * take over once it expires. Fencing of the ledgers themselves shows up as failed adds in the {@link EntryPipeline}.
 */
final class FencingWatch {
    private static final Logger LOG = LoggerFactory.getLogger(BookKeeperJournal.class);
    private static final long WATCHDOG_PERIOD_MS = 100;

    private final JournalContext journal;
    private final LedgerRoller ledgers;
    private final EntryPipeline pipeline;
    private final Watcher registryWatcher = this::onZooKeeperEvent;
    private volatile long disconnectedSinceNanos = -1;

    FencingWatch(JournalContext journal, LedgerRoller ledgers, EntryPipeline pipeline) {
        this.journal = journal;
        this.ledgers = ledgers;
        this.pipeline = pipeline;
    }

    /** Watches the registry; before the first ledger is created, so a takeover meanwhile is seen. */
    void watch() throws IOException, InterruptedException {
        try {
            LedgerRegistry registry = journal.registry();
            registry.zooKeeper().addWatch(registry.path(), registryWatcher, AddWatchMode.PERSISTENT);
        } catch (KeeperException e) {
            throw new IOException("cannot watch the ledger registry " + journal.registry().path() + ": "
                    + e.getMessage(), e);
        }
    }

    /** Once the journal is open: a takeover between fencing and the watch is missed by the watch, so read once. */
    void startWatchdog() {
        checkRegistry();
        journal.admin().scheduleWithFixedDelay(this::watchdog, WATCHDOG_PERIOD_MS, WATCHDOG_PERIOD_MS,
                TimeUnit.MILLISECONDS);
    }

    void unwatch() {
        try {
            LedgerRegistry registry = journal.registry();
            registry.zooKeeper().removeWatches(registry.path(), registryWatcher, Watcher.WatcherType.Any, true);
        } catch (KeeperException | InterruptedException | RuntimeException e) {
            // the session may be gone; nothing to clean up then
        }
    }

    private void onZooKeeperEvent(WatchedEvent event) {
        if (event.getType() == Watcher.Event.EventType.None) {
            switch (event.getState()) {
                case Expired -> journal.halt().fail("ZooKeeper session expired", null);
                case Closed -> {
                    if (!journal.halt().closing()) {
                        journal.halt().fail("ZooKeeper client closed under the journal", null);
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
        if (!journal.halt().failed()) {
            journal.onJournalThread(this::checkRegistry);
        }
    }

    /** Compares the registry with what this journal wrote; another epoch or owner means we were deposed. */
    private void checkRegistry() {
        if (journal.halt().stopped()) {
            return;
        }
        try {
            LedgerRegistry.Snapshot now = journal.registry().read();
            LedgerRegistry.Snapshot mine = ledgers.registered();
            if (now.epoch() != mine.epoch() || !now.owner().equals(mine.owner())) {
                journal.halt().fail("ledger registry " + journal.registry().path() + " taken over by epoch "
                        + now.epoch() + " (" + now.owner() + "); this journal is epoch " + mine.epoch(), null);
            }
        } catch (IOException e) {
            LOG.warn("cannot read the ledger registry: {}", e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Periodic: session state, disconnection time, and writes that fail or hang for too long. */
    private void watchdog() {
        if (journal.halt().stopped()) {
            return;
        }
        ZooKeeper zk = journal.registry().zooKeeper();
        if (!zk.getState().isAlive()) {
            journal.halt().fail("ZooKeeper session is " + zk.getState(), null);
            return;
        }
        long since = disconnectedSinceNanos;
        if (since >= 0 && (System.nanoTime() - since) / 1_000_000 >= journal.settings().zkSessionTimeoutMs()) {
            journal.halt().fail("disconnected from ZooKeeper for longer than the session timeout ("
                    + journal.settings().zkSessionTimeoutMs() + " ms)", null);
            return;
        }
        EntryPipeline.Stall stall = pipeline.stall();
        if (stall.failingForMs() >= journal.settings().writeRetryMs()) {
            // The retried add may hang on a ledger whose bookies are faulty; the deadline holds regardless.
            journal.halt().fail("journal unwritable for " + stall.failingForMs() + " ms: writes failed and none has"
                    + " succeeded since", null);
        } else if (stall.pendingForMs() >= stallLimitMs()) {
            // An add that neither completes nor fails: BookKeeper can keep replacing bookies (an ensemble smaller
            // than the cluster has spares) for an entry no bookie takes, or wait on a bookie that never answers.
            // Without this the oracle would hang, neither serving nor letting a standby take over.
            journal.halt().fail("journal unwritable for " + stall.pendingForMs() + " ms: an add to ledger "
                    + stall.ledgerId() + " has not completed (BookKeeper is still retrying it)", null);
        }
    }

    /**
     * How long the oldest undelivered add may stay pending: journal.write.retry.ms, but never less than BookKeeper's
     * add timeout. An add is not stuck before BookKeeper itself gives up on a silent bookie, and a retry time of 0
     * (give up at the first failure) must not make every add in flight fatal.
     */
    private long stallLimitMs() {
        return Math.max(journal.settings().writeRetryMs(), JournalClients.ADD_TIMEOUT_SECONDS * 1000L);
    }
}
