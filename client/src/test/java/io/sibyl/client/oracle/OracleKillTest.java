package io.sibyl.client.oracle;

import io.sibyl.oracle.ha.OracleProcess;
import io.sibyl.oracle.journal.BookKeeperCluster;
import io.sibyl.protocol.AbortedRange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * so-server in its own JVM on the BookKeeper journal (in-process ZooKeeper and 3 bookies), killed with SIGKILL under
 * load, then started again: it recovers, every acknowledged commit is committed, every transaction running at the
 * kill is aborted (also after T_max passes it), no timestamp is handed out twice. The second process then stops
 * cleanly on SIGTERM.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class OracleKillTest {
    @RegisterExtension
    static final BookKeeperCluster cluster = BookKeeperCluster.perTestClass(3);

    private static List<String> flags(String zk, int recentCommits) {
        return List.of("--port=0", "--host=127.0.0.1", "--journal=bookkeeper", "--journal.zk.connect=" + zk,
                "--journal.bk.metadata.uri=zk+null://" + zk + "/ledgers", "--journal.ledgers.znode=/sibyl/test/kill",
                "--conflict.table.rows=65536", "--recent.commits.capacity=" + recentCommits,
                "--max.running.transactions=4096", "--push.interval.ms=20");
    }

    @Test
    void killedUnderLoadRecoversEveryAcknowledgedCommitAndAbortsWhatRan() throws Exception {
        String zk = cluster.zkConnect();
        RecoveryWorkload work = new RecoveryWorkload(200);
        // The first process keeps a large commit window: T_max stays low, so what runs at the kill is above it.
        try (OracleProcess first = new OracleProcess("first", flags(zk, 1 << 16))) {
            int port = first.awaitReady(60_000);
            AtomicBoolean stop = new AtomicBoolean();
            try (OracleClient c1 = OracleClient.connect("127.0.0.1", port)) {
                List<Thread> load = work.start(c1, 6, Integer.MAX_VALUE, stop);
                // Load until enough is acknowledged and left running (a busy machine serves fewer per second).
                // Count only what leaveRunning left: work.running also holds the load's aborts still in flight,
                // which leave it when acknowledged.
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                int leftRunning = 0;
                while ((work.acked.size() <= 200 || leftRunning < 10) && System.nanoTime() < deadline) {
                    Thread.sleep(100);
                    work.leaveRunning(c1, 1);
                    leftRunning++;
                }
                first.process.destroyForcibly(); // SIGKILL, with commits in flight
                assertTrue(first.process.waitFor(10, TimeUnit.SECONDS));
                assertEquals(137, first.process.exitValue(), "killed by SIGKILL");
                for (Thread t : load) {
                    t.join(15_000);
                }
                stop.set(true);
            }
        }
        System.out.println("so-server killed under load: " + work);
        assertTrue(work.acked.size() > 200, "load before the kill: " + work);
        assertTrue(work.running.size() >= 10, work.toString());

        try (OracleProcess second = new OracleProcess("second", flags(zk, 16))) {
            int port = second.awaitReady(60_000);
            String recovered = second.awaitLine("recovered journal:", 1_000);
            assertTrue(recovered.contains("epoch 2") && recovered.contains("in doubt now ("), recovered);
            try (OracleClient c2 = OracleClient.connect("127.0.0.1", port)) {
                List<AbortedRange> ranges = c2.replica().abortedRanges();
                assertEquals(1, ranges.size(), "the HELLO carries the range of the killed oracle");
                work.checkAfterRecovery(c2, false);
                RecoveryWorkload more = new RecoveryWorkload(200);
                for (Thread t : more.start(c2, 2, 50, new AtomicBoolean())) {
                    t.join();
                }
                assertTrue(c2.replica().tMax() > ranges.get(0).to(), "T_max passed every old timestamp");
                work.checkAfterRecovery(c2, true);
                try (OracleClient c3 = OracleClient.connect("127.0.0.1", port)) {
                    work.checkAfterRecovery(c3, false);
                    more.checkAfterRecovery(c3, false);
                }
            }
            second.process.destroy(); // SIGTERM: clean shutdown
            assertTrue(second.process.waitFor(20, TimeUnit.SECONDS), "so-server stops on SIGTERM\n" + second.tail());
            assertEquals(143, second.process.exitValue());
        }
    }
}
