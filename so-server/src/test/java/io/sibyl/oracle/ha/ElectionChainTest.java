package io.sibyl.oracle.ha;

import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import io.sibyl.oracle.journal.BookKeeperCluster;
import io.sibyl.oracle.journal.JournalClients;
import io.sibyl.oracle.journal.JournalSettings;
import io.sibyl.protocol.LeaderRecord;
import io.sibyl.protocol.Wire;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Three candidates in one JVM: the first leads, only the first standby acts when the leader's port goes away, and the
 * second standby moves up to take the next turn. A leader "dies" here by closing its listener and connections
 * (its ZooKeeper session lives on, as a killed process's does until it expires).
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ElectionChainTest {
    @RegisterExtension
    static final BookKeeperCluster cluster = BookKeeperCluster.perTestClass(3);

    private static OracleConfig config(JournalSettings s) {
        return OracleConfig.defaults().withPort(0).withCapacities(4096, 4096, 4096)
                .withJournal(OracleConfig.JournalKind.BOOKKEEPER, s)
                .withHa(new HaSettings(true, "127.0.0.1", 2));
    }

    /** Runs {@code c}'s election on another thread: it returns once {@code c} leads. */
    static CompletableFuture<OracleServer> lead(OracleCandidate c) {
        return CompletableFuture.supplyAsync(() -> {
            try {
                return c.lead();
            } catch (Exception e) {
                throw new IllegalStateException(e);
            }
        });
    }

    @Test
    void onlyTheFirstStandbyActsAndTheNextMovesUpForTheFollowingFailover() throws Exception {
        JournalSettings s = cluster.settings("chain").withLeaderZnodes("/sibyl/test/chain/leader",
                "/sibyl/test/chain/election");
        ZooKeeper zk = cluster.zooKeeper(s);
        List<OracleCandidate> candidates = new ArrayList<>();
        List<OracleServer> servers = new ArrayList<>();
        try {
            for (int i = 0; i < 3; i++) {
                candidates.add(OracleCandidate.join(config(s), "candidate-" + i + "/" + JournalClients.ownerName()));
            }
            OracleServer a = lead(candidates.get(0)).get(30, TimeUnit.SECONDS);
            servers.add(a);
            CompletableFuture<OracleServer> b = lead(candidates.get(1));
            CompletableFuture<OracleServer> c = lead(candidates.get(2));
            LeaderRecord first = LeaderZnode.read(zk, s.leaderZnode());
            assertEquals(a.port(), first.port());
            long committedOnA;
            try (RawOracleClient client = RawOracleClient.connect("127.0.0.1", a.port(), 5000)) {
                committedOnA = client.begin();
                assertEquals(Wire.COMMITTED, client.commit(committedOnA, 7).type());
            }
            Thread.sleep(300);
            assertFalse(b.isDone() || c.isDone(), "standbys wait while the leader serves");

            a.fatalError("test: the leader's process is gone", null);
            OracleServer bServer = b.get(30, TimeUnit.SECONDS);
            servers.add(bServer);
            LeaderRecord second = LeaderZnode.read(zk, s.leaderZnode());
            assertEquals(bServer.port(), second.port(), "the first standby took over");
            assertTrue(second.epoch() > first.epoch());
            Thread.sleep(300);
            assertFalse(c.isDone(), "the second standby did not act");

            bServer.fatalError("test: the second leader's process is gone", null);
            OracleServer cServer = c.get(30, TimeUnit.SECONDS);
            servers.add(cServer);
            LeaderRecord third = LeaderZnode.read(zk, s.leaderZnode());
            assertNotNull(third);
            assertEquals(cServer.port(), third.port(), "the second standby moved up and took the next turn");
            assertTrue(third.epoch() > second.epoch());
            assertTrue(candidates.get(2).summary().contains("epoch " + third.epoch()), candidates.get(2).summary());
            try (RawOracleClient client = RawOracleClient.connect("127.0.0.1", cServer.port(), 5000)) {
                RawOracleClient.Reply st = client.query(committedOnA);
                assertTrue(st.value() == Wire.STATUS_COMMITTED || st.value() == Wire.STATUS_COMMITTED_LONG_AGO,
                        "the first leader's commit survives two takeovers: " + st);
                long next = client.begin();
                assertTrue(next > committedOnA);
                assertEquals(Wire.COMMITTED, client.commit(next, 7).type());
            }
        } finally {
            for (OracleCandidate cand : candidates) {
                cand.close(); // before its server, as so-server does
            }
            for (OracleServer srv : servers) {
                srv.close();
            }
        }
    }
}
