package io.sibyl.client.oracle;

import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The end of a read-only transaction travels with the next request, or on its own shortly after. */
class DeferredFinishTest {
    private static final int MAX_RUNNING = 4;
    private static OracleServer server;

    @BeforeAll
    static void startOracle() throws Exception {
        server = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(1 << 16, 1 << 12, MAX_RUNNING));
    }

    @AfterAll
    static void stopOracle() {
        server.close();
    }

    @Test
    void readOnlyEndsReachTheOracleBeforeTheBeginSentWithThem() throws Exception {
        try (OracleClient client = OracleClient.connect("127.0.0.1", server.port())) {
            // With room for only four running transactions, every begin after the fourth would be refused if the
            // ends queued before it did not reach the oracle first.
            for (int i = 0; i < 200; i++) {
                long ts = client.begin().get(5, TimeUnit.SECONDS);
                client.finish(ts);
            }
        }
    }

    @Test
    void anIdleClientsReadOnlyEndsReachTheOracleWithinTheDelay() throws Exception {
        try (OracleClient client = OracleClient.connect("127.0.0.1", server.port())) {
            long[] started = new long[3];
            for (int i = 0; i < started.length; i++) {
                started[i] = client.begin().get(5, TimeUnit.SECONDS);
            }
            assertEquals(3, server.runningTransactions());
            for (long ts : started) {
                client.finish(ts);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(2);
            while (server.runningTransactions() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(1);
            }
            assertEquals(0, server.runningTransactions(), "ends of an idle client never reached the oracle");
            assertEquals(0, client.deferredFinishCount());
        }
    }

    @Test
    void endsPastTheBatchLimitAreSentWithoutWaitingForTheTimer() throws Exception {
        try (OracleClient client = OracleClient.connect("127.0.0.1", server.port())) {
            for (int i = 0; i < 1000; i++) {
                client.finish(1_000_000_000L + i); // unknown to the oracle: ignored there, but still sent
            }
            assertTrue(client.deferredFinishCount() < 1000, "a full batch of ends should have been sent");
        }
    }
}
