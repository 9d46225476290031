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
import java.util.Map;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Two so-server processes with {@code ha=true} on in-process ZooKeeper and 3 bookies: the leader is killed with
 * SIGKILL under load and the warm standby takes over by fencing.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class StandbyTakeoverTest {
    @RegisterExtension
    static final BookKeeperCluster cluster = BookKeeperCluster.perTestClass(3);

    /** Flags of an HA candidate whose znodes live under {@code /sibyl/test/<name>}. */
    static List<String> haFlags(BookKeeperCluster cluster, String name, String... more) {
        String zk = cluster.zkConnect();
        List<String> f = new ArrayList<>(List.of("--port=0", "--host=127.0.0.1", "--journal=bookkeeper", "--ha=true",
                "--journal.zk.connect=" + zk, "--journal.bk.metadata.uri=zk+null://" + zk + "/ledgers",
                "--journal.ledgers.znode=/sibyl/test/" + name + "/ledgers",
                "--journal.leader.znode=/sibyl/test/" + name + "/leader",
                "--journal.election.znode=/sibyl/test/" + name + "/election",
                "--conflict.table.rows=65536", "--recent.commits.capacity=65536",
                "--max.running.transactions=4096", "--push.interval.ms=20"));
        f.addAll(List.of(more));
        return f;
    }

    @Test
    void standbyTakesOverWhenLeaderIsKilled() throws Exception {
        String leaderZnode = "/sibyl/test/kill9/leader";
        JournalSettings s = cluster.settings("kill9-client");
        ZooKeeper zk = cluster.zooKeeper(s);
        try (OracleProcess first = new OracleProcess("first", haFlags(cluster, "kill9"))) {
            String firstOwner = first.owner(30_000);
            first.awaitReady(30_000);
            try (OracleProcess second = new OracleProcess("second", haFlags(cluster, "kill9"))) {
                String secondOwner = second.owner(30_000);
                LeaderRecord before = LeaderZnode.read(zk, leaderZnode);
                assertNotNull(before, "the first oracle announced itself");
                assertEquals(firstOwner, before.owner());

                long killedAt;
                FailoverLoad load = new FailoverLoad(zk, leaderZnode, 3, 0).start();
                try {
                    long warm = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                    while (load.acked.size() < 100 && System.nanoTime() < warm) {
                        Thread.sleep(10); // a busy machine is slow; the standby tails the journal meanwhile
                    }
                    assertTrue(load.acked.size() >= 100, "load before the kill: " + load);
                    killedAt = System.nanoTime();
                    first.process.destroyForcibly(); // SIGKILL with commits in flight
                    assertTrue(first.process.waitFor(10, TimeUnit.SECONDS));
                    assertEquals(137, first.process.exitValue(), "killed by SIGKILL");

                    // Generous: the standby must notice, fence and replay the tail, in a JVM that competes for the
                    // CPU with the bookies, ZooKeeper and the load (the time it took is printed below).
                    int port = second.awaitReady(60_000);
                    assertTrue(port > 0);
                    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                    LeaderRecord after = LeaderZnode.read(zk, leaderZnode);
                    while (System.nanoTime() < deadline && (after == null || load.firstCommitOf(after.epoch()) < 0)) {
                        Thread.sleep(10);
                        after = LeaderZnode.read(zk, leaderZnode);
                    }
                    assertNotNull(after, "the standby announced itself");
                    assertEquals(secondOwner, after.owner());
                    assertTrue(after.epoch() > before.epoch(), "new epoch " + after.epoch() + " > " + before.epoch());
                    assertEquals(port, after.port());
                    long firstCommit = load.firstCommitOf(after.epoch());
                    assertTrue(firstCommit > 0, "the new leader served commits: " + load);
                    System.out.printf("failover: kill -9 to first commit served by the new leader: %.1f ms%n",
                            (firstCommit - killedAt) / 1e6);
                    Thread.sleep(500);
                } finally {
                    load.close();
                }
                System.out.println("load across the failover: " + load);
                String took = second.awaitLine("took over as leader", 1000);
                System.out.println("standby: " + took);
                assertTrue(took.contains("epoch " + LeaderZnode.read(zk, leaderZnode).epoch()), took);
                assertTrue(load.repeated.isEmpty(), "timestamps handed out twice: " + load.repeated);

                // Every acknowledged commit, from either leader, is committed for the new one.
                try (RawOracleClient c = RawOracleClient.connect("127.0.0.1", LeaderZnode.read(zk, leaderZnode).port(),
                        5000)) {
                    for (Map.Entry<Long, Long> e : load.acked.entrySet()) {
                        RawOracleClient.Reply st = c.query(e.getKey());
                        assertTrue(st.value() == Wire.STATUS_COMMITTED || st.value() == Wire.STATUS_COMMITTED_LONG_AGO,
                                "acknowledged commit of " + e.getKey() + " is " + st);
                        if (st.value() == Wire.STATUS_COMMITTED) {
                            assertEquals(e.getValue().longValue(), st.commitTs(), "commit timestamp of " + e.getKey());
                        }
                    }
                }
                second.process.destroy(); // SIGTERM: clean shutdown, the leader znode goes with it
                assertTrue(second.process.waitFor(20, TimeUnit.SECONDS), "the new leader stops on SIGTERM");
                assertEquals(143, second.process.exitValue(), "a clean stop, not a fatal error");
                assertTrue(second.stderrLines("stops serving").isEmpty(), "no fatal error at shutdown");
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (LeaderZnode.read(zk, leaderZnode) != null && System.nanoTime() < deadline) {
                    Thread.sleep(10);
                }
                assertEquals(null, LeaderZnode.read(zk, leaderZnode), "no leader announced after a clean stop");
            }
        }
    }

    @Test
    void oracleWithoutHaAnnouncesItselfAndTheNextOneReplacesIt() throws Exception {
        String leaderZnode = "/sibyl/test/plain/leader";
        ZooKeeper zk = cluster.zooKeeper(cluster.settings("plain-client"));
        List<String> flags = new ArrayList<>(haFlags(cluster, "plain"));
        flags.remove("--ha=true");
        try (OracleProcess first = new OracleProcess("plain-first", flags)) {
            int firstPort = first.awaitReady(30_000);
            LeaderRecord one = LeaderZnode.read(zk, leaderZnode);
            assertNotNull(one, "an oracle on the BookKeeper journal announces itself once it serves");
            assertEquals(firstPort, one.port());
            assertEquals("127.0.0.1", one.host(), "advertised host defaults to the bind host");
            try (OracleProcess second = new OracleProcess("plain-second", flags)) {
                int secondPort = second.awaitReady(30_000);
                // The second recovered (fencing the first) and replaced the first one's record, whose session lives.
                LeaderRecord two = LeaderZnode.read(zk, leaderZnode);
                assertEquals(secondPort, two.port());
                assertTrue(two.epoch() > one.epoch());
                assertTrue(first.process.waitFor(30, TimeUnit.SECONDS), "the deposed oracle exits");
                assertEquals(1, first.process.exitValue());
                assertEquals(two, LeaderZnode.read(zk, leaderZnode), "the deposed oracle leaves the new record");
                second.process.destroy();
                assertTrue(second.process.waitFor(20, TimeUnit.SECONDS));
                assertEquals(143, second.process.exitValue(), "a clean stop, not a fatal error");
                assertTrue(second.stderrLines("stops serving").isEmpty(), "no fatal error at shutdown");
                assertNull(LeaderZnode.read(zk, leaderZnode), "the record goes with a clean shutdown");
            }
        }
    }
}
