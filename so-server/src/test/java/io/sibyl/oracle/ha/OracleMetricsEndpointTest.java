package io.sibyl.oracle.ha;

import io.sibyl.oracle.DocTables;
import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import io.sibyl.oracle.PrometheusScrape;
import io.sibyl.protocol.Wire;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.net.ServerSocket;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import javax.management.ObjectName;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** An operator points Prometheus at an oracle's metrics.http.port: what the scrape shows, and that it is documented. */
class OracleMetricsEndpointTest {

    @Test
    void everyDocumentedOracleMetricIsServedAndMovesUnderLoad() throws Exception {
        OracleConfig config = OracleConfig.defaults().withPort(0).withCapacities(1 << 12, 1 << 10, 64)
                .withMetricsHttpPort(0);
        try (OracleServer server = OracleServer.startInMemory(config);
             RawOracleClient client = RawOracleClient.connect("127.0.0.1", server.port(), 10_000)) {
            int port = server.metricsPort();
            PrometheusScrape before = PrometheusScrape.fetch(port);
            Set<String> served = new TreeSet<>();
            for (String f : before.families()) {
                // A timer or distribution comes with the gauge NAME_max (the largest sample lately): one row.
                boolean maxOfHistogram = f.endsWith("_max")
                        && before.families().contains(f.substring(0, f.length() - "_max".length()));
                if (f.startsWith("sibyl_") && !maxOfHistogram) {
                    served.add(f);
                }
            }
            assertEquals(DocTables.metricNames("sibyl_oracle_"), served,
                    "docs/operations.md, Metrics, against the oracle's scrape");
            assertTrue(before.families().contains("jvm_memory_used_bytes"), "the JVM's own figures too");

            // Load: 40 commits, a write-write conflict, a query and a watermark query, one transaction left
            // running, and a second connection lost with a transaction running.
            for (int i = 0; i < 40; i++) {
                assertEquals(Wire.COMMITTED, client.commit(client.begin(), 1000 + i).type());
            }
            long loser = client.begin();
            long winner = client.begin();
            assertEquals(Wire.COMMITTED, client.commit(winner, 7L).type());
            assertEquals(Wire.ABORTED, client.commit(loser, 7L).type(), "write-write conflict on row 7");
            client.query(winner);
            client.lowWatermark();
            client.begin(); // left running
            try (RawOracleClient other = RawOracleClient.connect("127.0.0.1", server.port(), 10_000)) {
                other.begin();
            }
            PrometheusScrape after = PrometheusScrape.fetch(port);
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (after.value("sibyl_oracle_aborts_total", "reason=\"disconnect\"") < 1
                    && System.nanoTime() < deadline) {
                Thread.sleep(300); // past the quarter second the figures are kept
                after = PrometheusScrape.fetch(port);
            }

            assertEquals(44, after.movedSince(before, "sibyl_oracle_requests_total", "type=\"begin\""), after.text());
            assertEquals(42, after.movedSince(before, "sibyl_oracle_requests_total", "type=\"commit\""));
            assertEquals(1, after.movedSince(before, "sibyl_oracle_requests_total", "type=\"query\""));
            assertEquals(1, after.movedSince(before, "sibyl_oracle_requests_total", "type=\"watermark_query\""));
            assertEquals(1, after.movedSince(before, "sibyl_oracle_requests_total", "type=\"handshake\""),
                    "the second connection's; the first shook hands before the first scrape");
            assertEquals(44, after.movedSince(before, "sibyl_oracle_begins_total"));
            assertEquals(41, after.movedSince(before, "sibyl_oracle_commits_total"));
            assertEquals(1, after.movedSince(before, "sibyl_oracle_aborts_total", "reason=\"conflict\""));
            assertEquals(1, after.movedSince(before, "sibyl_oracle_aborts_total", "reason=\"disconnect\""));
            assertEquals(0, after.movedSince(before, "sibyl_oracle_aborts_total", "reason=\"too_old\""));
            assertEquals(1, after.value("sibyl_oracle_transactions_running"), "the one left running");
            assertEquals(2, after.value("sibyl_oracle_transactions_aborted"), "nobody reported a clean-up");
            assertEquals(1, after.value("sibyl_oracle_connections"), after.text());
            assertEquals(2, after.value("sibyl_oracle_connections_accepted_total"));
            assertTrue(after.movedSince(before, "sibyl_oracle_timestamp_last") >= 85, "44 begins and 41 commits");
            assertTrue(after.value("sibyl_oracle_low_watermark_lag") > 0, "held by the running transaction");
            assertTrue(after.value("sibyl_oracle_tmax_lag") > 0, after.text());
            assertTrue(after.movedSince(before, "sibyl_oracle_delta_bytes_total", "via=\"reply\"") > 0,
                    "commits reach the client piggybacked on its replies");
            assertTrue(after.movedSince(before, "sibyl_oracle_journal_blocks_total") > 0);
            for (String histogram : List.of("sibyl_oracle_begin_latency_seconds", "sibyl_oracle_commit_latency_seconds",
                    "sibyl_oracle_journal_append_seconds", "sibyl_oracle_reply_hold_seconds",
                    "sibyl_oracle_block_requests", "sibyl_oracle_block_bytes")) {
                assertTrue(after.movedSince(before, histogram + "_count") > 0, histogram);
                assertTrue(after.value(histogram + "_bucket", "le=\"+Inf\"") > 0, histogram);
            }
            assertEquals(after.value("sibyl_oracle_reply_hold_seconds_count"),
                    after.value("sibyl_oracle_reply_hold_seconds_bucket", "le=\"0.01\""),
                    "an oracle without a lease to lose holds no reply (each sample is the release's own run time)");

            // The JMX bean's figures are these meters'.
            ObjectName jmx = new ObjectName("io.sibyl:type=StatusOracle,port=" + server.port());
            assertEquals((long) after.value("sibyl_oracle_commits_total"),
                    ManagementFactory.getPlatformMBeanServer().getAttribute(jmx, "Commits"));
            assertEquals((long) after.value("sibyl_oracle_aborts_total"),
                    ManagementFactory.getPlatformMBeanServer().getAttribute(jmx, "Aborts"));

            assertEquals(404, PrometheusScrape.get(port, "/").statusCode(), "only /metrics is served");
        }
    }

