package io.sibyl.oracle.journal;

import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleState;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.LedgerHandle;
import org.apache.zookeeper.ZooKeeper;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Properties;
import java.util.Random;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.LongConsumer;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A real {@link OracleState} on a real {@link BookKeeperJournal}, driven as the sequencer drives it (decisions, seal,
 * append, a checkpoint whenever the journal asks for one) by random transactions, without the network. Small commit
 * window and reservation block, so T_max moves and old ledgers become deletable within a short test.
 */
final class OracleDriver {
    final BookKeeper bk;
    final ZooKeeper zk;
    final LedgerRegistry registry;
    final RecoveredState recovered;
    final BookKeeperJournal journal;
    final OracleState state;
    final BookKeeperJournalTest.Fatal fatal = new BookKeeperJournalTest.Fatal();
    private final Random random;
    private final List<Long> running = new ArrayList<>();
    private final List<Long> abortedHere = new ArrayList<>();
    private final long[] rows = new long[4];

    static OracleConfig config() {
        Properties p = new Properties();
        p.setProperty("conflict.table.rows", "4096");
        p.setProperty("recent.commits.capacity", "64");
        p.setProperty("max.running.transactions", "256");
        p.setProperty("timestamp.reservation.block", "40");
        return OracleConfig.fromProperties(p);
    }

    /** Recovers the journal (fencing any earlier driver), opens it and makes the first block durable. */
    OracleDriver(BookKeeperCluster cluster, JournalSettings s, long seed, LongConsumer deleter) throws Exception {
        this(cluster, s, seed, deleter == null ? JournalFaults.NONE : JournalFaults.leaveDroppedLedgers(deleter));
    }

    /** As the constructor, on a journal opened with {@code faults}. */
    static OracleDriver withFaults(BookKeeperCluster cluster, JournalSettings s, long seed, JournalFaults faults)
            throws Exception {
        return new OracleDriver(cluster, s, seed, faults);
    }

    private OracleDriver(BookKeeperCluster cluster, JournalSettings s, long seed, JournalFaults faults)
            throws Exception {
        random = new Random(seed);
        bk = cluster.bookKeeper(s);
        zk = cluster.zooKeeper(s);
        registry = new LedgerRegistry(zk, s.ledgersZnode());
        recovered = JournalRecovery.recover(bk, registry, s, "driver-" + seed);
        journal = BookKeeperJournal.open(bk, registry, recovered.registry(), s, fatal, 0, 0, faults);
        state = recovered.newOracleState(config());
        journal.checkpointsFollow();
        sealAndAppend();
        awaitDurable();
    }

    /** {@code blocks} blocks of 1..6 random decisions each, then waits until all are durable. */
    void run(int blocks) throws InterruptedException {
        for (int b = 0; b < blocks; b++) {
            int ops = 1 + random.nextInt(6);
            for (int i = 0; i < ops; i++) {
                step();
            }
            sealAndAppend();
        }
        awaitDurable();
    }

    private void step() {
        int kind = random.nextInt(100);
        if (kind < 40 || running.isEmpty()) {
            long ts = state.begin(1);
            if (ts > 0) {
                running.add(ts);
            }
        } else if (kind < 80) {
            long ts = running.remove(random.nextInt(running.size()));
            int n = 1 + random.nextInt(rows.length);
            for (int i = 0; i < n; i++) {
                rows[i] = random.nextInt(2000);
            }
            if (state.commit(ts, rows, n) < 0) {
                abortedHere.add(ts);
            }
        } else if (kind < 88) {
            long ts = running.remove(random.nextInt(running.size()));
            state.abort(ts);
            abortedHere.add(ts);
        } else if (kind < 94) {
            state.finish(running.remove(random.nextInt(running.size())));
        } else if (!abortedHere.isEmpty()) {
            state.cleanedUp(abortedHere.remove(random.nextInt(abortedHere.size())));
        }
    }

