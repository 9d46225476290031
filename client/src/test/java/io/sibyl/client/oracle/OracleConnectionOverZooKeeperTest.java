package io.sibyl.client.oracle;

import io.sibyl.oracle.InMemoryJournal;
import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import io.sibyl.oracle.OracleState;
import io.sibyl.oracle.ha.LeaderZnode;
import io.sibyl.oracle.journal.BookKeeperCluster;
import io.sibyl.protocol.LeaderRecord;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Consumer;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An {@link OracleConnection} that finds its oracle through a real {@link ZooKeeperOracleLocator} (in-process
 * ZooKeeper, in-process oracles): closing it while a failover waits for a leader, and a leader change announced while
 * a failover connects to the leader before.
 */
class OracleConnectionOverZooKeeperTest {
    private static final OracleConfig CONFIG = OracleConfig.defaults().withPort(0).withCapacities(1 << 12, 1 << 10,
            1 << 10);

    @RegisterExtension
    static final BookKeeperCluster cluster = BookKeeperCluster.perTestClass(1);

    /**
     * A failover finds no leader (the old one is gone and none has published itself yet), so it waits in the locator
     * for up to the failover timeout. Closing the connection (as {@code TransactionManager.close} does) used to wait
     * for that failover to give up, holding the closing thread (and, in a region server, the garbage collector's
     * timer) for the whole timeout.
     */
    @Test
    void closingDuringAFailoverThatFindsNoLeaderDoesNotWaitOutTheFailoverTimeout() throws Exception {
        String path = "/sibyl/test/connection/close";
        ZooKeeper zk = cluster.zooKeeper(cluster.settings("connection-close"));
        OracleServer oracle = OracleServer.startInMemory(CONFIG);
        try {
            LeaderZnode.publish(zk, path, new LeaderRecord(1, "127.0.0.1", oracle.port(), "only"));
            ZooKeeperOracleLocator locator = new ZooKeeperOracleLocator(cluster.zkConnect(), path, 30_000);
            OracleConnection connection = OracleConnection.open(locator, 300_000);
            zk.delete(path, -1);
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(10)).untilAsserted(() -> assertTrue(
                    locator.describe().contains("no oracle has published itself"), locator::describe));
            oracle.close();
            OracleClient lost = connection.lastConnected();
            await("the client noticing the oracle had gone").atMost(Duration.ofSeconds(30))
                    .pollInterval(Duration.ofMillis(10)).until(() -> !lost.isOpen());

            CompletableFuture<OracleClient> failover = new CompletableFuture<>();
            Thread failing = new Thread(() -> {
                try {
                    failover.complete(connection.current());
                } catch (Throwable e) {
                    failover.completeExceptionally(e);
                }
            }, "failover");
            failing.start();
            // Waiting in the locator for a leader to be published.
            await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(10)).untilAsserted(
                    () -> assertEquals(Thread.State.TIMED_WAITING, failing.getState(), "failover thread"));

            CompletableFuture<Void> closed = CompletableFuture.runAsync(connection::close);
            closed.get(60, TimeUnit.SECONDS); // before: about 300 s, the failover timeout
            Throwable e = assertThrowsWithin(failover);
            assertInstanceOf(OracleUnavailableException.class, e);
            // Not "no status oracle answered within 300000 ms": it gave up because it was closed, long before that.
            assertTrue(e.getMessage().contains("was closed"), e.getMessage());
        } finally {
            oracle.close();
        }
    }

    /**
     * A failover reads leader A from the locator and connects to it; meanwhile B takes over and the locator tells the
     * connection, which at that moment still holds the lost client, so the announcement found nothing to close. The
     * failover then kept A, a deposed leader, although the locator already named B. It now follows B.
     */
    @Test
    void aLeaderChangeAnnouncedWhileAFailoverConnectsIsFollowed() throws Exception {
        String path = "/sibyl/test/connection/race";
        ZooKeeper zk = cluster.zooKeeper(cluster.settings("connection-race"));
        try (OracleServer a = OracleServer.startInMemory(CONFIG);
             OracleServer b = OracleServer.start(CONFIG, new InMemoryJournal(), new OracleState(CONFIG, 1_000_000,
                     1_000_000, new long[0], new long[0], new long[0], List.of()))) {
            LeaderZnode.publish(zk, path, new LeaderRecord(1, "127.0.0.1", a.port(), "a"));
            ZooKeeperOracleLocator locator = new ZooKeeperOracleLocator(cluster.zkConnect(), path, 30_000);
            CountDownLatch announced = new CountDownLatch(1);
            LeaderChangeDuringLookup racing = new LeaderChangeDuringLookup(locator, () -> {
                LeaderZnode.publish(zk, path, new LeaderRecord(2, "127.0.0.1", b.port(), "b"));
                assertTrue(announced.await(30, TimeUnit.SECONDS), "the locator announced epoch 2");
            });
            try (OracleConnection connection = OracleConnection.open(racing, 30_000)) {
                assertEquals(a.port(), port(connection.current()));
                locator.onLeaderChange(r -> announced.countDown()); // runs after the connection's own listener
                connection.lastConnected().close(); // the connection to A is lost
                racing.armed = true;
                OracleClient now = connection.current();
                assertEquals(b.port(), port(now), "followed the leader the locator names: " + locator.describe());
            }
        }
    }

    /** Delegates to a real locator; once armed, its next lookup lets a new leader be announced before it answers. */
    private static final class LeaderChangeDuringLookup implements OracleLocator {
        private final OracleLocator delegate;
        private final ThrowingRunnable announceNewLeader;
        volatile boolean armed;

        LeaderChangeDuringLookup(OracleLocator delegate, ThrowingRunnable announceNewLeader) {
            this.delegate = delegate;
            this.announceNewLeader = announceNewLeader;
        }

        @Override
        public LeaderRecord leader(long waitMillis) throws InterruptedException {
            LeaderRecord r = delegate.leader(waitMillis);
            if (armed) {
                armed = false;
                try {
                    announceNewLeader.run();
                } catch (InterruptedException e) {
                    throw e;
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            }
            return r;
        }

        @Override
        public void onLeaderChange(Consumer<LeaderRecord> listener) {
            delegate.onLeaderChange(listener);
        }

        @Override
        public String describe() {
            return delegate.describe();
        }

        @Override
        public void close() {
            delegate.close();
        }
    }

    private interface ThrowingRunnable {
        void run() throws Exception;
    }

    private static int port(OracleClient c) {
        String address = c.address();
        return Integer.parseInt(address.substring(address.lastIndexOf(':') + 1));
    }

    private static Throwable assertThrowsWithin(CompletableFuture<?> f) throws InterruptedException {
        try {
            f.get(60, TimeUnit.SECONDS);
        } catch (ExecutionException e) {
            return e.getCause();
        } catch (TimeoutException e) {
            throw new AssertionError("the failover did not end after the close");
        }
        throw new AssertionError("the failover connected after the close");
    }
}
