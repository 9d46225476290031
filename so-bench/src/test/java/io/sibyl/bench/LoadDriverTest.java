package io.sibyl.bench;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.sibyl.client.oracle.OracleClient;
import io.sibyl.oracle.OracleServer;
import org.junit.jupiter.api.Test;

import java.time.Duration;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The closed loop against a small in-process oracle: transactions commit, abort on hot keys, and are counted. */
class LoadDriverTest {
    @Test
    void closedLoopCommitsAndCountsAborts() throws Exception {
        OracleServer server = SmallOracle.start();
        EventLoopGroup group = new NioEventLoopGroup(1);
        OracleClient[] clients = new OracleClient[2];
        try {
            EventLoopGroup[] loops = {group, group};
            for (int i = 0; i < clients.length; i++) {
                clients[i] = OracleClient.connect("127.0.0.1", server.port(), group);
            }
            BenchOptions o = BenchOptions.parse(new String[] {"--connections", "2", "--window", "32", "--keys",
                    "200", "--key-dist", "zipfian", "--write-set", "4", "--read-only-fraction", "0.25"});
            LoadDriver driver = new LoadDriver(o, clients, loops);
            driver.start();
            Metrics.Counts counts = waitFor(driver.metrics(), 2000);
            driver.stop();
            assertTrue(counts.committed() > 100, "commits: " + counts);
            assertTrue(counts.conflicts() > 0, "200 zipfian keys must conflict: " + counts);
            assertTrue(counts.readOnly() > 0, "read-only transactions: " + counts);
            assertEquals(0, counts.errors(), driver.metrics().firstError());
            Metrics.Latencies l = driver.metrics().latencies();
            assertEquals(counts.committed(), l.commit().getTotalCount(), 64);
            assertTrue(l.txn().getValueAtPercentile(50) >= l.commit().getValueAtPercentile(50));
        } finally {
            for (OracleClient c : clients) {
                if (c != null) {
                    c.close();
                }
            }
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
            server.close();
        }
    }

    @Test
    void serializableLoopCountsReadConflictsApart() throws Exception {
        OracleServer server = SmallOracle.start();
        EventLoopGroup group = new NioEventLoopGroup(1);
        OracleClient client = OracleClient.connect("127.0.0.1", server.port(), group);
        try {
            BenchOptions o = BenchOptions.parse(new String[] {"--window", "32", "--keys", "2000", "--write-set", "2",
                    "--read-set", "8", "--isolation", "serializable"});
            LoadDriver driver = new LoadDriver(o, new OracleClient[] {client}, new EventLoopGroup[] {group});
            driver.start();
            Metrics.Counts counts = await("a read conflict").atMost(Duration.ofSeconds(60))
                    .pollInterval(Duration.ofMillis(20)).until(driver.metrics()::snapshot, c -> c.readConflicts() > 0);
            driver.stop();
            assertTrue(counts.readConflicts() > 0, "8 rows read of 2000, 2 written a commit, must conflict: "
                    + counts);
            assertTrue(counts.committed() > 0, "commits: " + counts);
            assertEquals(0, counts.errors(), driver.metrics().firstError());
        } finally {
            client.close();
            group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
            server.close();
        }
    }

    @Test
    void pacedLoopKeepsTheRate() throws Exception {
        Pacer pacer = new Pacer(1000);
        pacer.start(0);
        assertEquals(0, pacer.next(5));
        assertEquals(1_000_000, pacer.next(5));
        assertEquals(2_000_000, pacer.next(5));
        pacer.start(10);
        assertEquals(10, pacer.next(20));
        Pacer unlimited = new Pacer(0);
        assertEquals(42, unlimited.next(42));
    }

    /**
     * Lets the load run for {@code millis} (or until 5000 commits), and on past that, up to a minute, until it has
     * done what the test checks: how fast it gets there is for the benchmark, not for this test.
     */
    private static Metrics.Counts waitFor(Metrics m, long millis) {
        long start = System.currentTimeMillis();
        return await("commits, conflicts and read-only transactions").atMost(Duration.ofSeconds(60))
                .pollInterval(Duration.ofMillis(20)).until(m::snapshot, c -> c.committed() >= 5000
                        || System.currentTimeMillis() - start >= millis
                        && c.committed() > 100 && c.conflicts() > 0 && c.readOnly() > 0);
    }
}
