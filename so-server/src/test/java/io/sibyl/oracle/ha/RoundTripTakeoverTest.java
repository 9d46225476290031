package io.sibyl.oracle.ha;

import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import io.sibyl.oracle.journal.BookKeeperCluster;
import io.sibyl.oracle.journal.JournalClients;
import io.sibyl.oracle.journal.JournalSettings;
import io.sibyl.oracle.journal.LedgerRegistry;
import io.sibyl.protocol.Wire;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A to B and back to A, by hot-standby takeovers, with ledgers so small that every leader checkpoints and deletes
 * ledgers all the time: B deletes A's ledgers (and the one holding its own first ABORT_RANGE), and A, back as a fresh
 * standby, tails a journal whose head keeps vanishing. What each leader decided must survive both takeovers: the
 * commits, the conflict aborts (kept only by checkpoints once their ledgers are gone), the transactions running at
 * each takeover (kept only by the aborted ranges in the checkpoints), and timestamps that never repeat although the
 * reservation block is tiny, so that many journal entries end in a reservation. One of the three bookies is lost
 * while A writes and B tails. This class stops a bookie, so it has its own cluster.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class RoundTripTakeoverTest {
    @RegisterExtension
    static final BookKeeperCluster cluster = BookKeeperCluster.perTestClass(3);

    private final Map<Long, Long> committed = new LinkedHashMap<>(); // start -> commit timestamp
    private final List<Long> aborted = new ArrayList<>();
    private final List<Long> runningAtTakeover = new ArrayList<>();
    private final RisingTimestamps timestamps = new RisingTimestamps();
    private int nextRow;

    private static OracleConfig config(JournalSettings s) {
        OracleConfig d = OracleConfig.defaults();
        // recent.commits.capacity 8: T_max follows the commits closely, so checkpoints soon allow deletion.
        // timestamp.reservation.block 3: a reservation every few timestamps.
        return new OracleConfig("127.0.0.1", 0, 1, 4096, 8, 4096, d.maxWriteSetRows(), d.maxFrameBytes(), 3,
                d.maxBlockRecords(), d.pushIntervalMillis(), d.maxLagBytes(), d.readerGraceMillis(), 0,
                d.inlineSequencer(), OracleConfig.JournalKind.BOOKKEEPER, s, new HaSettings(true, "127.0.0.1", 2),
                0, d.handshakeTimeoutMillis(), d.maxConnections(), d.maxRunningTransactionsPerConnection(), "", 1 << 17,
                io.sibyl.protocol.TlsSettings.disabled("tls."), "", 600_000, OracleConfig.METRICS_OFF,
                io.sibyl.oracle.RangeSweepSettings.defaults(),
                io.sibyl.oracle.IdentitySettings.defaults(), io.sibyl.oracle.HistorySettings.defaults());
    }

    @Test
    void decisionsSurviveTakeoversThereAndBackWhileLedgersAreDeleted() throws Exception {
        JournalSettings s = cluster.settings("roundtrip")
                .withLeaderZnodes("/sibyl/test/roundtrip/leader", "/sibyl/test/roundtrip/election")
                .withRollover(1 << 20, 4);
        ZooKeeper zk = cluster.zooKeeper(s);
        LedgerRegistry registry = new LedgerRegistry(zk, s.ledgersZnode());
        List<OracleCandidate> candidates = new ArrayList<>();
        List<OracleServer> servers = new ArrayList<>();
        try {
            OracleCandidate a1 = OracleCandidate.join(config(s), "a/" + JournalClients.ownerName());
            candidates.add(a1);
            OracleServer a = ElectionChainTest.lead(a1).get(30, TimeUnit.SECONDS);
            servers.add(a);
            OracleCandidate b1 = OracleCandidate.join(config(s), "b/" + JournalClients.ownerName());
            candidates.add(b1);
            CompletableFuture<OracleServer> bLeads = ElectionChainTest.lead(b1);

            long deletedBefore = registry.read().deleted();
            RawOracleClient onA = RawOracleClient.connect("127.0.0.1", a.port(), 5000);
            work(onA, 20);
            // One of the three bookies goes while A writes and B tails: BookKeeper moves A's ledger to the spare
            // bookie, and B must follow the ledger onto it.
            cluster.removeBookie();
            work(onA, 20);
            assertTrue(registry.read().deleted() > deletedBefore, "A deleted ledgers: " + registry.read());
            runningAtTakeover.add(timestamps.begin(onA));
            a.fatalError("test: A's process is gone", null);
            onA.close();

            OracleServer b = bLeads.get(30, TimeUnit.SECONDS);
            servers.add(b);
            try (RawOracleClient onB = RawOracleClient.connect("127.0.0.1", b.port(), 5000)) {
                checkEverything(onB, "after A -> B");
                // A comes back as a fresh standby while B deletes A's ledgers and its own first one.
                OracleCandidate a2 = OracleCandidate.join(config(s), "a-again/" + JournalClients.ownerName());
                candidates.add(a2);
                CompletableFuture<OracleServer> aLeadsAgain = ElectionChainTest.lead(a2);
                List<Long> afterFirstTakeover = registry.read().ledgers();
                work(onB, 40);
                List<Long> now = registry.read().ledgers();
                assertTrue(now.stream().noneMatch(afterFirstTakeover::contains),
                        "B deleted every ledger of A's time and its first: " + afterFirstTakeover + " then " + now);
                runningAtTakeover.add(timestamps.begin(onB));
                b.fatalError("test: B's process is gone", null);

                OracleServer aAgain = aLeadsAgain.get(30, TimeUnit.SECONDS);
                servers.add(aAgain);
                try (RawOracleClient back = RawOracleClient.connect("127.0.0.1", aAgain.port(), 5000)) {
                    checkEverything(back, "after A -> B -> A");
                    work(back, 5);
                    checkEverything(back, "after more work on A again");
                }
            }
        } finally {
            for (OracleCandidate c : candidates) {
                c.close();
            }
            for (OracleServer srv : servers) {
                srv.close();
            }
        }
    }

    /** Pairs of transactions on one row: the first commits, the second (started before that commit) conflicts. */
    private void work(RawOracleClient c, int pairs) throws Exception {
        for (int i = 0; i < pairs; i++) {
            long row = nextRow++ % 5;
            long first = timestamps.begin(c);
            long second = timestamps.begin(c);
            RawOracleClient.Reply r = c.commit(first, row);
            assertEquals(Wire.COMMITTED, r.type(), "commit of " + first);
            timestamps.committedAt(r.commitTs());
            committed.put(first, r.commitTs());
            RawOracleClient.Reply conflict = c.commit(second, row);
            assertEquals(Wire.ABORTED, conflict.type(), "conflict of " + second);
            aborted.add(second);
        }
    }

    private void checkEverything(RawOracleClient c, String when) throws Exception {
        for (Map.Entry<Long, Long> e : committed.entrySet()) {
            RawOracleClient.Reply st = c.query(e.getKey());
            assertTrue(st.value() == Wire.STATUS_COMMITTED_LONG_AGO
                            || (st.value() == Wire.STATUS_COMMITTED && st.commitTs() == e.getValue()),
                    when + ": acknowledged commit " + e.getKey() + " -> " + e.getValue() + " reads " + st);
        }
        for (long ts : aborted) {
            assertEquals(Wire.STATUS_ABORTED, c.query(ts).value(), when + ": conflict abort " + ts);
        }
        for (long ts : runningAtTakeover) {
            assertEquals(Wire.STATUS_ABORTED, c.query(ts).value(), when + ": running at a takeover " + ts);
        }
        timestamps.begin(c); // above every timestamp handed out before
    }
}
