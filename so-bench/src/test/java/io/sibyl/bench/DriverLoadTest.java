package io.sibyl.bench;

import io.sibyl.oracle.OracleServer;
import java.time.Duration;
import org.junit.jupiter.api.Test;


import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A short real-oracle smoke test of so-bench-clients' driver: light connections handshake with an in-process
 * oracle, commit, decode the replicated metadata they receive, and their figures survive the trip to the
 * coordinator. Nothing here is timed: the load runs until it has done enough, however slow the machine.
 */
class DriverLoadTest {
    @Test
    void lightConnectionsCommitAndCountWhatTheyReceive() throws Exception {
        OracleServer server = SmallOracle.start();
        try (DriverLoad load = DriverLoad.connect(new DriverLoad.Settings("127.0.0.1", server.port(), 3, 12, 0, 8,
                1_000_000, true))) {
            load.start();
            load.beginMeasurement();
            waitForCommits(load.metrics(), 300);
            DriverResult result = load.finish();
            assertNull(load.firstFailure());
            Metrics.Counts c = result.counts();
            assertTrue(c.committed() >= 300, "commits: " + c);
            assertEquals(0, c.errors(), load.metrics().firstError());
            ReceiveCounters.Snapshot r = result.received();
            // A slot's first STARTED may arrive before the window opens: at most one per slot (12) is not counted.
            assertTrue(r.startReplies() + 12 >= c.committed(), "every commit was begun: " + r);
            assertTrue(r.deltaBytes() > 0 && r.deltaRecords() > 0, "commits of the other connections arrive: " + r);
            assertTrue(r.bytes() > r.deltaBytes(), r.toString());

            DriverResult back = DriverResult.decode(result.encode());
            assertEquals(result.counts().committed(), back.counts().committed());
            assertEquals(result.received(), back.received());
            assertEquals(result.latencies().commit().getTotalCount(), back.latencies().commit().getTotalCount());
            DriverResult twice = back.plus(back);
            assertEquals(2 * back.counts().committed(), twice.counts().committed());
            assertEquals(6, twice.connections());
            assertEquals(back.latencies().begin().getValueAtPercentile(99),
                    twice.latencies().begin().getValueAtPercentile(99));
        } finally {
            server.close();
        }
    }

    private static void waitForCommits(Metrics m, long commits) {
        await(commits + " commits").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(20))
                .until(() -> m.snapshot().committed() >= commits);
    }
}
