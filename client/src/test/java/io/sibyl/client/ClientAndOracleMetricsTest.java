package io.sibyl.client;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.sibyl.oracle.DocTables;
import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import io.sibyl.oracle.PrometheusScrape;
import org.apache.hadoop.hbase.TableName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;

import static io.sibyl.client.TestSupport.put;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An application binds its TransactionManager to its Micrometer registry and an operator scrapes the oracle: both
 * see the same transactions (commits, a conflict) as they happen, under the names docs/operations.md documents.
 */
@ExtendWith(MiniCluster.class)
class ClientAndOracleMetricsTest {

    @Test
    void commitsAndAConflictThroughARealClientMoveItsMetersAndTheOraclesScrape() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("metrics", "cf");
        OracleConfig config = OracleConfig.defaults().withPort(0).withCapacities(1 << 16, 1 << 12, 1 << 10)
                .withMetricsHttpPort(0);
        try (OracleServer oracle = OracleServer.startInMemory(config);
             TransactionManager tm = TransactionManager.create(c.connection(), "127.0.0.1", oracle.port());
             TTable table = new TTable(tm.getConnection(), name)) {
            // Recorded before the application binds a registry: nowhere, and not counted later.
            tm.commit(tm.begin());

            SimpleMeterRegistry registry = new SimpleMeterRegistry();
            PrometheusMeterRegistry prometheus = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
            tm.metrics().bindTo(registry);
            tm.metrics().bindTo(prometheus);
            PrometheusScrape before = PrometheusScrape.fetch(oracle.metricsPort());

            for (int i = 0; i < 20; i++) {
                Transaction tx = tm.begin();
                put(table, tx, "row" + i, "v" + i);
                tm.commit(tx);
            }
            Transaction first = tm.begin();
            Transaction second = tm.begin();
            put(table, first, "hot", "first");
            put(table, second, "hot", "second");
            tm.commit(first);
            RollbackException conflict = assertThrows(RollbackException.class, () -> tm.commit(second));
            assertEquals(RollbackException.Reason.CONFLICT, conflict.getReason());

            assertEquals(22, registry.get(ClientMetrics.BEGIN).timer().count(), "only begins after the binding");
            assertEquals(21, timer(registry, ClientMetrics.COMMIT, "outcome", "committed"));
            assertEquals(1, timer(registry, ClientMetrics.COMMIT, "outcome", "rolled_back"));
            assertEquals(1, registry.get(ClientMetrics.ROLLBACKS).tag("reason", "conflict").counter().count());
            assertEquals(0, registry.get(ClientMetrics.ROLLBACKS).tag("reason", "too_old").counter().count());
            assertTrue(registry.get(ClientMetrics.REPLICA_COMMITS).gauge().value() >= 1,
                    "the replica holds commits above T_max");
            // The loser's abort leaves the replica again once its clean-up is reported: only its presence is sure.
            assertTrue(registry.get(ClientMetrics.REPLICA_ABORTED).gauge().value() >= 0);
            assertTrue(registry.get(ClientMetrics.COMMIT).tag("outcome", "committed").timer()
                    .totalTime(TimeUnit.NANOSECONDS) > 0);

            // The client's meters as Prometheus names them are the documented ones.
            Set<String> served = new TreeSet<>();
            for (String f : PrometheusScrape.parse(prometheus.scrape()).families()) {
                if (!f.endsWith("_max")) { // a timer's largest recent sample, documented with the timer
                    served.add(f);
                }
            }
            assertEquals(DocTables.metricNames("sibyl_client_"), served, "docs/operations.md, Metrics, client table");

            PrometheusScrape after = PrometheusScrape.fetch(oracle.metricsPort());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(10);
            while (after.movedSince(before, "sibyl_oracle_commits_total") < 21 && System.nanoTime() < deadline) {
                Thread.sleep(300); // past the quarter second the oracle keeps its figures
                after = PrometheusScrape.fetch(oracle.metricsPort());
            }
            assertEquals(22, after.movedSince(before, "sibyl_oracle_requests_total", "type=\"begin\""), after.text());
            assertEquals(21, after.movedSince(before, "sibyl_oracle_commits_total"));
            assertEquals(1, after.movedSince(before, "sibyl_oracle_aborts_total", "reason=\"conflict\""));
            assertTrue(after.movedSince(before, "sibyl_oracle_commit_latency_seconds_count") > 0);
            assertTrue(after.movedSince(before, "sibyl_oracle_delta_bytes_total", "via=\"reply\"") > 0);
            assertEquals(1, after.value("sibyl_oracle_connections"), "the manager's one connection");
        }
    }

    private static long timer(MeterRegistry registry, String name, String tag, String value) {
        return registry.get(name).tag(tag, value).timer().count();
    }
}
