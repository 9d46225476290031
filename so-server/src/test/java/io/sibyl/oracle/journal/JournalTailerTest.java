package io.sibyl.oracle.journal;

import org.apache.bookkeeper.client.BookKeeper;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The hot standby's tail of the journal (in-process ZooKeeper + 3 bookies): replay as entries appear, takeover. */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class JournalTailerTest {
    @RegisterExtension
    static final BookKeeperCluster cluster = BookKeeperCluster.perTestClass(3);

    private static BookKeeperJournal openWriter(JournalSettings s, BookKeeperJournalTest.Fatal fatal)
            throws Exception {
        BookKeeper bk = cluster.bookKeeper(s);
        ZooKeeper zk = cluster.zooKeeper(s);
        LedgerRegistry registry = new LedgerRegistry(zk, s.ledgersZnode());
        RecoveredState r = JournalRecovery.recover(bk, registry, s, "writer");
        return BookKeeperJournal.open(bk, registry, r.registry(), s, fatal);
    }

    private static JournalTailer tailer(JournalSettings s) throws Exception {
        return new JournalTailer(cluster.bookKeeper(s), new LedgerRegistry(cluster.zooKeeper(s), s.ledgersZnode()),
                s);
    }

    @Test
    void standbyFollowsTheLeaderAcrossRolloversAndTakesOverReadingOnlyTheTail(TestInfo info) throws Exception {
        // Small ledgers: the writer rolls over every 4 entries, so the standby moves through closed ledgers.
        JournalSettings s = cluster.settings(info.getTestMethod().orElseThrow().getName()).withRollover(1 << 20, 4);
        BookKeeperJournalTest.Fatal fatal = new BookKeeperJournalTest.Fatal();
        BookKeeperJournal writer = openWriter(s, fatal);
        DecisionModel model = new DecisionModel(21, 200);
        JournalTailer standby = tailer(s);
        standby.start(1);
        for (int round = 0; round < 40; round++) {
            BookKeeperJournalTest.appendAndAwait(writer, model, 1 + round % 7, 8);
        }
        // Readers learn an entry is confirmed from the confirmation piggybacked on a later add, and adds sent together
        // carry the same one: a round of several blocks can leave several entries unconfirmed. One block alone,
        // sent after all earlier ones were acknowledged, confirms them all.
        BookKeeperJournalTest.appendAndAwait(writer, model, 1, 8);
        // Every entry but the newest (not yet confirmed to readers) becomes visible to the standby.
        long written = writer.stats().ackedEntries();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (standby.entries() < written - 1 && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        standby.stop();
        long tailed = standby.entries();
        assertTrue(tailed >= written - 1, "the standby replayed " + tailed + " of " + written + " entries while the"
                + " leader wrote them");
        assertTrue(standby.position().finished().size() >= 5, "it read closed ledgers to their end: "
                + standby.position());

        // More decisions the standby has not polled for: the takeover must read them.
        BookKeeperJournalTest.appendAndAwait(writer, model, 30, 8);
        RecoveredState taken = JournalRecovery.takeOver(cluster.bookKeeper(s),
                new LedgerRegistry(cluster.zooKeeper(s), s.ledgersZnode()), s, "standby", standby);
        model.assertRecovered(taken);
        assertTrue(taken.stats().entries() >= 1 && taken.stats().entries() < written,
                "the takeover read only the tail: " + taken.stats());
        assertEquals(2, taken.epoch(), "the standby fenced the writer's epoch");

        // The writer is fenced: its next block is never acknowledged and it reports a fatal error.
        writer.append(new DecisionModel(99, 100).nextBlock(4), () -> {
            throw new AssertionError("a fenced journal acknowledged a block");
        });
        assertTrue(fatal.await(20), "the deposed writer's journal failed");
        writer.close();

        // A full recovery after the takeover sees the same state (and the takeover's epoch).
        BookKeeper bk = cluster.bookKeeper(s);
        RecoveredState full = JournalRecovery.recover(bk, new LedgerRegistry(cluster.zooKeeper(s),
                s.ledgersZnode()), s, "check");
        model.assertRecovered(full);
        assertEquals(3, full.epoch());
    }

    @Test
    void standbyOfAnEmptyJournalTakesOverLikeARecovery(TestInfo info) throws Exception {
        JournalSettings s = cluster.settings(info.getTestMethod().orElseThrow().getName());
        JournalTailer standby = tailer(s);
        assertEquals(0, standby.poll(), "no registry yet: nothing to read");
        standby.stop();
        RecoveredState taken = JournalRecovery.takeOver(cluster.bookKeeper(s),
                new LedgerRegistry(cluster.zooKeeper(s), s.ledgersZnode()), s, "standby", standby);
        assertEquals(1, taken.epoch());
        assertEquals(0, taken.lastTimestamp());
        assertEquals(0, taken.commitCount());
    }

    @Test
    void standbyStopsAtAnOpenLedgerAndTheTakeoverReadsItsLastEntry(TestInfo info) throws Exception {
        JournalSettings s = cluster.settings(info.getTestMethod().orElseThrow().getName());
        BookKeeperJournalTest.Fatal fatal = new BookKeeperJournalTest.Fatal();
        BookKeeperJournal writer = openWriter(s, fatal);
        DecisionModel model = new DecisionModel(22, 100);
        BookKeeperJournalTest.appendAndAwait(writer, model, 1, 8);
        BookKeeperJournalTest.appendAndAwait(writer, model, 1, 8);
        JournalTailer standby = tailer(s);
        standby.poll();
        // The newest entry is not confirmed to readers until a later one is written: at most one is missing.
        assertTrue(standby.entries() >= 1 && standby.entries() <= 2, "entries seen: " + standby.entries());
        assertEquals(0, standby.position().finished().size(), "the open ledger is not finished");
        standby.stop();
        RecoveredState taken = JournalRecovery.takeOver(cluster.bookKeeper(s),
                new LedgerRegistry(cluster.zooKeeper(s), s.ledgersZnode()), s, "standby", standby);
        model.assertRecovered(taken);
        writer.close();
    }

    @Test
    void takeoverAndRecoveryKnowTheWritingOraclesLongerReaderGrace(TestInfo info) throws Exception {
        JournalSettings s = cluster.settings(info.getTestMethod().orElseThrow().getName());
        BookKeeper bk = cluster.bookKeeper(s);
        LedgerRegistry registry = new LedgerRegistry(cluster.zooKeeper(s), s.ledgersZnode());
        RecoveredState first = JournalRecovery.recover(bk, registry, s, "writer");
        assertEquals(0, first.writerGraceMillis(), "a brand-new journal: no earlier oracle");
        BookKeeperJournalTest.Fatal fatal = new BookKeeperJournalTest.Fatal();
        BookKeeperJournal writer = BookKeeperJournal.open(bk, registry, first.registry(), s, fatal, 30_000, 0);
        DecisionModel model = new DecisionModel(23, 100);
        BookKeeperJournalTest.appendAndAwait(writer, model, 3, 8);
        JournalTailer standby = tailer(s);
        standby.poll();
        standby.stop();
        RecoveredState taken = JournalRecovery.takeOver(cluster.bookKeeper(s),
                new LedgerRegistry(cluster.zooKeeper(s), s.ledgersZnode()), s, "standby", standby);
        model.assertRecovered(taken);
        assertEquals(30_000, taken.writerGraceMillis());
        writer.close();

        // An oracle with a shorter grace holds the watermark at 0 for the writer's longer one.
        io.sibyl.oracle.OracleState state = taken.newOracleState(io.sibyl.oracle.OracleConfig.defaults()
                .withCapacities(1 << 12, 1 << 10, 64).withReaderGrace(100));
        Thread.sleep(300);
        assertEquals(0, state.lowWatermark(), "still within the earlier oracle's 30 s grace");

        RecoveredState full = JournalRecovery.recover(cluster.bookKeeper(s), new LedgerRegistry(cluster.zooKeeper(s),
                s.ledgersZnode()), s, "check");
        assertEquals(30_000, full.writerGraceMillis(), "a cold recovery reads it from the ledgers' metadata too");

        // The next oracle (grace 100 ms) records the inherited 30 s in the ledgers it starts while that lasts, so an
        // oracle taking over from it soon still holds long enough, even once the first oracle's ledgers are gone.
        LedgerRegistry next = new LedgerRegistry(cluster.zooKeeper(s), s.ledgersZnode());
        BookKeeperJournal successor = BookKeeperJournal.open(bk, next, full.registry(), s, fatal, 100,
                full.writerGraceMillis());
        java.util.List<Long> ledgers = next.read().ledgers();
        long newest = ledgers.get(ledgers.size() - 1);
        try (org.apache.bookkeeper.client.LedgerHandle lh = bk.openLedgerNoRecovery(newest,
                BookKeeper.DigestType.CRC32C, s.password().getBytes(java.nio.charset.StandardCharsets.UTF_8))) {
            assertEquals(30_000, WriterGrace.of(lh), "the successor's first ledger carries the inherited grace");
        }
        successor.close();
    }
}
