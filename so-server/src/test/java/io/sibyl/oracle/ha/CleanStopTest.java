package io.sibyl.oracle.ha;

import io.sibyl.oracle.journal.BookKeeperCluster;
import io.sibyl.oracle.journal.JournalSettings;
import io.sibyl.protocol.LeaderRecord;
import io.sibyl.protocol.Wire;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A planned stop (SIGTERM) leaves nothing in doubt: before, every clean restart or handover left an aborted range
 * (all timestamps up to the reservation) that every HELLO carried until a sweep of at least ten minutes. Now the
 * stopping oracle aborts its running transactions and journals that nothing below its reservation is undecided.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class CleanStopTest {
    @RegisterExtension
    static final BookKeeperCluster cluster = BookKeeperCluster.perTestClass(3);

    private static List<String> flags(String name) {
        String zk = cluster.zkConnect();
        return new ArrayList<>(List.of("--port=0", "--host=127.0.0.1", "--journal=bookkeeper",
                "--journal.zk.connect=" + zk, "--journal.bk.metadata.uri=zk+null://" + zk + "/ledgers",
                "--journal.ledgers.znode=/sibyl/test/" + name + "/ledgers",
                "--conflict.table.rows=65536", "--recent.commits.capacity=65536", "--max.running.transactions=4096"));
    }

    @Test
    void aRestartAfterSigtermFindsNoTransactionInDoubtAndTheRunningOneAborted() throws Exception {
        long running;
        long committed;
        try (OracleProcess first = new OracleProcess("clean-1", flags("clean"))) {
            int port = first.awaitReady(60_000);
            try (RawOracleClient c = RawOracleClient.connect("127.0.0.1", port, 5000)) {
                running = c.begin();
                committed = c.begin();
                assertEquals(Wire.COMMITTED, c.commit(committed, 7L).type());
                first.process.destroy(); // SIGTERM with a transaction running
                assertTrue(first.process.waitFor(30, TimeUnit.SECONDS));
            }
            assertTrue(!first.stderrLines("stopped cleanly").isEmpty(), first.tail());
        }
        try (OracleProcess second = new OracleProcess("clean-2", flags("clean"))) {
            int port = second.awaitReady(60_000);
            try (RawOracleClient c = RawOracleClient.connect("127.0.0.1", port, 5000)) {
                assertEquals(0, c.helloRanges, "no aborted range after a clean stop: " + second.tail());
                assertEquals(Wire.STATUS_ABORTED, c.query(running).value(), "running at the stop: aborted");
                long st = c.query(committed).value();
                assertTrue(st == Wire.STATUS_COMMITTED || st == Wire.STATUS_COMMITTED_LONG_AGO, "committed: " + st);
                assertTrue(c.begin() > committed);
            }
        }
    }

    @Test
    void aSigtermedLeaderHandsOverToTheStandbyWithoutARangeInDoubt() throws Exception {
        String name = "handover";
        JournalSettings s = cluster.settings(name + "-client");
        ZooKeeper zk = cluster.zooKeeper(s);
        List<String> flags = StandbyTakeoverTest.haFlags(cluster, name);
        try (OracleProcess first = new OracleProcess("handover-1", flags)) {
            int port = first.awaitReady(60_000);
            try (OracleProcess second = new OracleProcess("handover-2", flags)) {
                second.owner(60_000);
                long running;
                try (RawOracleClient c = RawOracleClient.connect("127.0.0.1", port, 5000)) {
                    running = c.begin();
                    long t = c.begin();
                    assertEquals(Wire.COMMITTED, c.commit(t, 9L).type());
                    first.process.destroy();
                    assertTrue(first.process.waitFor(30, TimeUnit.SECONDS));
                }
                int newPort = second.awaitReady(60_000);
                LeaderRecord leader = LeaderZnode.read(zk, "/sibyl/test/" + name + "/leader");
                assertEquals(newPort, leader.port());
                try (RawOracleClient c = RawOracleClient.connect("127.0.0.1", newPort, 5000)) {
                    assertEquals(0, c.helloRanges, "no aborted range after a clean handover: " + second.tail());
                    assertEquals(Wire.STATUS_ABORTED, c.query(running).value());
                }
            }
        }
    }
}
