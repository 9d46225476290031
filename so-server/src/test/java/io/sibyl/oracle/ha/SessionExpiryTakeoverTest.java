package io.sibyl.oracle.ha;

import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import io.sibyl.oracle.journal.BookKeeperCluster;
import io.sibyl.oracle.journal.JournalClients;
import io.sibyl.oracle.journal.JournalSettings;
import io.sibyl.protocol.LeaderRecord;
import io.sibyl.protocol.Wire;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A live leader (not killed, not frozen) whose ZooKeeper session expires: the session held its election znode, its
 * registry ownership and its leader znode, so it must stop serving at once through {@link OracleServer#fatalError}
 * rather than keep deciding while a standby fences it. The hot standby, in the same JVM, sees the candidate znode go
 * with the session and takes over; the client finds it through the leader znode and its commits continue there.
 * The journal alone is tested for the same expiry in {@code BookKeeperJournalTest}; this is the whole HA pair.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class SessionExpiryTakeoverTest {
    @RegisterExtension
    static final BookKeeperCluster cluster = BookKeeperCluster.perTestClass(3);

    private final Map<Long, Long> committed = new LinkedHashMap<>(); // start -> commit timestamp
    private final RisingTimestamps timestamps = new RisingTimestamps();

    static OracleConfig config(JournalSettings s) {
        OracleConfig d = OracleConfig.defaults();
        // Small tables: the default ones (millions of rows) cost two leaders in one test JVM memory and start-up time.
        return new OracleConfig("127.0.0.1", 0, 1, 65536, 65536, 4096, d.maxWriteSetRows(), d.maxFrameBytes(),
                d.timestampReservationBlock(), d.maxBlockRecords(), d.pushIntervalMillis(), d.maxLagBytes(),
                d.readerGraceMillis(), 0, d.inlineSequencer(), OracleConfig.JournalKind.BOOKKEEPER, s,
                new HaSettings(true, "127.0.0.1", 2), 0, d.handshakeTimeoutMillis(), d.maxConnections(),
                d.maxRunningTransactionsPerConnection(), "", 1 << 17,
                io.sibyl.protocol.TlsSettings.disabled("tls."), "", 600_000, OracleConfig.METRICS_OFF,
                io.sibyl.oracle.RangeSweepSettings.defaults(),
                io.sibyl.oracle.IdentitySettings.defaults(), io.sibyl.oracle.HistorySettings.defaults());
    }

    @Test
    void leaderWhoseZooKeeperSessionExpiresStopsAtOnceAndTheHotStandbyTakesOver() throws Exception {
        JournalSettings s = cluster.settings("expiry")
                .withLeaderZnodes("/sibyl/test/expiry/leader", "/sibyl/test/expiry/election");
        ZooKeeper zk = cluster.zooKeeper(s);
        List<OracleCandidate> candidates = new ArrayList<>();
        List<OracleServer> servers = new ArrayList<>();
        try {
            OracleCandidate a1 = OracleCandidate.join(config(s), "a/" + JournalClients.ownerName());
            candidates.add(a1);
            OracleServer a = ElectionChainTest.lead(a1).get(30, TimeUnit.SECONDS);
            servers.add(a);
            LeaderRecord before = LeaderZnode.read(zk, s.leaderZnode());
            assertNotNull(before, "the first leader announced itself");
            assertEquals(a1.owner(), before.owner());

            OracleCandidate b1 = OracleCandidate.join(config(s), "b/" + JournalClients.ownerName());
            candidates.add(b1);
            CompletableFuture<OracleServer> bLeads = ElectionChainTest.lead(b1);

            // Registered before the expiry: the listener must be told by the fatal path itself, not found afterwards.
            AtomicReference<String> reason = new AtomicReference<>();
            CountDownLatch told = new CountDownLatch(1);
            a.onFatalError((why, cause) -> {
                reason.compareAndSet(null, why);
                told.countDown();
            });

            RawOracleClient onA = RawOracleClient.connect("127.0.0.1", a.port(), 5000);
            commit(onA, 30);
            long runningAtExpiry = timestamps.begin(onA);
            assertFalse(bLeads.isDone(), "the standby stands by while the leader is alive");

            expireSession(a1.zooKeeperSessionId(), a1.zooKeeperSessionPassword(), s.zkSessionTimeoutMs());

            // Generous deadline: the expiry reaches the victim only when its client reconnects and is refused, on a
            // machine busy with the bookies, ZooKeeper and maybe another build.
            assertTrue(told.await(30, TimeUnit.SECONDS), "the old leader's fatal-error listener fired");
            String why = reason.get();
            assertTrue(why.contains("ZooKeeper") || why.contains("session"), "reason names the session: " + why);
            assertEquals(why, a.failure());

            // The old leader answers nothing more: not on the client's open connection...
            // (the fatal path closed every connection before it told the listeners, so the first request fails)
            assertThrows(IOException.class, () -> timestamps.begin(onA),
                    "the old leader's open connection answers no request");
            onA.close();

            OracleServer b = bLeads.get(30, TimeUnit.SECONDS);
            servers.add(b);
            // ... nor on a new one (polled: the listening socket's close may complete on an event-loop thread).
            if (a.port() != b.port()) {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (answers(a.port()) && System.nanoTime() < deadline) {
                    Thread.sleep(50);
                }
                assertFalse(answers(a.port()), "the old leader's port answers no new connection");
            }

            LeaderRecord after = LeaderZnode.read(zk, s.leaderZnode());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while ((after == null || after.epoch() <= before.epoch()) && System.nanoTime() < deadline) {
                Thread.sleep(50); // the announcement may trail the server's start by a ZooKeeper write
                after = LeaderZnode.read(zk, s.leaderZnode());
            }
            assertNotNull(after, "the standby announced itself");
            assertTrue(after.epoch() > before.epoch(), "new epoch " + after.epoch() + " > " + before.epoch());
            assertEquals(b1.owner(), after.owner());
            assertEquals(b.port(), after.port());
            assertTrue(b1.summary().contains("epoch " + after.epoch()), b1.summary());
            assertTrue(b.failure() == null, "the new leader serves: " + b.failure());

            // The client, following the leader znode, carries on: its old commits stand, the transaction it left
            // running is aborted, and new commits get timestamps above all the old leader handed out.
            try (RawOracleClient onB = RawOracleClient.connect(after.host(), after.port(), 5000)) {
                for (Map.Entry<Long, Long> e : committed.entrySet()) {
                    RawOracleClient.Reply st = onB.query(e.getKey());
                    assertTrue(st.value() == Wire.STATUS_COMMITTED_LONG_AGO
                                    || (st.value() == Wire.STATUS_COMMITTED && st.commitTs() == e.getValue()),
                            "acknowledged commit " + e.getKey() + " -> " + e.getValue() + " reads " + st);
                }
                assertEquals(Wire.STATUS_ABORTED, onB.query(runningAtExpiry).value(), "running at the expiry");
                long highestOnOld = timestamps.highest();
                commit(onB, 10);
                assertTrue(timestamps.highest() > highestOnOld, "the new leader committed");
            }
        } finally {
            for (OracleCandidate c : candidates) {
                c.close();
            }
            for (OracleServer srv : servers) {
                srv.close();
            }
        }
    }

    /**
     * Expires a session the classic way: a second client joins it with its id and password, then closes it. The
     * twin must really be connected first, or its close ends nothing.
     */
    private static void expireSession(long id, byte[] password, int timeoutMs) throws Exception {
        ZooKeeper twin = new ZooKeeper(cluster.zkConnect(), timeoutMs, e -> { }, id, password);
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!twin.getState().isConnected() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertTrue(twin.getState().isConnected(), "the twin joined the leader's session: " + twin.getState());
        twin.close();
    }

    /** Whether an oracle on {@code port} answers a begin on a new connection. */
    private static boolean answers(int port) {
        try (RawOracleClient c = RawOracleClient.connect("127.0.0.1", port, 2000)) {
            c.begin();
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /** Transactions on distinct rows, each committed; every timestamp must exceed all handed out before. */
    private void commit(RawOracleClient c, int n) throws IOException {
        for (int i = 0; i < n; i++) {
            long start = timestamps.begin(c);
            RawOracleClient.Reply r = c.commit(start, start);
            assertEquals(Wire.COMMITTED, r.type(), "commit of " + start);
            timestamps.committedAt(r.commitTs());
            committed.put(start, r.commitTs());
        }
    }
}
