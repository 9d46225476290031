package io.sibyl.oracle.ha;

import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import org.junit.jupiter.api.Test;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The standby's watch of its leader against the leader's defences: it is not taken for a connection that never
 * says hello, and a leader that refuses it at max.connections is alive, so it is not deposed.
 */
class LeaderConnectionWatchTest {
    private static final long HANDSHAKE_MS = 200;

    private static OracleConfig config(int maxConnections) {
        return OracleConfig.defaults().withPort(0).withCapacities(1 << 12, 1 << 10, 64)
                .withConnectionLimits(HANDSHAKE_MS, maxConnections, 0);
    }

    @Test
    void standbyWatchConnectionOutlivesTheHandshakeTimeout() throws Exception {
        OracleServer leader = OracleServer.startInMemory(config(4));
        CountDownLatch lost = new CountDownLatch(1);
        try (LeaderConnectionWatch watch = new LeaderConnectionWatch("127.0.0.1", leader.port(), lost::countDown)) {
            awaitConnections(leader, 1);
            assertFalse(lost.await(5 * HANDSHAKE_MS, TimeUnit.MILLISECONDS),
                    "the leader closed the standby's watch connection");
            assertEquals(1, leader.connections());
            leader.close();
            assertTrue(lost.await(10, TimeUnit.SECONDS), "the watch did not notice the leader go");
        } finally {
            leader.close();
        }
    }

    @Test
    void standbyRefusedAtMaxConnectionsDoesNotDeposeTheLeaderAndWatchesOnceAPlaceIsFree() throws Exception {
        OracleServer leader = OracleServer.startInMemory(config(1));
        CountDownLatch lost = new CountDownLatch(1);
        RawOracleClient occupant = RawOracleClient.connect("127.0.0.1", leader.port(), 10_000);
        try (LeaderConnectionWatch watch = new LeaderConnectionWatch("127.0.0.1", leader.port(), lost::countDown)) {
            assertFalse(lost.await(LeaderConnectionWatch.REFUSED_RETRY_MS * 5 / 2, TimeUnit.MILLISECONDS),
                    "a refusal by a live leader was taken for its death");
            // Waited for rather than expected by a time: a loaded machine may take longer than the pause to retry.
            long retryDeadline = System.nanoTime() + 10_000_000_000L;
            while (leader.refusedConnections() < 2 && System.nanoTime() < retryDeadline) {
                Thread.sleep(20);
            }
            assertTrue(leader.refusedConnections() >= 2, "refused " + leader.refusedConnections() + " times");
            assertEquals(1, lost.getCount(), "a refusal by a live leader was taken for its death");
            occupant.begin(); // the leader serves its clients all along

            occupant.close();
            // The watch takes the free place at its next attempt, and is not refused any more.
            long deadline = System.nanoTime() + 10_000_000_000L;
            long refusals = leader.refusedConnections();
            long stableSince = System.nanoTime();
            while (!(leader.connections() == 1
                    && System.nanoTime() - stableSince > 2 * LeaderConnectionWatch.REFUSED_RETRY_MS * 1_000_000L)) {
                if (System.nanoTime() > deadline) {
                    fail("the watch did not connect: " + leader.connections() + " connections, "
                            + leader.refusedConnections() + " refused");
                }
                if (leader.refusedConnections() != refusals || leader.connections() != 1) {
                    refusals = leader.refusedConnections();
                    stableSince = System.nanoTime();
                }
                Thread.sleep(20);
            }
            assertEquals(1, lost.getCount());
            leader.close();
            assertTrue(lost.await(10, TimeUnit.SECONDS), "the watch did not notice the leader go");
        } finally {
            occupant.close();
            leader.close();
        }
    }

    private static void awaitConnections(OracleServer server, int expected) throws InterruptedException {
        long deadline = System.nanoTime() + 10_000_000_000L;
        while (server.connections() != expected) {
            if (System.nanoTime() > deadline) {
                fail(server.connections() + " connections open, expected " + expected);
            }
            Thread.sleep(10);
        }
    }
}
