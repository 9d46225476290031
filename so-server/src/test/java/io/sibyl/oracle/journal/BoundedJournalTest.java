package io.sibyl.oracle.journal;

import org.apache.bookkeeper.client.BKException;
import org.apache.bookkeeper.client.BookKeeper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The bounded journal on in-process ZooKeeper + 3 bookies: checkpoints open each new ledger, ledgers whose commits
 * T_max passed are dropped and deleted, recovery and the hot standby start from the first registered ledger's
 * checkpoint. The oracle is a real {@code OracleState} driven as the sequencer drives it ({@link OracleDriver}).
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class BoundedJournalTest {
    @RegisterExtension
    static final BookKeeperCluster cluster = BookKeeperCluster.perTestClass(3);

    /** Entries of at most 64 bytes (a few blocks) and ledgers of 6 entries: a rollover every few dozen decisions. */
    private static JournalSettings settings(TestInfo info) {
        return cluster.settings(info.getTestMethod().orElseThrow().getName()).withGroupCommit(64, 1000, true, 32)
                .withRollover(1 << 20, 6);
    }

    static boolean existsInBookKeeper(BookKeeper bk, JournalSettings s, long id) throws Exception {
        try {
            bk.openLedgerNoRecovery(id, BookKeeper.DigestType.CRC32C, s.password().getBytes()).close();
            return true;
        } catch (BKException.BKNoSuchLedgerExistsException
                 | BKException.BKNoSuchLedgerExistsOnMetadataServerException e) {
            return false;
        }
    }

    @Test
    void recoveryAfterManyRolloversReadsOnlyTheRetainedLedgersAndRebuildsWhatAFullReplayWould(TestInfo info)
            throws Exception {
        // Dropped ledgers are left in BookKeeper (as a crash right after the drop leaves them), and no later oracle
        // sweeps them, so that the whole journal can still be replayed to compare.
        JournalSettings s = settings(info).withSweepOrphans(false);
        List<Long> dropped = new CopyOnWriteArrayList<>();
        OracleDriver gen = new OracleDriver(cluster, s, 1, dropped::add);
        int rangesWithCommits = 0;
        for (int generation = 2; generation <= 4; generation++) {
            gen.run(500);
            gen.crash(); // transactions left running become the next oracle's in-doubt range
            OracleDriver next = new OracleDriver(cluster, s, generation, dropped::add);
            RecoveredState bounded = next.recovered;
            List<Long> all = new ArrayList<>(dropped);
            all.addAll(bounded.registry().ledgers());
            RecoveredState full = OracleDriver.replayAll(next.bk, s, all);
            OracleDriver.assertSameState(full, bounded);
            assertTrue(bounded.registry().deleted() > 0, "ledgers were dropped: " + bounded.registry());
            assertEquals(bounded.registry().ledgers().size(), bounded.stats().ledgers());
            assertTrue(bounded.stats().ledgers() * 2 < all.size(), "recovery read " + bounded.stats().ledgers()
                    + " of the journal's " + all.size() + " ledgers");
            assertTrue(bounded.stats().entries() < full.stats().entries(), bounded.stats() + " vs " + full.stats());
            assertEquals(generation - 2, bounded.abortedRanges().size(), "each earlier crash left an aborted range");
            for (var r : bounded.abortedRanges()) {
                rangesWithCommits += r.committedCount() > 0 ? 1 : 0;
            }
            gen = next;
        }
        assertTrue(rangesWithCommits > 0, "some range carried commits through a checkpoint");
        gen.crash();
    }

    @Test
    void ledgersAreDeletedInBookKeeperDuringALongRunWithSmallLedgers(TestInfo info) throws Exception {
        JournalSettings s = settings(info);
        OracleDriver oracle = new OracleDriver(cluster, s, 7, null);
        Set<Long> seen = new LinkedHashSet<>();
        int mostRegistered = 0;
        for (int round = 0; round < 40; round++) {
            oracle.run(100);
            List<Long> now = oracle.registered();
            seen.addAll(now);
            mostRegistered = Math.max(mostRegistered, now.size());
        }
        BookKeeperJournal.Retention kept = oracle.journal.retention();
        assertTrue(kept.ledgersDropped() >= 20, "ledgers dropped: " + oracle);
        assertTrue(mostRegistered <= 12, "the journal stays bounded: at most " + mostRegistered + " ledgers of "
                + seen.size() + " registered at once");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (oracle.journal.retention().ledgersDeleted() < kept.ledgersDropped() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        List<Long> registered = oracle.registered();
        int deleted = 0;
        for (long id : seen) {
            if (!registered.contains(id)) {
                assertFalse(existsInBookKeeper(oracle.bk, s, id), "dropped ledger " + id + " deleted in BookKeeper");
                deleted++;
            }
        }
        assertTrue(deleted >= 20, deleted + " ledgers deleted");
        Checkpoint live = oracle.live();
        oracle.crash();
        OracleDriver after = new OracleDriver(cluster, s, 8, null);
        OracleDriver.assertMatches(live, after.recovered);
        // A checkpoint that became durable between the registry read above and the crash may have dropped the oldest
        // ledgers still: recovery reads the newest of those registered then, from its first checkpoint on.
        List<Long> read = after.recovered.registry().ledgers();
        boolean newestOfThose = !read.isEmpty() && read.size() <= registered.size()
                && read.equals(registered.subList(registered.size() - read.size(), registered.size()));
        assertTrue(newestOfThose, "recovery read only retained ledgers: " + read + " of " + registered);
        after.crash();
    }

    @Test
    void aDroppedLedgerWhoseDeleteFailsIsDeletedByALaterAttempt(TestInfo info) throws Exception {
        JournalSettings s = settings(info);
        Map<Long, Integer> attempts = new ConcurrentHashMap<>();
        OracleDriver oracle = OracleDriver.withFaults(cluster, s, 9, JournalFaults.deleteAttempts(
                inBookKeeper -> id -> attempts.merge(id, 1, Integer::sum) <= 2
                        ? CompletableFuture.completedFuture(BKException.Code.ZKException) // as in a ZooKeeper hiccup
                        : inBookKeeper.delete(id)));
        for (int round = 0; round < 40 && oracle.journal.retention().ledgersDropped() < 2; round++) {
            oracle.run(100);
        }
        long dropped = oracle.journal.retention().ledgersDropped();
        assertTrue(dropped >= 2, "ledgers dropped: " + oracle);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        // Until every ledger dropped so far is deleted, including one a late checkpoint dropped after the count above.
        while (oracle.journal.retention().ledgersDeleted() < oracle.journal.retention().ledgersDropped()
                && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertTrue(oracle.journal.retention().ledgersDeleted() >= dropped, oracle.journal.retention().toString());
        List<Long> registered = oracle.registered();
        for (Map.Entry<Long, Integer> e : attempts.entrySet()) {
            assertFalse(registered.contains(e.getKey()));
            assertFalse(existsInBookKeeper(oracle.bk, s, e.getKey()), "ledger " + e.getKey() + " still exists");
            assertTrue(e.getValue() >= 3, "ledger " + e.getKey() + " deleted at attempt " + e.getValue());
        }
        assertFalse(oracle.journal.isFailed(), oracle.journal.failure());
        oracle.crash();
    }

    @Test
    void anAbortWhoseRecordIsInADeletedLedgerStaysAbortedAfterRecovery(TestInfo info) throws Exception {
        JournalSettings s = settings(info);
        OracleDriver oracle = new OracleDriver(cluster, s, 11, null);
        oracle.run(50);
        long aborted = oracle.abortOne();
        long ledgerOfAbort = oracle.journal.currentLedgerId();
        for (int round = 0; round < 60 && oracle.registered().contains(ledgerOfAbort); round++) {
            oracle.run(50);
        }
        assertFalse(oracle.registered().contains(ledgerOfAbort), "the ABORT's ledger " + ledgerOfAbort
                + " was dropped: " + oracle);
        Checkpoint live = oracle.live();
        oracle.crash();
        OracleDriver after = new OracleDriver(cluster, s, 12, null);
        assertTrue(after.recovered.isAborted(aborted), "transaction " + aborted + " is still aborted, carried by the"
                + " checkpoint");
        assertFalse(after.recovered.isInDoubt(aborted));
        OracleDriver.assertMatches(live, after.recovered);
        after.crash();
    }

    @Test
    void aCrashBetweenUnregisterAndDeleteLeavesOrphanLedgersThatNothingReads(TestInfo info) throws Exception {
        // Without the sweep, so the orphans stay and the journal must be right regardless (OrphanSweepTest sweeps).
        JournalSettings s = settings(info).withSweepOrphans(false);
        List<Long> orphans = new CopyOnWriteArrayList<>();
        // Dropped from the registry, never deleted: what a crash right after the compare-and-set leaves.
        OracleDriver oracle = new OracleDriver(cluster, s, 21, orphans::add);
        for (int round = 0; round < 40 && orphans.isEmpty(); round++) {
            oracle.run(50);
        }
        assertFalse(orphans.isEmpty(), "ledgers were dropped: " + oracle);
        Checkpoint live = oracle.live();
        oracle.crash();

        OracleDriver after = new OracleDriver(cluster, s, 22, null);
        OracleDriver.assertMatches(live, after.recovered);
        for (long id : orphans) {
            assertFalse(after.recovered.registry().ledgers().contains(id), "orphan " + id + " is not registered");
            assertTrue(existsInBookKeeper(after.bk, s, id), "orphan " + id + " still takes space in BookKeeper");
        }
        // The next oracle keeps working, drops and deletes its own old ledgers, and never looks at the orphans.
        for (int round = 0; round < 40 && after.journal.retention().ledgersDropped() == 0; round++) {
            after.run(50);
        }
        assertTrue(after.journal.retention().ledgersDropped() > 0, after.toString());
        assertFalse(after.journal.isFailed(), after.journal.failure());
        Checkpoint live2 = after.live();
        after.crash();
        OracleDriver third = new OracleDriver(cluster, s, 23, null);
        OracleDriver.assertMatches(live2, third.recovered);
        third.crash();
    }

    @Test
    void standbyKeepsTailingWhileTheLeaderDeletesLedgersItHasRead(TestInfo info) throws Exception {
        JournalSettings s = settings(info);
        OracleDriver leader = new OracleDriver(cluster, s, 31, null);
        JournalTailer standby = tailer(s);
        standby.start(1);
        for (int round = 0; round < 30; round++) {
            leader.run(50);
        }
        assertTrue(leader.journal.retention().ledgersDropped() >= 10, leader.toString());
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (standby.position().current() != leader.journal.currentLedgerId() && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        standby.stop(); // throws if the tail had failed
        // It forgets what the leader dropped (at its next registry read, every 200 ms at most while it reads).
        List<Long> finished = standby.position().finished();
        assertTrue(finished.size() * 3 < leader.journal.stats().ledgersCreated(), "the standby forgot the dropped"
                + " ledgers it had read: it lists " + finished + "; " + leader);
        Checkpoint live = leader.live();
        RecoveredState taken = takeOver(s, standby);
        OracleDriver.assertMatches(live, taken);
        assertTrue(leader.fatal.await(10), "the leader was fenced");
        leader.crash();
    }

    @Test
    void standbyThatFellBehindDeletedLedgersStartsAgainFromTheFirstCheckpoint(TestInfo info) throws Exception {
        JournalSettings s = settings(info);
        OracleDriver leader = new OracleDriver(cluster, s, 41, null);
        leader.run(40);
        JournalTailer standby = tailer(s);
        standby.poll(); // reads what is there, then stops polling: it falls behind
        runUntilDropped(leader, standby);
        // The leader may drop more ledgers while the standby polls (a checkpoint turning durable): the standby starts
        // from the first one registered when it read the registry, somewhere between these two reads.
        long firstBefore = leader.registered().get(0);
        standby.poll(); // no failure: it starts again
        long firstAfter = leader.registered().get(0);
        assertEquals(1, standby.restarts());
        long startedAt = standby.position().finished().isEmpty()
                ? standby.position().current() : standby.position().finished().get(0);
        assertTrue(startedAt >= firstBefore && startedAt <= firstAfter, "from the first ledger: started at "
                + startedAt + ", first registered " + firstBefore + " before and " + firstAfter + " after");
        while (standby.poll() > 0) {
            // catch up
        }
        standby.stop();
        Checkpoint live = leader.live();
        RecoveredState taken = takeOver(s, standby);
        OracleDriver.assertMatches(live, taken);
        leader.crash();
    }

    @Test
    void takeoverByAStandbyBehindDeletedLedgersReadsFromTheFirstCheckpoint(TestInfo info) throws Exception {
        JournalSettings s = settings(info);
        OracleDriver leader = new OracleDriver(cluster, s, 51, null);
        leader.run(40);
        JournalTailer standby = tailer(s);
        standby.poll();
        standby.stop();
        runUntilDropped(leader, standby);
        Checkpoint live = leader.live();
        RecoveredState taken = takeOver(s, standby);
        OracleDriver.assertMatches(live, taken);
        assertEquals(taken.registry().ledgers().size(), taken.stats().ledgers(), "it read every registered ledger");
        leader.crash();
    }

    @Test
    void recoveryRefusesAJournalWhoseFirstLedgerLacksTheCheckpoint(TestInfo info) throws Exception {
        // Blocks appended without checkpoints (no sequencer promised them): no ledger starts with one.
        JournalSettings s = settings(info);
        LedgerRegistry registry = new LedgerRegistry(cluster.zooKeeper(s), s.ledgersZnode());
        BookKeeper bk = cluster.bookKeeper(s);
        RecoveredState empty = JournalRecovery.recover(bk, registry, s, "writer");
        BookKeeperJournal j = BookKeeperJournal.open(bk, registry, empty.registry(), s,
                new BookKeeperJournalTest.Fatal());
        BookKeeperJournalTest.appendAndAwait(j, new DecisionModel(5, 50), 400, 4);
        assertEquals(0, j.retention().checkpoints());
        j.close();
        assertTrue(registry.read().ledgers().size() > 1, j.stats().toString());
        // A registry that says its head was dropped, although the next ledger holds no checkpoint.
        registry.dropLedgers(registry.read(), 1);
        var ex = assertThrows(java.io.IOException.class, () -> JournalRecovery.recover(bk, registry, s, "recoverer"));
        assertTrue(ex.getMessage().contains("holds no checkpoint"), ex.getMessage());
    }

    private static JournalTailer tailer(JournalSettings s) throws Exception {
        return new JournalTailer(cluster.bookKeeper(s), new LedgerRegistry(cluster.zooKeeper(s), s.ledgersZnode()), s);
    }

    private static RecoveredState takeOver(JournalSettings s, JournalTailer standby) throws Exception {
        return JournalRecovery.takeOver(cluster.bookKeeper(s), new LedgerRegistry(cluster.zooKeeper(s),
                s.ledgersZnode()), s, "standby", standby);
    }

    /** Drives the leader on until it has dropped every ledger the standby has read or is reading. */
    private static void runUntilDropped(OracleDriver leader, JournalTailer standby) throws Exception {
        List<Long> known = new ArrayList<>(standby.position().finished());
        known.add(standby.position().current());
        for (int round = 0; round < 60 && oneIsRegistered(leader.registered(), known); round++) {
            leader.run(50);
        }
        assertFalse(oneIsRegistered(leader.registered(), known), "every ledger the standby knew was dropped");
    }

    private static boolean oneIsRegistered(List<Long> registered, List<Long> ids) {
        for (long id : ids) {
            if (registered.contains(id)) {
                return true;
            }
        }
        return false;
    }
}