    @Test
    void soServerServesItsMetricsOnMetricsHttpPort() throws Exception {
        try (OracleProcess p = new OracleProcess("metrics", List.of("--port=0", "--host=127.0.0.1",
                "--conflict.table.rows=4096", "--recent.commits.capacity=1024", "--max.running.transactions=1024",
                "--metrics.http.port=0"))) {
            int port = p.awaitReady(60_000);
            List<String> served = p.stderrLines("metrics served at http://");
            assertFalse(served.isEmpty(), p.tail());
            String line = served.get(0);
            int metricsPort = Integer.parseInt(line.replaceAll(".*:(\\d+)/metrics.*", "$1"));
            try (RawOracleClient client = RawOracleClient.connect("127.0.0.1", port, 10_000)) {
                client.commit(client.begin(), 7L);
            }
            PrometheusScrape scrape = PrometheusScrape.fetch(metricsPort);
            assertEquals(1, scrape.value("sibyl_oracle_commits_total"), scrape.text());
        }
    }

    @Test
    void aTakenMetricsPortStopsTheStartNamingTheSetting() throws Exception {
        try (ServerSocket taken = new ServerSocket(0)) {
            OracleConfig config = OracleConfig.defaults().withPort(0).withCapacities(64, 4, 16)
                    .withMetricsHttpPort(taken.getLocalPort());
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> OracleServer.startInMemory(config).close());
            assertTrue(e.getMessage().contains("metrics.http.port=" + taken.getLocalPort()), e.getMessage());
        }
    }
}
