package io.sibyl.oracle.ha;

import io.micrometer.core.instrument.Timer;
import io.sibyl.oracle.OracleMetrics;
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

import java.io.IOException;
import java.io.UncheckedIOException;
import java.time.Duration;
import java.util.Objects;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A leader whose connection to ZooKeeper drops (only its own: the bookies and everyone else still reach ZooKeeper)
 * cannot tell whether a standby is about to take over, so it holds the begins it would answer from its reserved
 * timestamp block; when the connection comes back within the session timeout, the session is confirmed and the held
 * begin is answered, with no takeover and no fatal error.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ZooKeeperDisconnectHoldTest {
    @RegisterExtension
    static final BookKeeperCluster cluster = BookKeeperCluster.perTestClass(3);

    @Test
    void beginsAreHeldWhileTheLeaderIsDisconnectedFromZooKeeperAndAnsweredOnReconnect() throws Exception {
        String zkPort = cluster.zkConnect().substring(cluster.zkConnect().lastIndexOf(':') + 1);
        try (CuttableLink link = new CuttableLink(Integer.parseInt(zkPort))) {
            // The leader's own session goes through the link; its BookKeeper client reaches ZooKeeper directly.
            JournalSettings s = cluster.settings("disconnect")
                    .withZooKeeper(link.address(), "zk+null://" + cluster.zkConnect() + "/ledgers")
                    .withLeaderZnodes("/sibyl/test/disconnect/leader", "/sibyl/test/disconnect/election");
            ZooKeeper zk = cluster.zooKeeper(cluster.settings("disconnect-observer"));
            OracleCandidate candidate = OracleCandidate.join(SessionExpiryTakeoverTest.config(s),
                    "a/" + JournalClients.ownerName());
            OracleServer server = null;
            try {
                server = ElectionChainTest.lead(candidate).get(30, TimeUnit.SECONDS);
                LeaderRecord leader = awaitLeader(zk, s.leaderZnode());
                await("the new leader's lease is confirmed").atMost(Duration.ofSeconds(20))
                        .pollInterval(Duration.ofMillis(10)).until(() -> candidate.lease().isValid());

                try (RawOracleClient client = RawOracleClient.connect("127.0.0.1", server.port(), 60_000)) {
                    long first = client.begin();
                    assertEquals(Wire.COMMITTED, client.commit(first, 1).type());

                    link.cut();
                    await("the lease ends when ZooKeeper is cut off").atMost(Duration.ofSeconds(20))
                            .pollInterval(Duration.ofMillis(10)).until(() -> !candidate.lease().isValid());
                    long held = client.sendBegin();
                    CompletableFuture<Long> answer = CompletableFuture.supplyAsync(() -> {
                        try {
                            return client.awaitStarted(held);
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    });
                    // Cut off, the leader must not answer: a standby may be taking over for all it knows.
                    assertThrows(TimeoutException.class, () -> answer.get(1500, TimeUnit.MILLISECONDS),
                            "a begin is answered while the leader cannot reach ZooKeeper");
                    assertTrue(!candidate.lease().isValid(), "the lease stays ended while cut off");

                    link.restore();
                    long start = answer.get(30, TimeUnit.SECONDS);
                    assertTrue(start > first, "the held begin got a fresh timestamp: " + start + " > " + first);
                    // The hold shows in the metrics: the begin's block waited at least the 1.5 s checked above.
                    Timer hold = server.metrics().registry().get(OracleMetrics.REPLY_HOLD).timer();
                    assertTrue(hold.max(TimeUnit.MILLISECONDS) >= 1500, "reply hold max " + hold.max(
                            TimeUnit.MILLISECONDS) + " ms");
                    assertTrue(server.metrics().registry().get(OracleMetrics.BEGIN_LATENCY).timer()
                            .max(TimeUnit.MILLISECONDS) >= 1500, "the held begin's latency counts the hold");
                    assertEquals(Wire.COMMITTED, client.commit(start, 2).type(), "and its transaction commits");
                    assertTrue(client.begin() > start, "later begins are answered at once");
                }
                assertNull(server.failure(), "the leader kept serving");
                assertEquals(leader, LeaderZnode.read(zk, s.leaderZnode()), "no other leader was announced");
            } finally {
                candidate.close();
                if (server != null) {
                    server.close();
                }
            }
        }
    }

    /** The announcement may trail the server's start by a ZooKeeper write. */
    private static LeaderRecord awaitLeader(ZooKeeper zk, String path) {
        return await("the leader announcing itself").atMost(Duration.ofSeconds(20)).pollInterval(Duration.ofMillis(20))
                .until(() -> LeaderZnode.read(zk, path), Objects::nonNull);
    }
}
