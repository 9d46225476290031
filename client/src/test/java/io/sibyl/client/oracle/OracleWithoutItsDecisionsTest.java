package io.sibyl.client.oracle;

import io.sibyl.oracle.InMemoryJournal;
import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import io.sibyl.oracle.OracleState;
import org.junit.jupiter.api.Test;

import java.net.ServerSocket;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An oracle that comes back without its decisions (the in-memory journal restarted, or a wiped journal) hands out the
 * same timestamps again: its transactions would write over committed versions in HBase at those timestamps and their
 * clean-ups delete them, the garbage collector would drop committed versions at the timestamps of its aborts, and
 * aborted versions it forgot would read as committed. A connection that saw the earlier oracle's timestamps refuses
 * it; an oracle that continues above them (as every recovery from a journal does) is taken.
 */
class OracleWithoutItsDecisionsTest {
    @Test
    void aConnectionRefusesAnOracleWhoseClockWentBack() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort();
        }
        OracleConfig config = OracleConfig.defaults().withPort(port).withCapacities(1 << 12, 1 << 10, 1 << 10);
        OracleServer first = OracleServer.startInMemory(config);
        OracleConnection connection = OracleConnection.open(new FixedOracleAddress("127.0.0.1", port), 5_000);
        try {
            OracleClient c = connection.current();
            long ts = c.begin().get(5, TimeUnit.SECONDS);
            long commitTs = c.commit(ts, new long[] {42}).get(5, TimeUnit.SECONDS);
            first.close();
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (c.isOpen()) {
                assertTrue(System.nanoTime() < deadline, "the client did not notice the oracle had gone");
                Thread.sleep(20);
            }
            try (OracleServer restarted = bind(() -> OracleServer.startInMemory(config))) { // clock from 0 again
                OracleUnavailableException e = assertThrows(OracleUnavailableException.class, connection::current);
                assertTrue(e.getMessage().contains("lost its decisions") && e.getMessage().contains("up to " + commitTs),
                        e.getMessage());
            }
            try (OracleServer recovered = bind(() -> OracleServer.start(config, new InMemoryJournal(),
                    new OracleState(config, commitTs + 10, commitTs + 10, new long[0], new long[0], new long[0],
                            List.of())))) {
                assertTrue(connection.current().begin().get(5, TimeUnit.SECONDS) > commitTs,
                        "an oracle that continues above the earlier timestamps is taken");
            }
        } finally {
            connection.close();
            first.close();
        }
    }

    /** Starts an oracle on the port just freed, retrying while the operating system still holds it. */
    private static OracleServer bind(Callable<OracleServer> start) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
        while (true) {
            try {
                return start.call();
            } catch (Exception e) {
                if (System.nanoTime() > deadline) {
                    throw e;
                }
                Thread.sleep(100);
            }
        }
    }
}
