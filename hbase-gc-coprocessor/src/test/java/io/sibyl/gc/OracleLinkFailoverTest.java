package io.sibyl.gc;

import io.sibyl.client.TransactionManager;
import io.sibyl.client.oracle.OracleClient;
import io.sibyl.oracle.ha.OracleProcess;
import io.sibyl.oracle.journal.BookKeeperCluster;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The region server's link to an HA pair of oracles (so-server processes on the BookKeeper journal, in-process
 * ZooKeeper and 3 bookies) follows the standby that takes over when the leader is killed, with no flush or compaction
 * to set it going: a link that waited for one kept collecting nothing for as long, and the commits made meanwhile were
 * older than its next connection, so it kept what they shadowed.
 */
@Timeout(value = 240, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class OracleLinkFailoverTest {
    private static final long READY_MS = 60_000;
    private static final String ROOT = "/sibyl/test/gc-failover";

    @RegisterExtension
    static final BookKeeperCluster bookies = BookKeeperCluster.perTestClass(3);

    @Test
    void theLinkFollowsTheNewLeaderWithoutAFlushOrCompaction() throws Exception {
        try (OracleProcess leader = new OracleProcess("gc-ha-a", oracleFlags())) {
            int leaderPort = leader.awaitReady(READY_MS); // elected first: the standby starts only now
            try (OracleProcess standby = new OracleProcess("gc-ha-b", oracleFlags())) {
                standby.awaitLine("STANDBY", READY_MS);
                // Production's connect timeout and retry pause; a watermark timeout a busy test machine meets.
                OracleLink link = OracleLink.acquire(regionServerConfiguration(), new GcSettings(true, "gc-failover",
                        GcCluster.WATERMARK_TIMEOUT_MS, 10_000, 10_000, 1_000_000));
                try {
                    assertNotNull(link.horizon("the flush before the failover"), "the link reaches the leader");
                    assertTrue(link.openOrNull().address().endsWith(":" + leaderPort), link.openOrNull().address());

                    leader.process.destroyForcibly();
                    assertTrue(leader.process.waitFor(10, TimeUnit.SECONDS));
                    int newLeaderPort = standby.awaitReady(READY_MS); // it leads now

                    // The client gives up on the dead leader after sibyl.gc.connect.timeout.ms (10 s) and tries again
                    // sibyl.gc.connect.retry.ms (10 s) later, should the standby have taken longer than that.
                    await("the link on the new leader").atMost(Duration.ofSeconds(60))
                            .pollInterval(Duration.ofMillis(200))
                            .until(() -> onPort(link.openOrNull(), newLeaderPort));
                    OracleClient now = link.openOrNull();
                    await("the watermark held in the new connection's replica")
                            .atMost(Duration.ofMillis(3 * OracleLink.HOLD_REFRESH_MS))
                            .pollInterval(Duration.ofMillis(200))
                            .until(() -> link.heldReplica() == now.replica());
                } finally {
                    link.release();
                }
            }
        }
    }

    private static boolean onPort(OracleClient client, int port) {
        return client != null && client.address().endsWith(":" + port);
    }

    /** What a region server's hbase-site.xml says to find an HA group of oracles through its leader znode. */
    private static Configuration regionServerConfiguration() {
        Configuration conf = new Configuration(false);
        conf.set(TransactionManager.ORACLE_ZK_CONNECT, bookies.zkConnect());
        conf.set(TransactionManager.ORACLE_LEADER_ZNODE, ROOT + "/leader");
        return conf;
    }

    private static List<String> oracleFlags() {
        return OracleProcess.haCandidateFlags(bookies.zkConnect(), ROOT);
    }
}
