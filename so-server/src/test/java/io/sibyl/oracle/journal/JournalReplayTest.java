package io.sibyl.oracle.journal;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.util.List;
import java.util.Properties;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Replay, registry format and settings, without a cluster. */
class JournalReplayTest {
    private static final LedgerRegistry.Snapshot REG = new LedgerRegistry.Snapshot(1, "test", List.of(), 0);

    private static RecoveredState replay(List<byte[]> entries) {
        JournalReplay r = new JournalReplay();
        entries.forEach(r::entry);
        return r.result(REG, r.stats(1, 0));
    }

    @Test
    void replayRebuildsTheModel() {
        DecisionModel model = new DecisionModel(1, 100);
        List<byte[]> blocks = model.blocks(5000, 12);
        model.assertRecovered(replay(blocks));
    }

    @Test
    void entriesOfSeveralBlocksReplayLikeTheBlocks() {
        DecisionModel model = new DecisionModel(2, 50);
        List<byte[]> blocks = model.blocks(3000, 8);
        Random rnd = new Random(3);
        List<byte[]> entries = new java.util.ArrayList<>();
        ByteArrayOutputStream entry = new ByteArrayOutputStream();
        for (byte[] b : blocks) {
            entry.writeBytes(b);
            if (rnd.nextInt(10) == 0) {
                entries.add(entry.toByteArray());
                entry.reset();
            }
        }
        entries.add(entry.toByteArray());
        model.assertRecovered(replay(entries));
    }

    /**
     * A ledger failed: some entries of the suffix reached it (in any subset, in order) and the whole suffix was
     * written again, in order, to the next ledger. Replay must end in the same state.
     */
    @Test
    void rewrittenSuffixesDoNoHarm() {
        for (long seed = 0; seed < 40; seed++) {
            DecisionModel model = new DecisionModel(seed, 30);
            List<byte[]> blocks = model.blocks(600, 6);
            Random rnd = new Random(seed);
            List<byte[]> journal = new java.util.ArrayList<>();
            int n = blocks.size();
            int pos = 0; // first entry not yet acknowledged
            while (pos < n) {
                int k = Math.min(n, pos + 1 + rnd.nextInt(80)); // this ledger acknowledges [pos, k)
                journal.addAll(blocks.subList(pos, k));
                if (k < n) {
                    // it fails; it also holds some later, unacknowledged entries (a subset, in order), and the next
                    // ledger gets the whole suffix again from k
                    for (int j = k; j < Math.min(n, k + 20); j++) {
                        if (rnd.nextInt(3) == 0) {
                            journal.add(blocks.get(j));
                        }
                    }
                }
                pos = k;
            }
            model.assertRecovered(replay(journal));
        }
    }

    @Test
    void inDoubtTimestampsAreThoseWithoutRecords() {
        io.sibyl.protocol.DecisionBlockWriter w = new io.sibyl.protocol.DecisionBlockWriter();
        w.start(0);
        w.reserve(100);
        w.commit(3, 5);
        w.abort(7);
        w.tMax(2);
        RecoveredState r = replay(List.of(w.seal()));
        assertEquals(100, r.lastTimestamp());
        assertFalse(r.isInDoubt(3), "committed");
        assertFalse(r.isInDoubt(5), "a commit timestamp");
        assertFalse(r.isInDoubt(7), "aborted");
        assertFalse(r.isInDoubt(2), "at T_max");
        assertFalse(r.isInDoubt(101), "never handed out");
        assertTrue(r.isInDoubt(8));
        assertTrue(r.isInDoubt(100));
    }

    @Test
    void registryFormatRoundTrips() throws Exception {
        LedgerRegistry.Snapshot s = new LedgerRegistry.Snapshot(42, "host/1/abc", List.of(3L, 9L, 12L), 7);
        LedgerRegistry.Snapshot back = LedgerRegistry.decode(LedgerRegistry.encode(s), 7);
        assertEquals(s, back);
        LedgerRegistry.Snapshot empty = new LedgerRegistry.Snapshot(1, "x", List.of(), 0);
        assertEquals(empty, LedgerRegistry.decode(LedgerRegistry.encode(empty), 0));
        assertThrows(java.io.IOException.class, () -> LedgerRegistry.decode("garbage".getBytes(), 0));
        assertFalse(new String(LedgerRegistry.encode(s)).contains("deleted"), "no line while nothing was dropped");
        LedgerRegistry.Snapshot dropped = new LedgerRegistry.Snapshot(42, "host/1/abc", List.of(12L), 8, 2);
        assertEquals(dropped, LedgerRegistry.decode(LedgerRegistry.encode(dropped), 8));
    }

    @Test
    void settingsParseCheckAndDescribe() {
        Properties p = new Properties();
        p.setProperty("port", "1234"); // an oracle key: ignored here
        p.setProperty("journal.ensemble.size", "5");
        p.setProperty("journal.write.quorum", "3");
        p.setProperty("journal.ack.quorum", "2");
        p.setProperty("journal.group.flush.when.idle", "false");
        p.setProperty("journal.group.max.bytes", "1_024");
        JournalSettings s = JournalSettings.fromProperties(p);
        assertEquals(5, s.ensembleSize());
        assertEquals(3, s.writeQuorum());
        assertFalse(s.flushWhenIdle());
        assertEquals(1024, s.groupMaxBytes());
        assertEquals("zk+null://127.0.0.1:2181/ledgers", s.effectiveMetadataServiceUri());
        assertEquals("zk+null://a:1;b:2/ledgers",
                s.withZooKeeper("a:1,b:2", "").effectiveMetadataServiceUri());
        assertEquals(19, s.describe().size());
        assertEquals(1, s.retainLedgersMin());
        Properties retain = new Properties();
        retain.setProperty("journal.retain.ledgers.min", "4");
        assertEquals(4, JournalSettings.fromProperties(retain).retainLedgersMin());
        retain.setProperty("journal.retain.ledgers.min", "0");
        assertThrows(IllegalArgumentException.class, () -> JournalSettings.fromProperties(retain));
        assertEquals("/sibyl/oracle/leader", s.leaderZnode());
        assertEquals("/sibyl/oracle/election", s.electionZnode());
        Properties leader = new Properties();
        leader.setProperty("journal.leader.znode", "/a/leader");
        leader.setProperty("journal.election.znode", "/a/election");
        assertEquals("/a/leader", JournalSettings.fromProperties(leader).leaderZnode());
        leader.setProperty("journal.leader.znode", "/a/election/x");
        assertThrows(IllegalArgumentException.class, () -> JournalSettings.fromProperties(leader),
                "the leader znode cannot sit among the candidates");
        leader.setProperty("journal.leader.znode", "relative");
        assertThrows(IllegalArgumentException.class, () -> JournalSettings.fromProperties(leader));
        Properties bad = new Properties();
        bad.setProperty("journal.ensemble.sise", "3");
        assertThrows(IllegalArgumentException.class, () -> JournalSettings.fromProperties(bad));
        Properties quorum = new Properties();
        quorum.setProperty("journal.ack.quorum", "3");
        assertThrows(IllegalArgumentException.class, () -> JournalSettings.fromProperties(quorum));
    }
}
