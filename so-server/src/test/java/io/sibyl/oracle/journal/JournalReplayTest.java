package io.sibyl.oracle.journal;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.util.List;
import java.util.Properties;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
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

    /**
     * A ledger acknowledged the blocks with commits 2 and 4, and 8 and 10 (a later entry reached the bookies), but not
     * the one with 6; the journal wrote 6, 8 and 10 again. So COMMITs arrive out of commit order: 6 after 10, then 8
     * and 10 again. The repeats are skipped, 6 goes in its place, and the result is ascending.
     */
    @Test
    void commitOutOfCommitOrderFromARewrittenSuffix() {
        byte[] first = block(w -> {
            w.commit(1, 2);
            w.commit(3, 4);
        });
        byte[] lost = block(w -> w.commit(5, 6));
        byte[] later = block(w -> {
            w.commit(7, 8);
            w.commit(9, 10);
        });
        RecoveredState r = replay(List.of(first, later, lost, later));
        assertArrayEquals(new long[] {2, 4, 6, 8, 10}, r.commitTimestamps());
        assertArrayEquals(new long[] {1, 3, 5, 7, 9}, r.commitStarts());
        assertEquals(6, r.commitTimestampOf(5));
        assertFalse(r.isInDoubt(5));
        assertEquals(first.length + later.length + lost.length + later.length, r.stats().bytes());
    }

    /**
     * Commits in random order with repeats, T_max rising now and then, across the replay's initial capacity (so
     * out-of-order inserts also land while it compacts or grows): the result is every commit above the final T_max,
     * each once, ascending, with its own start.
     */
    @Test
    void commitsInAnyOrderWithRepeatsEndSortedAndUnique() {
        Random rnd = new Random(11);
        JournalReplay r = new JournalReplay();
        java.util.TreeMap<Long, Long> all = new java.util.TreeMap<>();
        long next = 10;
        long tMax = 0;
        for (int i = 0; i < 300_000; i++) {
            int what = rnd.nextInt(100);
            if (what < 80 || all.isEmpty()) {
                next += 2 + 2 * rnd.nextInt(2); // leaves gaps a later COMMIT may fill
                r.onCommit(next - 1, next);
                all.put(next, next - 1);
            } else if (what < 95) {
                long c = next - 2 * rnd.nextInt(50); // a repeat, or a gap filled out of order
                if (c > 10) {
                    r.onCommit(c - 1, c);
                    all.put(c, c - 1);
                }
            } else if (rnd.nextInt(20) == 0) {
                tMax = Math.max(tMax, next - rnd.nextInt(300_000));
                r.onTmax(tMax);
            }
        }
        java.util.SortedMap<Long, Long> kept = all.tailMap(tMax + 1);
        RecoveredState s = r.result(REG, r.stats(1, 0));
        assertEquals(tMax, s.tMax());
        assertEquals(kept.size(), s.commitCount());
        long[] expectedCommits = kept.keySet().stream().mapToLong(Long::longValue).toArray();
        long[] expectedStarts = kept.values().stream().mapToLong(Long::longValue).toArray();
        assertArrayEquals(expectedCommits, s.commitTimestamps());
        assertArrayEquals(expectedStarts, s.commitStarts());
    }

    /**
     * A T_MAX keeps exactly the commits above it: one at T_max is dropped, one just above stays; a lower T_MAX
     * (replayed from a rewritten suffix) changes nothing, nor does a commit at or below T_max arriving later; a
     * checkpoint raises T_max like a T_MAX record; the arrays keep working once everything was trimmed.
     */
    @Test
    void tMaxTrimsExactlyTheCommitsAtOrBelowIt() {
        JournalReplay r = new JournalReplay();
        for (long c = 10; c <= 100; c += 10) {
            r.onCommit(c - 5, c);
        }
        r.onTmax(30);
        assertArrayEquals(new long[] {40, 50, 60, 70, 80, 90, 100}, r.result(REG, r.stats(1, 0)).commitTimestamps());
        r.onTmax(45);
        r.onTmax(20);
        r.onCommit(41, 42);
        r.onCommit(15, 20);
        RecoveredState s = r.result(REG, r.stats(1, 0));
        assertEquals(45, s.tMax());
        assertArrayEquals(new long[] {50, 60, 70, 80, 90, 100}, s.commitTimestamps());
        assertArrayEquals(new long[] {45, 55, 65, 75, 85, 95}, s.commitStarts());
        r.checkpoint(new Checkpoint(90, 100, 100, new long[0], List.of()));
        assertArrayEquals(new long[] {100}, r.result(REG, r.stats(1, 0)).commitTimestamps());
        r.onTmax(1000);
        assertEquals(0, r.result(REG, r.stats(1, 0)).commitCount());
        r.onCommit(1001, 1002);
        r.onCommit(999, 1000);
        assertArrayEquals(new long[] {1002}, r.result(REG, r.stats(1, 0)).commitTimestamps());
        assertArrayEquals(new long[] {1001}, r.result(REG, r.stats(1, 0)).commitStarts());
    }

    private static byte[] block(java.util.function.Consumer<io.sibyl.protocol.DecisionBlockWriter> records) {
        io.sibyl.protocol.DecisionBlockWriter w = new io.sibyl.protocol.DecisionBlockWriter();
        w.start(0);
        records.accept(w);
        return w.seal();
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
        assertEquals(23, s.describe().size());
        assertEquals(JournalSettings.ACL_OPEN, s.zkAcl(), "znodes stay open unless asked");
        Properties acl = new Properties();
        acl.setProperty("journal.zk.acl", "secure");
        acl.setProperty("journal.zk.acl.readers", "sasl:hbase, digest:reader:abc=");
        assertEquals(JournalSettings.ACL_SECURE, JournalSettings.fromProperties(acl).zkAcl());
        acl.setProperty("journal.zk.acl.readers", "hbase");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> JournalSettings.fromProperties(acl))
                .getMessage().contains("journal.zk.acl.readers"));
        acl.setProperty("journal.zk.acl.readers", "");
        acl.setProperty("journal.zk.acl", "closed");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> JournalSettings.fromProperties(acl))
                .getMessage().contains("journal.zk.acl"));
        assertEquals(1, s.retainLedgersMin());
        assertTrue(s.sweepOrphans(), "orphans are swept by default");
        Properties sweep = new Properties();
        sweep.setProperty("journal.sweep.orphans", "false");
        assertFalse(JournalSettings.fromProperties(sweep).sweepOrphans());
        sweep.setProperty("journal.sweep.orphans", "no");
        assertThrows(IllegalArgumentException.class, () -> JournalSettings.fromProperties(sweep));
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
