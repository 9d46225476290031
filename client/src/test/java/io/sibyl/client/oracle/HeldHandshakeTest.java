package io.sibyl.client.oracle;

import io.sibyl.oracle.InMemoryJournal;
import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import io.sibyl.oracle.OracleState;
import io.sibyl.oracle.ServingLease;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.time.Duration;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A connection whose handshake an HA leader holds (its lease on its ZooKeeper session ended, so it answers nothing
 * that needs no journal write): the connecting thread waits in the handshake, and whatever ends that wait must leave
 * no channel or I/O thread behind.
 */
class HeldHandshakeTest {
    private static final OracleConfig CONFIG = OracleConfig.defaults().withPort(0).withCapacities(1 << 12, 1 << 10,
            1 << 10);

    @ParameterizedTest
    @EnumSource(OracleTransport.class)
    void aConnectInterruptedDuringAHeldHandshakeLeavesNoIoThreadBehind(OracleTransport transport) throws Exception {
        // A lease never confirmed: the leader holds every handshake, as a deposed one cut off from ZooKeeper does.
        try (OracleServer held = OracleServer.start(CONFIG, new InMemoryJournal(), new OracleState(CONFIG, 1_000,
                1_000, new long[0], new long[0], new long[0], List.of()), new ServingLease())) {
            Set<Thread> before = clientIoThreads();
            CompletableFuture<Throwable> ended = new CompletableFuture<>();
            Thread connecting = new Thread(() -> {
                try {
                    OracleClient c = OracleClient.connect("127.0.0.1", held.port(), 300_000,
                            OracleCredentials.newClient(), transport);
                    c.close();
                    ended.complete(null);
                } catch (Throwable e) {
                    ended.complete(e);
                }
            }, "connecting");
            connecting.start();
            await("the connect did not reach its handshake wait: " + connecting.getState())
                    .atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
                    .until(() -> !newThreads(before).isEmpty() && waitsForTheHello(connecting));
            Set<Thread> mine = newThreads(before);

            connecting.interrupt();
            Throwable e = ended.get(60, TimeUnit.SECONDS);
            assertInstanceOf(InterruptedException.class, e, "the held handshake was answered: " + e);
            await("the interrupted connect left its I/O thread running: " + mine)
                    .atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(20))
                    .until(() -> mine.stream().noneMatch(Thread::isAlive));
        }
    }

    /** The threads of the clients' connections: event loops, or pollers of the waiting-thread transport. */
    private static Set<Thread> clientIoThreads() {
        return Thread.getAllStackTraces().keySet().stream()
                .filter(t -> t.getName().startsWith("sibyl-oracle-client") || t.getName().equals("sibyl-oracle-poller"))
                .collect(Collectors.toSet());
    }

    private static boolean waitsForTheHello(Thread t) {
        return Arrays.stream(t.getStackTrace()).anyMatch(f -> f.getClassName().equals(Handshake.class.getName())
                && f.getMethodName().equals("await"));
    }

    private static Set<Thread> newThreads(Set<Thread> before) {
        Set<Thread> now = clientIoThreads();
        now.removeAll(before);
        return now;
    }
}
