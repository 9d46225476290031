package io.sibyl.oracle.ha;

import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import io.sibyl.oracle.OracleStats;
import io.sibyl.protocol.Wire;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.lang.management.ManagementFactory;
import java.util.List;
import java.util.concurrent.TimeUnit;
import javax.management.MBeanServer;
import javax.management.ObjectName;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What an operator sees of a running oracle: its statistics, over JMX and in its log line. */
class OracleStatsTest {

    @ParameterizedTest(name = "I/O threads: {0}")
    @ValueSource(ints = {1, 2}) // 1: the sequencer runs inline on the I/O thread; 2: on its own thread
    void countersFollowBeginsCommitsAbortsAndLostConnectionsAndAreReadableOverJmx(int ioThreads) throws Exception {
        // No quota per connection: one client takes most of the shared limit here.
        OracleConfig config = OracleConfig.defaults().withPort(0).withCapacities(1 << 12, 1 << 10, 3)
                .withThreads(ioThreads, true).withConnectionLimits(10_000, 16, 3);
        try (OracleServer server = OracleServer.startInMemory(config);
             RawOracleClient client = RawOracleClient.connect("127.0.0.1", server.port(), 10_000)) {
            long loser = client.begin();
            long winner = client.begin();
            assertEquals(Wire.COMMITTED, client.commit(winner, 42L, 43L).type());
            assertEquals(Wire.ABORTED, client.commit(loser, 43L).type(), "write-write conflict on row 43");
            try (RawOracleClient other = RawOracleClient.connect("127.0.0.1", server.port(), 10_000)) {
                other.begin();
                long open = client.begin();
                other.begin();
                assertThrows(java.io.IOException.class, client::begin, "max.running.transactions=3 are running");
                client.finish(open);
            }
            // The lost connection's two transactions are aborted once the oracle notices it closed; FINISH has
            // no reply, so the open transaction leaves the running set whenever the oracle reads it.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            OracleStats s = server.stats();
            while ((s.disconnectAborts() < 2 || s.connections() > 1 || s.running() > 0) && System.nanoTime() < deadline) {
                Thread.sleep(10);
                s = server.stats();
            }
            assertEquals(5, s.begins(), s.toString());
            assertEquals(1, s.refusedBegins(), s.toString());
            assertEquals(1, s.commits(), s.toString());
            assertEquals(1, s.conflictAborts(), s.toString());
            assertEquals(2, s.disconnectAborts(), s.toString());
            assertEquals(3, s.aborts(), s.toString());
            assertEquals(0, s.running(), s.toString());
            assertEquals(3, s.abortedSet(), "nobody reported the aborts cleaned up: " + s);
            assertEquals(1, s.connections(), s.toString());
            assertTrue(s.lastTimestamp() >= 6, "5 start timestamps and a commit timestamp: " + s);

            MBeanServer mbeans = ManagementFactory.getPlatformMBeanServer();
            ObjectName name = new ObjectName("io.sibyl:type=StatusOracle,port=" + server.port());
            assertEquals(1L, mbeans.getAttribute(name, "Commits"));
            assertEquals(1L, mbeans.getAttribute(name, "ConflictAborts"));
            assertEquals(2L, mbeans.getAttribute(name, "DisconnectAborts"));
            assertEquals(3, mbeans.getAttribute(name, "AbortedSetSize"));
            assertEquals(s.lowWatermark(), mbeans.getAttribute(name, "LowWatermark"));

            // Rates over the 2 s since an earlier snapshot that had seen 1 begin (0.5 commits/s rounds to 1).
            assertEquals(0L, mbeans.getAttribute(name, "ExpiredAborts"));
            String line = s.describe(new OracleStats(s.takenAtMillis() - 2000, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0,
                    0, 0, 0, 0, 0, 0));
            assertTrue(line.startsWith("2 begins/s, 1 commits/s, 2 aborts/s (1 conflicts, 0 too old, 2 on"
                    + " disconnect, 0 past the max age, 1 refused begins in 2 s)"), line);
            server.close();
            assertFalse(mbeans.isRegistered(name), "a closed oracle leaves no JMX bean behind");
        }
    }

    @Test
    void soServerLogsItsCountersEveryStatsLogInterval() throws Exception {
        try (OracleProcess p = new OracleProcess("stats", List.of("--port=0", "--conflict.table.rows=4096",
                "--recent.commits.capacity=1024", "--max.running.transactions=1024", "--stats.log.interval.ms=200"))) {
            int port = p.awaitReady(60_000);
            try (RawOracleClient client = RawOracleClient.connect("127.0.0.1", port, 10_000)) {
                client.commit(client.begin(), 7L);
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
            List<String> lines = p.stderrLines("totals: 1 begins, 1 commits");
            while (lines.isEmpty() && System.nanoTime() < deadline) {
                Thread.sleep(50);
                lines = p.stderrLines("totals: 1 begins, 1 commits");
            }
            assertFalse(lines.isEmpty(), p.tail());
            assertTrue(lines.get(0).contains("oracle stats: "), lines.get(0));
        }
    }
}
