package io.sibyl.oracle.ha;

import io.sibyl.oracle.journal.BookKeeperCluster;
import io.sibyl.oracle.journal.JournalSettings;
import io.sibyl.protocol.LeaderRecord;
import io.sibyl.protocol.Wire;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.net.SocketTimeoutException;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A leader frozen with SIGSTOP keeps its TCP connections, so the standby only replaces it once its ZooKeeper session
 * expires; resumed with SIGCONT, the deposed leader must decide and hand out nothing more: a begin a client sent it
 * while it was frozen gets no start timestamp (its lease on the leadership ended while it was frozen, so it holds the
 * begin, then closes the connection as it stops), a new connection gets none either, the commit is not acknowledged,
 * and the process exits.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class DeposedLeaderTest {
    @RegisterExtension
    static final BookKeeperCluster cluster = BookKeeperCluster.perTestClass(3);

    @Test
    void frozenLeaderHandsOutNoTimestampAndCommitsNothingAfterStandbyTakesOver() throws Exception {
        String leaderZnode = "/sibyl/test/frozen/leader";
        JournalSettings s = cluster.settings("frozen-client");
        ZooKeeper zk = cluster.zooKeeper(s);
        // The smallest session the test ZooKeeper grants: the frozen leader is replaced a few seconds after SIGSTOP.
        String session = "--journal.zk.session.timeout.ms=2000";
        List<String> flags = StandbyTakeoverTest.haFlags(cluster, "frozen", session);
        try (OracleProcess first = new OracleProcess("first", flags)) {
            int firstPort = first.awaitReady(30_000); // elected first: the standby starts only now
            try (OracleProcess second = new OracleProcess("second", flags)) {
                second.owner(30_000);
                LeaderRecord before = LeaderZnode.read(zk, leaderZnode);
                assertNotNull(before);
                assertEquals(firstPort, before.port());

                try (RawOracleClient old = RawOracleClient.connect("127.0.0.1", firstPort, 30_000)) {
                    long committedBefore = old.begin();
                    assertEquals(Wire.COMMITTED, old.commit(committedBefore, 1, 2).type());
                    long running = old.begin(); // still running when the leader is deposed

                    first.signal("STOP");
                    long frozenAt = System.nanoTime();
                    int newPort = second.awaitReady(60_000);
                    System.out.printf("standby took over %.1f s after SIGSTOP of the leader%n",
                            (System.nanoTime() - frozenAt) / 1e9);
                    LeaderRecord after = LeaderZnode.read(zk, leaderZnode);
                    assertNotNull(after);
                    assertTrue(after.epoch() > before.epoch(), "epoch " + after.epoch() + " > " + before.epoch());
                    assertEquals(newPort, after.port());

                    long newStart;
                    try (RawOracleClient fresh = RawOracleClient.connect("127.0.0.1", newPort, 5000)) {
                        newStart = fresh.begin();
                        assertEquals(Wire.COMMITTED, fresh.commit(newStart, 1, 2, 3).type());
                    }

                    // Sent while the old leader is frozen: it reads it once resumed, with its timestamp block still
                    // reserved but its lease over, so it must hold the begin until it stops (closing the connection).
                    long heldBegin = old.sendBegin();
                    first.signal("CONT");
                    try {
                        long ts = old.awaitStarted(heldBegin);
                        fail("the deposed leader handed out start timestamp " + ts + " after the takeover");
                    } catch (SocketTimeoutException e) {
                        fail("the deposed leader neither answered the begin nor closed the connection: " + e);
                    } catch (IOException expected) {
                        System.out.println("begin held by the deposed leader, then: " + expected);
                    }
                    try (RawOracleClient late = RawOracleClient.connect("127.0.0.1", firstPort, 10_000)) {
                        fail("the deposed leader handed out start timestamp " + late.begin() + " to a new connection");
                    } catch (IOException expected) {
                        System.out.println("new connection to the deposed leader: " + expected);
                    }
                    try {
                        RawOracleClient.Reply r = old.commit(running, 4, 5);
                        fail("the deposed leader answered a commit after the takeover: " + r);
                    } catch (IOException expected) {
                        System.out.println("deposed leader's client: " + expected);
                    }
                    assertTrue(first.process.waitFor(30, TimeUnit.SECONDS), "the deposed leader exits");
                    assertEquals(1, first.process.exitValue(), "fatal error exit status");
                    System.out.println("deposed leader: " + first.stderrLines("stops serving"));

                    try (RawOracleClient fresh = RawOracleClient.connect("127.0.0.1", newPort, 5000)) {
                        assertEquals(Wire.STATUS_ABORTED, fresh.query(running).value(),
                                "the transaction running on the deposed leader is aborted");
                        RawOracleClient.Reply committed = fresh.query(committedBefore);
                        assertTrue(committed.value() == Wire.STATUS_COMMITTED
                                || committed.value() == Wire.STATUS_COMMITTED_LONG_AGO, "" + committed);
                        assertTrue(newStart > running, "timestamps keep rising across the takeover");
                    }
                    assertEquals(after, LeaderZnode.read(zk, leaderZnode), "the new leader stays announced");
                }
            }
        }
    }
}
