package io.sibyl.oracle.ha;

import io.sibyl.oracle.journal.BookKeeperCluster;
import io.sibyl.oracle.journal.JournalSettings;
import io.sibyl.oracle.journal.LedgerRegistry;
import io.sibyl.protocol.LeaderRecord;
import io.sibyl.protocol.Wire;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * so-server processes with {@code ha=true}: A, then B, then A again, each leader killed with SIGKILL under load, on
 * ledgers of 4 entries and a commit window of 64, so that the journal rolls over, checkpoints and deletes ledgers
 * all the time: the kills land in rollovers, checkpoints and deletions, and the oracle that comes back tails a journal
 * whose head keeps being deleted. A bookie is lost during the first takeover. This class stops a bookie, so it has its
 * own cluster.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class RepeatedFailoverTest {
    @RegisterExtension
    static final BookKeeperCluster cluster = BookKeeperCluster.perTestClass(3);

    @Test
    void leaderKilledTwiceInARowWhileLedgersRollOverAndAreDeletedLosesNoDecision() throws Exception {
        String name = "twice";
        String leaderZnode = "/sibyl/test/" + name + "/leader";
        JournalSettings s = cluster.settings(name + "-client");
        ZooKeeper zk = cluster.zooKeeper(s);
        LedgerRegistry registry = new LedgerRegistry(zk, "/sibyl/test/" + name + "/ledgers");
        List<String> flags = StandbyTakeoverTest.haFlags(cluster, name, "--journal.ledger.max.entries=4",
                "--recent.commits.capacity=64", "--timestamp.reservation.block=3");
        List<Long> runningAtKill = new ArrayList<>();
        FailoverLoad load = new FailoverLoad(zk, leaderZnode, 3, 500);
        try (OracleProcess a = new OracleProcess("a", flags)) {
            a.awaitReady(30_000);
            try (OracleProcess b = new OracleProcess("b", flags)) {
                b.owner(30_000);
                load.start();
                runningAtKill.add(killUnderLoad(a, zk, leaderZnode, load, registry));
                cluster.removeBookie(); // while B fences, reads the tail and starts its first ledger
                b.awaitReady(60_000);
                awaitCommitsOf(zk, leaderZnode, load);
                try (OracleProcess aAgain = new OracleProcess("a-again", flags)) {
                    aAgain.owner(30_000);
                    runningAtKill.add(killUnderLoad(b, zk, leaderZnode, load, registry));
                    aAgain.awaitReady(60_000);
                    awaitCommitsOf(zk, leaderZnode, load);
                    load.close();
                    System.out.println("load across two failovers: " + load + "; " + load.unanswered.size()
                            + " commits unanswered; a-again: " + aAgain.awaitLine("took over as leader", 1000));
                    assertTrue(load.repeated.isEmpty(), "timestamps handed out twice: " + load.repeated);
                    assertEquals(3, load.firstCommitNanos.size(), "commits under three leaders: " + load);
                    LeaderRecord now = LeaderZnode.read(zk, leaderZnode);
                    try (RawOracleClient c = RawOracleClient.connect("127.0.0.1", now.port(), 5000)) {
                        for (Map.Entry<Long, Long> e : load.acked.entrySet()) {
                            RawOracleClient.Reply st = c.query(e.getKey());
                            assertTrue(st.value() == Wire.STATUS_COMMITTED_LONG_AGO
                                    || (st.value() == Wire.STATUS_COMMITTED && st.commitTs() == e.getValue()),
                                    "acknowledged commit " + e.getKey() + " -> " + e.getValue() + " reads " + st);
                        }
                        for (long ts : load.unanswered) {
                            long st = c.query(ts).value();
                            assertTrue(st == Wire.STATUS_COMMITTED || st == Wire.STATUS_COMMITTED_LONG_AGO
                                    || st == Wire.STATUS_ABORTED, "commit in flight at a kill " + ts + " is " + st);
                        }
                        for (long ts : runningAtKill) {
                            assertEquals(Wire.STATUS_ABORTED, c.query(ts).value(), "running at a kill: " + ts);
                        }
                        long max = load.timestamps.stream().mapToLong(Long::longValue).max().orElse(0);
                        long next = c.begin();
                        assertTrue(next > max, "begin " + next + " after " + max);
                    }
                }
            }
        } finally {
            load.close();
        }
    }

    /**
     * Waits until the current leader acknowledged 200 more commits and deleted ledgers, begins a transaction it
     * leaves running, and kills the leader with SIGKILL. Returns that transaction's start timestamp.
     */
    private static long killUnderLoad(OracleProcess leader, ZooKeeper zk, String leaderZnode, FailoverLoad load,
                                      LedgerRegistry registry) throws Exception {
        long deletedBefore = registry.read().deleted();
        int ackedBefore = load.acked.size();
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(10)).untilAsserted(() -> {
            LedgerRegistry.Snapshot now = registry.read();
            assertTrue(now.deleted() > deletedBefore, "ledgers deleted before the kill: " + now);
            assertTrue(load.acked.size() >= ackedBefore + 200, "200 more commits acknowledged before the kill");
        });
        long running;
        try (RawOracleClient c = RawOracleClient.connect("127.0.0.1", LeaderZnode.read(zk, leaderZnode).port(),
                5000)) {
            running = c.begin();
            leader.process.destroyForcibly(); // SIGKILL with commits, rollovers and deletions in flight
            assertTrue(leader.process.waitFor(10, TimeUnit.SECONDS));
        }
        return running;
    }

    /** Waits until the load has a commit acknowledged by the leader announced now. */
    private static void awaitCommitsOf(ZooKeeper zk, String leaderZnode, FailoverLoad load) {
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(10)).untilAsserted(() -> {
            LeaderRecord r = LeaderZnode.read(zk, leaderZnode);
            assertTrue(r != null && load.firstCommitOf(r.epoch()) > 0, "the new leader served commits: " + load);
        });
    }
}
