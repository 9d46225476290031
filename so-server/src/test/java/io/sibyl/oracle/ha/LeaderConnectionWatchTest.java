package io.sibyl.oracle.ha;

import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
            await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).untilAsserted(() -> assertTrue(
                    leader.refusedConnections() >= 2, "refused " + leader.refusedConnections() + " times"));
            assertEquals(1, lost.getCount(), "a refusal by a live leader was taken for its death");
            occupant.begin(); // the leader serves its clients all along

            occupant.close();
            // The watch takes the free place at its next attempt, and is not refused any more.
            // Steady for two retry pauses: one connection, and no refusal since the last look.
            AtomicLong refusals = new AtomicLong(leader.refusedConnections());
            await().atMost(Duration.ofSeconds(10)).during(Duration.ofMillis(2 * LeaderConnectionWatch.REFUSED_RETRY_MS))
                    .pollInterval(Duration.ofMillis(20)).untilAsserted(() -> {
                        long refused = leader.refusedConnections();
                        assertTrue(refusals.getAndSet(refused) == refused && leader.connections() == 1,
                                "the watch did not connect: " + leader.connections() + " connections, " + refused
                                        + " refused");
                    });
            assertEquals(1, lost.getCount());
            leader.close();
            assertTrue(lost.await(10, TimeUnit.SECONDS), "the watch did not notice the leader go");
        } finally {
            occupant.close();
            leader.close();
        }
    }

    private static void awaitConnections(OracleServer server, int expected) {
        await("connections open").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10))
                .until(server::connections, equalTo(expected));
    }
}
