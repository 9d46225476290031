package io.sibyl.client.oracle;

import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import io.sibyl.protocol.Wire;
import org.junit.jupiter.api.Test;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * What a client sees of the oracle's per-connection defences: a begin beyond its connection's quota of running
 * transactions fails with the oracle's explanation (and the connection stays usable), and a connection beyond
 * max.connections fails with the oracle's reason instead of a bare "connection lost".
 */
class OracleConnectionLimitsTest {

    @Test
    void beginBeyondTheConnectionsQuotaFailsWithTheOraclesExplanationAndOtherClientsStillBegin() throws Exception {
        // max.running.transactions=8, so 4 per connection by default.
        try (OracleServer server = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(1 << 12, 1 << 10, 8));
             OracleClient leaky = OracleClient.connect("127.0.0.1", server.port());
             OracleClient other = OracleClient.connect("127.0.0.1", server.port())) {
            long[] held = new long[4];
            for (int i = 0; i < held.length; i++) {
                held[i] = leaky.begin().get(5, TimeUnit.SECONDS);
            }
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> leaky.begin().get(5, TimeUnit.SECONDS));
            OracleException refused = assertInstanceOf(OracleException.class, e.getCause());
            assertEquals(Wire.ERR_OVERLOADED, refused.code());
            assertTrue(refused.getMessage().contains("max.running.transactions.per.connection=4")
                    && refused.getMessage().contains("roll back"), refused.getMessage());
            assertTrue(leaky.isOpen(), "a refused begin leaves the connection open");

            assertTrue(other.begin().get(5, TimeUnit.SECONDS) > held[3], "another client is not refused");
            leaky.finish(held[0]);
            assertTrue(leaky.begin().get(5, TimeUnit.SECONDS) > held[3], "a finished transaction gave its place back");
        }
    }

    @Test
    void connectionBeyondMaxConnectionsFailsWithTheOraclesReason() throws Exception {
        try (OracleServer server = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(1 << 12, 1 << 10, 64).withConnectionLimits(10_000, 1, 0));
             OracleClient first = OracleClient.connect("127.0.0.1", server.port())) {
            OracleUnavailableException e = assertThrows(OracleUnavailableException.class,
                    () -> OracleClient.connect("127.0.0.1", server.port(), 5_000));
            assertTrue(e.getMessage().contains("max.connections=1"), e.getMessage());

            // Through the failover logic (what TransactionManager uses) it is retried, then reported with the reason.
            OracleUnavailableException viaConnection = assertThrows(OracleUnavailableException.class,
                    () -> OracleConnection.open(new FixedOracleAddress("127.0.0.1", server.port()), 300));
            assertTrue(viaConnection.getMessage().contains("max.connections=1"), viaConnection.getMessage());

            assertTrue(first.begin().get(5, TimeUnit.SECONDS) > 0, "the connection already open is unaffected");
        }
    }
}
