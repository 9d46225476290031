package io.sibyl.oracle.journal;

import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.LedgerHandle;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The start-up sweep of orphan journal ledgers on in-process ZooKeeper + 3 bookies: orphans are left as a crash
 * between drop and delete leaves them (the {@link JournalFaults#leaveDroppedLedgers} fault), or as a crash between
 * creating and registering a ledger (a tagged ledger created by hand); the next leader must delete exactly those, and
 * nothing that is registered, of its own or a later epoch, untagged, or of another registry.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class OrphanSweepTest {
    @RegisterExtension
    static final BookKeeperCluster cluster = BookKeeperCluster.perTestClass(3);

    /** Ledgers of 6 entries, as in BoundedJournalTest, so ledgers are dropped within a short run. */
    private static JournalSettings settings(String name) {
        return cluster.settings(name).withGroupCommit(64, 1000, true, 32).withRollover(1 << 20, 6);
    }

    private static String name(TestInfo info) {
        return info.getTestMethod().orElseThrow().getName();
    }

    @Test
    void orphanLedgerOfEarlierEpochIsDeletedByNextLeader(TestInfo info) throws Exception {
        JournalSettings s = settings(name(info));
        List<Long> dropped = new CopyOnWriteArrayList<>();
        OracleDriver old = leaveOrphans(s, 1, dropped, 3);
        // A leader that crashed after creating its next ledger and before registering it.
        long neverRegistered = createTagged(old.bk, s, s.ledgersZnode(), old.journal.epoch());
        Checkpoint live = old.live();
        old.crash();

        OracleDriver next = new OracleDriver(cluster, s, 2, null);
        List<Long> swept = next.journal.orphanSweep().get(60, TimeUnit.SECONDS);
        Set<Long> orphans = new TreeSet<>(dropped);
        orphans.add(neverRegistered);
        assertEquals(orphans, new TreeSet<>(swept), "exactly the orphans were swept");
        assertEquals(orphans.size(), next.journal.retention().ledgersSwept());
        for (long id : orphans) {
            assertFalse(BoundedJournalTest.existsInBookKeeper(next.bk, s, id), "orphan " + id + " deleted");
        }
        assertAllReadable(next.bk, s, next.registered());
        OracleDriver.assertMatches(live, next.recovered);
        assertFalse(next.journal.isFailed(), next.journal.failure());

        // Nothing the journal needs went: it keeps working, and a later recovery rebuilds its state.
        next.run(50);
        Checkpoint live2 = next.live();
        awaitDeletes(next); // else a crash before a delete completes leaves a (legitimate) orphan for the third
        next.crash();
        OracleDriver third = new OracleDriver(cluster, s, 3, null);
        assertEquals(List.of(), third.journal.orphanSweep().get(60, TimeUnit.SECONDS), "nothing left to sweep");
        OracleDriver.assertMatches(live2, third.recovered);
        third.crash();
    }

    @Test
    void ledgersOfOtherRegistriesAreNeverSwept(TestInfo info) throws Exception {
        // Two deployments on one BookKeeper cluster, each with orphans of its epoch 1.
        JournalSettings a = settings(name(info) + "-a");
        JournalSettings b = settings(name(info) + "-b");
        List<Long> orphansOfA = new CopyOnWriteArrayList<>();
        List<Long> orphansOfB = new CopyOnWriteArrayList<>();
        OracleDriver oldA = leaveOrphans(a, 11, orphansOfA, 2);
        OracleDriver oldB = leaveOrphans(b, 12, orphansOfB, 2);
        // Tagged for a registry whose path only extends A's, untagged, and a journal ledger from before the
        // registry tag: none of them is A's to sweep.
        long lookalike = createTagged(oldA.bk, a, a.ledgersZnode() + "-old", 1);
        long untagged = oldA.bk.createLedger(3, 2, 2, BookKeeper.DigestType.CRC32C,
                a.password().getBytes(StandardCharsets.UTF_8)).getId();
        long beforeTheTag = oldA.bk.createLedger(3, 2, 2, BookKeeper.DigestType.CRC32C,
                a.password().getBytes(StandardCharsets.UTF_8), Map.of(
                        OrphanSweep.APPLICATION_KEY, OrphanSweep.APPLICATION.getBytes(StandardCharsets.UTF_8),
                        OrphanSweep.EPOCH_KEY, "1".getBytes(StandardCharsets.UTF_8))).getId();
        oldA.crash();
        oldB.crash();

        OracleDriver newA = new OracleDriver(cluster, a, 13, null);
        assertEquals(new TreeSet<>(orphansOfA), new TreeSet<>(newA.journal.orphanSweep().get(60, TimeUnit.SECONDS)));
        for (long id : orphansOfA) {
            assertFalse(BoundedJournalTest.existsInBookKeeper(newA.bk, a, id), "A's orphan " + id + " deleted");
        }
        List<Long> notA = new ArrayList<>(orphansOfB);
        notA.addAll(List.of(lookalike, untagged, beforeTheTag));
        for (long id : notA) {
            assertTrue(BoundedJournalTest.existsInBookKeeper(newA.bk, a, id), "ledger " + id + " is not A's");
        }

        OracleDriver newB = new OracleDriver(cluster, b, 14, null);
        assertEquals(new TreeSet<>(orphansOfB), new TreeSet<>(newB.journal.orphanSweep().get(60, TimeUnit.SECONDS)));
        for (long id : List.of(lookalike, untagged, beforeTheTag)) {
            assertTrue(BoundedJournalTest.existsInBookKeeper(newB.bk, b, id), "ledger " + id + " is not B's");
        }
        assertAllReadable(newA.bk, a, newA.registered());
        newA.crash();
        newB.crash();
    }

    @Test
    void registeredLedgersSurviveTheSweep(TestInfo info) throws Exception {
        // Several ledgers of each earlier epoch stay registered, next to the orphans those epochs left.
        JournalSettings s = settings(name(info)).withRetainLedgersMin(4);
        List<Long> dropped = new CopyOnWriteArrayList<>();
        OracleDriver first = leaveOrphans(s, 21, dropped, 2);
        first.crash();
        OracleDriver second = new OracleDriver(cluster, s, 22, dropped::add);
        second.journal.orphanSweep().get(60, TimeUnit.SECONDS);
        int before = dropped.size();
        for (int round = 0; round < 40 && dropped.size() == before; round++) {
            second.run(50);
        }
        assertTrue(dropped.size() > before, "the second leader left orphans too: " + second);
        Checkpoint live = second.live();
        second.crash();

        OracleDriver third = new OracleDriver(cluster, s, 23, null);
        List<Long> swept = third.journal.orphanSweep().get(60, TimeUnit.SECONDS);
        assertTrue(swept.containsAll(dropped.subList(before, dropped.size())), "the second leader's orphans went: "
                + swept);
        // The registry as the third leader fenced it, less the ledger it opened itself: a snapshot taken before the
        // crash could still list a ledger the second leader unregistered (and left as an orphan) just after.
        List<Long> afterTakeover = third.registered();
        List<Long> registered = afterTakeover.subList(0, afterTakeover.size() - 1);
        for (long id : afterTakeover) {
            assertFalse(swept.contains(id), "registered ledger " + id + " was swept");
        }
        assertTrue(registered.size() >= 4, "ledgers of earlier epochs are registered: " + registered);
        assertAllReadable(third.bk, s, registered);
        OracleDriver.assertMatches(live, third.recovered);
        Checkpoint live3 = third.live(); // with the third leader's aborted range
        third.crash();
        OracleDriver fourth = new OracleDriver(cluster, s, 24, null);
        OracleDriver.assertMatches(live3, fourth.recovered);
        fourth.crash();
    }

    @Test
    void ledgersOfTheCurrentOrALaterEpochAreNeverSwept(TestInfo info) throws Exception {
        JournalSettings s = settings(name(info));
        BookKeeper bk = cluster.bookKeeper(s);
        LedgerRegistry registry = new LedgerRegistry(cluster.zooKeeper(s), s.ledgersZnode());
        RecoveredState recovered = JournalRecovery.recover(bk, registry, s, "leader");
        long epoch = recovered.registry().epoch();
        long earlier = createTagged(bk, s, s.ledgersZnode(), epoch - 1);
        long current = createTagged(bk, s, s.ledgersZnode(), epoch); // e.g. being created by this leader's rollover
        long later = createTagged(bk, s, s.ledgersZnode(), epoch + 1); // a newer leader's, while we are deposed
        BookKeeperJournal journal = BookKeeperJournal.open(bk, registry, recovered.registry(), s,
                new BookKeeperJournalTest.Fatal());
        assertEquals(List.of(earlier), journal.orphanSweep().get(60, TimeUnit.SECONDS));
        assertEquals(1, journal.retention().ledgersSwept());
        assertTrue(BoundedJournalTest.existsInBookKeeper(bk, s, current), "ledger of the current epoch kept");
        assertTrue(BoundedJournalTest.existsInBookKeeper(bk, s, later), "ledger of a later epoch kept");
        journal.close();
    }

    @Test
    void orphansStayWhenTheSweepIsOff(TestInfo info) throws Exception {
        JournalSettings s = settings(name(info)).withSweepOrphans(false);
        List<Long> dropped = new CopyOnWriteArrayList<>();
        OracleDriver old = leaveOrphans(s, 31, dropped, 1);
        old.crash();
        OracleDriver next = new OracleDriver(cluster, s, 32, null);
        assertEquals(List.of(), next.journal.orphanSweep().get(60, TimeUnit.SECONDS));
        assertEquals(0, next.journal.retention().ledgersSwept());
        for (long id : dropped) {
            assertTrue(BoundedJournalTest.existsInBookKeeper(next.bk, s, id), "orphan " + id + " left alone");
        }
        next.crash();
    }

    @Test
    void theRuleNeedsOurTagsAnEarlierEpochAndNoRegistration() {
        String path = "/sibyl/oracle/ledgers";
        Map<String, byte[]> epoch4 = OrphanSweep.ledgerMetadata(new LedgerRegistry.Snapshot(4, "o", List.of(), 0),
                path);
        assertTrue(OrphanSweep.isOrphan(9, epoch4, path, 5, Set.of()));
        assertFalse(OrphanSweep.isOrphan(9, epoch4, path, 5, Set.of(9L)), "registered");
        assertFalse(OrphanSweep.isOrphan(9, epoch4, path, 4, Set.of()), "current epoch");
        assertFalse(OrphanSweep.isOrphan(9, epoch4, path, 3, Set.of()), "later epoch");
        assertFalse(OrphanSweep.isOrphan(9, epoch4, "/other/ledgers", 5, Set.of()), "other registry");
        assertFalse(OrphanSweep.isOrphan(9, Map.of(), path, 5, Set.of()), "untagged");
        assertFalse(OrphanSweep.isOrphan(9, Map.of(OrphanSweep.APPLICATION_KEY,
                OrphanSweep.APPLICATION.getBytes(StandardCharsets.UTF_8), OrphanSweep.REGISTRY_KEY,
                path.getBytes(StandardCharsets.UTF_8), OrphanSweep.EPOCH_KEY, "x".getBytes(StandardCharsets.UTF_8)),
                path, 5, Set.of()), "unreadable epoch");
    }

    /** A leader that drops at least {@code count} ledgers and never deletes them (a crash right after each drop). */
    private static OracleDriver leaveOrphans(JournalSettings s, long seed, List<Long> dropped, int count)
            throws Exception {
        OracleDriver d = new OracleDriver(cluster, s, seed, dropped::add);
        for (int round = 0; round < 60 && dropped.size() < count; round++) {
            d.run(50);
        }
        assertTrue(dropped.size() >= count, "ledgers were dropped: " + d);
        return d;
    }

    private static void awaitDeletes(OracleDriver d) {
        await("the deletion of every dropped ledger").atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(20))
                .until(() -> d.journal.retention().ledgersDeleted() >= d.journal.retention().ledgersDropped());
    }

    /** A ledger with one entry, tagged as a journal ledger of {@code registryPath} written at {@code epoch}. */
    private static long createTagged(BookKeeper bk, JournalSettings s, String registryPath, long epoch)
            throws Exception {
        LedgerHandle lh = bk.createLedger(3, 2, 2, BookKeeper.DigestType.CRC32C,
                s.password().getBytes(StandardCharsets.UTF_8), OrphanSweep.ledgerMetadata(
                        new LedgerRegistry.Snapshot(epoch, "crashed", List.of(), 0), registryPath));
        lh.addEntry(new byte[] {1, 2, 3});
        return lh.getId();
    }

    /** Opens every ledger without fencing and reads every confirmed entry. */
    private static void assertAllReadable(BookKeeper bk, JournalSettings s, List<Long> ledgers) throws Exception {
        for (long id : ledgers) {
            LedgerHandle lh = bk.openLedgerNoRecovery(id, BookKeeper.DigestType.CRC32C,
                    s.password().getBytes(StandardCharsets.UTF_8));
            try {
                long last = lh.getLastAddConfirmed();
                if (last >= 0) {
                    int entries = 0;
                    for (var e = lh.readEntries(0, last); e.hasMoreElements(); e.nextElement()) {
                        entries++;
                    }
                    assertEquals(last + 1, entries, "ledger " + id + " reads whole");
                }
            } finally {
                lh.close();
            }
        }
    }
}
