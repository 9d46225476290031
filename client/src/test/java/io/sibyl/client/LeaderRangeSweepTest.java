package io.sibyl.client;

import io.sibyl.client.oracle.JournaledOracle;
import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleMetrics;
import io.sibyl.oracle.RangeSweepSettings;
import io.sibyl.oracle.journal.BookKeeperCluster;
import io.sibyl.oracle.journal.JournalSettings;
import io.sibyl.protocol.AbortedRange;
import org.apache.hadoop.hbase.TableName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

import static io.sibyl.client.TestSupport.get;
import static io.sibyl.client.TestSupport.put;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A failover leaves an aborted range (a client JVM was writing when its oracle was replaced, then was killed), and the
 * new leader, started with {@code range.sweep.tables}, sweeps it by itself: nobody runs {@code bin/sibyl-sweep}, yet
 * the in-doubt versions go, the range's commits stay, the oracle forgets the range, and its metrics count the sweep.
 */
@ExtendWith(MiniCluster.class)
@Timeout(value = 240, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class LeaderRangeSweepTest {
    private static final int ROWS = 10;

    @RegisterExtension
    static final BookKeeperCluster bookies = BookKeeperCluster.perTestClass(3);

    @Test
    void aFailoversRangeIsSweptByTheNewLeaderWithoutTheSweepCommand() throws Exception {
        MiniCluster c = MiniCluster.get();
        JournalSettings js = bookies.settings("leadersweep");
        TableName name = c.createTable("leaderswept", "cf");
        Path site = Files.createTempFile("sibyl-hbase-site", ".xml");
        site.toFile().deleteOnExit();
        try (OutputStream out = Files.newOutputStream(site)) {
            c.configuration().writeXml(out);
        }
        OracleConfig plain = OracleConfig.defaults().withPort(0).withCapacities(1 << 16, 1 << 14, 1 << 12)
                .withReaderGrace(2000).withAdminSecretFile(TestSupport.adminSecretFile());
        // A short settle keeps the test short (production keeps the sweeper's 10 minutes, docs/gc.md, Settle), yet
        // longer than the oracle's idle timeout: the sweep's connection must stay open through the settle.
        OracleConfig sweeping = plain.withIdleTimeout(1000).withRangeSweep(
                new RangeSweepSettings(name.getNameAsString(), "", 2500, 200, site.toString()));
        try (TTable t = new TTable(c.connection(), name);
             JournaledOracle first = JournaledOracle.start(js, "oracle-1", plain)) {
            long committed;
            try (TransactionManager tm1 = TransactionManager.create(c.connection(), "127.0.0.1", first.port())) {
                Transaction init = tm1.begin();
                put(t, init, "existing", "committed");
                tm1.commit(init);
                committed = init.getStartTimestamp();
            }
            JournaledOracle[] second = new JournaledOracle[1];
            long inDoubt = KilledClientProcess.inDoubtAcrossTakeover(c.configuration(), first.port(), name, ROWS,
                    "leader-sweep-client", () -> second[0] = JournaledOracle.start(js, "oracle-2", sweeping));
            assertTrue(first.server().awaitFatalError(20, TimeUnit.SECONDS), "the fenced oracle stops");
            try (JournaledOracle leader = second[0]) {
                AbortedRange range = leader.recovered().inDoubtRange();
                assertNotNull(range);
                assertTrue(range.isInDoubt(inDoubt) && range.isCommitted(committed), range.toString());
                try (TransactionManager tm = c.manager(java.util.Map.of(TransactionManager.ORACLE_ADDRESS,
                        "127.0.0.1:" + leader.port()))) {
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                    while (leader.server().stats().abortedRanges() > 0
                            || !tm.oracle().replica().abortedRanges().isEmpty()) {
                        assertTrue(System.nanoTime() < deadline, "the leader did not sweep its range in 60 s");
                        tm.commit(tm.begin()); // blocks for the oracle to seal: the FORGET_RANGE reaches replicas
                        Thread.sleep(100);
                    }
                    assertEquals(0, TestSupport.versionsAt(name, inDoubt), "the in-doubt versions are deleted");
                    assertEquals(1, TestSupport.versionsAt(name, committed), "a commit of the range stays");
                    Transaction tx = tm.begin();
                    assertEquals("committed", get(t, tx, "existing"));
                    for (int i = 0; i < ROWS; i++) {
                        assertNull(get(t, tx, String.format("new%04d", i)), "a write of the in-doubt transaction");
                    }
                    tm.commit(tx);
                }
                var registry = leader.server().metrics().registry();
                assertEquals(1.0, registry.get(OracleMetrics.RANGE_SWEEP_RANGES).functionCounter().count(),
                        "the metrics count the swept range");
                assertTrue(registry.get(OracleMetrics.RANGE_SWEEP_VERSIONS).functionCounter().count() >= ROWS,
                        "the metrics count the deleted versions");
                assertEquals(0.0, registry.get(OracleMetrics.RANGE_SWEEP_PHASE).gauge().value(), "idle again");
                assertEquals(0.0, registry.get(OracleMetrics.RANGE_SWEEP_FAILURES).functionCounter().count(),
                        "no attempt failed, the settle outlasting idle.timeout.ms included");
            }
        }
    }

    @Test
    void anOracleWhoseSweepCannotFindItsHBaseClusterRefusesToStartNamingTheSetting() {
        OracleConfig config = OracleConfig.defaults().withPort(0).withCapacities(64, 64, 64)
                .withAdminSecretFile(TestSupport.adminSecretFile()).withRangeSweep(
                        new RangeSweepSettings("t", "", 0, 1000, "/nonexistent/hbase-site.xml"));
        IllegalStateException e = org.junit.jupiter.api.Assertions.assertThrows(IllegalStateException.class,
                () -> io.sibyl.oracle.OracleServer.startInMemory(config).close());
        assertTrue(e.getMessage().contains("range.sweep.hbase.site: cannot read /nonexistent/hbase-site.xml"),
                e.getMessage());
    }
}