    /** Begins a transaction and aborts it at once (its client never reports a clean-up); returns its timestamp. */
    long abortOne() throws InterruptedException {
        long ts = state.begin(1);
        state.abort(ts);
        sealAndAppend();
        awaitDurable();
        return ts;
    }

    /** What the sequencer does once its input runs dry. */
    void sealAndAppend() {
        byte[] block = state.sealBlock();
        if (block != null) {
            journal.append(block, () -> { });
        }
        if (journal.wantsCheckpoint()) {
            journal.appendCheckpoint(state.checkpoint());
        }
    }

    void awaitDurable() throws InterruptedException {
        CountDownLatch done = new CountDownLatch(1);
        journal.append(null, done::countDown);
        assertTrue(done.await(30, TimeUnit.SECONDS), "journal did not acknowledge: " + journal.stats());
    }

    /** The state the journal holds now (everything appended is durable after {@link #run}). */
    Checkpoint live() {
        return state.checkpoint();
    }

    /** The process dies: its clients vanish without closing the journal or its ledger. */
    void crash() throws Exception {
        try {
            bk.close();
        } catch (RuntimeException e) {
            // BookKeeper's client may trip over an add or close it still had in flight: a crash does not care
        }
        zk.close();
    }

    List<Long> registered() throws Exception {
        return registry.read().ledgers();
    }

    /** Asserts that {@code r} is the state the oracle had when everything it appended was durable. */
    static void assertMatches(Checkpoint live, RecoveredState r) {
        assertEquals(live.tMax(), r.tMax(), "T_max");
        assertEquals(live.lastTimestamp(), r.lastTimestamp(), "highest timestamp");
        assertArrayEquals(live.aborted(), r.aborted(), "aborted set");
        assertTrue(Checkpoint.sameRanges(live.abortedRanges(), r.abortedRanges()),
                "aborted ranges with their commits: " + live.abortedRanges() + " vs " + r.abortedRanges());
    }

    /** Asserts that two recoveries rebuilt the same state (the stats and the registry aside). */
    static void assertSameState(RecoveredState expected, RecoveredState actual) {
        assertEquals(expected.tMax(), actual.tMax(), "T_max");
        assertEquals(expected.lastTimestamp(), actual.lastTimestamp(), "highest timestamp");
        assertArrayEquals(expected.aborted(), actual.aborted(), "aborted set");
        assertArrayEquals(expected.commitStarts(), actual.commitStarts(), "commits above T_max (starts)");
        assertArrayEquals(expected.commitTimestamps(), actual.commitTimestamps(), "commits above T_max");
        assertTrue(Checkpoint.sameRanges(expected.abortedRanges(), actual.abortedRanges()),
                "aborted ranges with their commits: " + expected.abortedRanges() + " vs " + actual.abortedRanges());
        assertEquals(expected.inDoubtRange() == null, actual.inDoubtRange() == null, "in-doubt range");
    }

    /** Replays {@code ledgers} in order, whole, without fencing: what a recovery that deleted nothing would build. */
    static RecoveredState replayAll(BookKeeper bk, JournalSettings s, List<Long> ledgers) throws Exception {
        JournalReplay replay = new JournalReplay();
        for (long id : ledgers) {
            LedgerHandle lh = bk.openLedgerNoRecovery(id, BookKeeper.DigestType.CRC32C, s.password().getBytes());
            try {
                LedgerReading.replay(lh, 0, lh.getLastAddConfirmed(), replay);
            } finally {
                lh.close();
            }
        }
        return replay.result(new LedgerRegistry.Snapshot(0, "", ledgers, 0), replay.stats(ledgers.size(), 0));
    }

    @Override
    public String toString() {
        return "OracleDriver[" + journal.stats() + ", " + journal.retention() + ", running=" + running.size()
                + ", aborted here=" + Arrays.toString(abortedHere.stream().limit(5).toArray()) + "]";
    }
}
