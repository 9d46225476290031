package io.sibyl.client.oracle;

import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleExtension;
import io.sibyl.oracle.OracleServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@link OracleTransport#WAITING_THREAD} against a real oracle: the thread that waits reads its own reply, threads
 * waiting together take turns reading, replies nobody waits for and the oracle's pushes still arrive, and neither an
 * interrupt, a callback that waits nor the oracle's close leaves a thread hanging; a {@code FINISH} left for the
 * next request still leaves when none comes.
 */
class WaitingThreadTransportTest {
    private static final long FIVE_SECONDS = TimeUnit.SECONDS.toNanos(5);

    @RegisterExtension
    static final OracleExtension oracle = OracleExtension.withSettings(c -> c
            .withCapacities(1 << 16, 1 << 14, 1 << 12)
            .withReplication(20, 1 << 20));

    private static OracleClient connect() throws InterruptedException {
        return OracleClient.connect("127.0.0.1", oracle.port(), 10_000, OracleCredentials.newClient(),
                OracleTransport.WAITING_THREAD);
    }

    @Test
    void theThreadThatWaitsReadsItsOwnReply() throws Exception {
        try (OracleClient client = connect()) {
            for (int i = 0; i < 20; i++) {
                Thread completedOn = client.await(client.begin().thenApply(ts -> Thread.currentThread()),
                        FIVE_SECONDS);
                assertSame(Thread.currentThread(), completedOn, "the reply was read by " + completedOn.getName());
            }
        }
    }

    @Test
    void aReplyNobodyWaitsForIsReadByThePoller() throws Exception {
        try (OracleClient client = connect()) {
            CompletableFuture<String> readBy = client.begin().thenApply(ts -> Thread.currentThread().getName());
            assertEquals("sibyl-oracle-poller", readBy.get(5, TimeUnit.SECONDS));
            long start = client.begin().get(5, TimeUnit.SECONDS);
            long row = RowIds.of("waiting-thread", new byte[] {1});
            assertTrue(client.commit(start, new long[] {row}).get(5, TimeUnit.SECONDS) > start);
        }
    }

    @Test
    void eightThreadsWaitingOnOneConnectionEachGetTheirOwnReplies() throws Exception {
        int threads = 8;
        int perThread = 400;
        try (OracleClient client = connect()) {
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                List<Future<long[]>> results = new ArrayList<>();
                for (int t = 0; t < threads; t++) {
                    int thread = t;
                    results.add(pool.submit(() -> {
                        long[] got = new long[perThread * 2];
                        for (int i = 0; i < perThread; i++) {
                            long start = client.await(client.begin(), FIVE_SECONDS);
                            long row = RowIds.of("waiting-thread-" + thread, new byte[] {(byte) i});
                            long commit = client.await(client.commit(start, new long[] {row}), FIVE_SECONDS);
                            assertTrue(commit > start, "commit " + commit + " not after its start " + start);
                            got[2 * i] = start;
                            got[2 * i + 1] = commit;
                        }
                        return got;
                    }));
                }
                Set<Long> all = new HashSet<>();
                for (Future<long[]> f : results) {
                    long[] got = f.get(60, TimeUnit.SECONDS);
                    for (int i = 0; i < got.length; i++) {
                        assertTrue(all.add(got[i]), "timestamp handed out twice: " + got[i]);
                        if (i > 0) {
                            assertTrue(got[i] > got[i - 1], "a thread's later request got an older timestamp");
                        }
                    }
                }
                assertEquals(threads * perThread * 2, all.size());
                assertTrue(client.isOpen());
            } finally {
                pool.shutdownNow();
            }
        }
    }

    @Test
    void anInterruptedWaiterStopsWaitingAndTheConnectionKeepsWorking() throws Exception {
        try (OracleClient client = connect()) {
            CompletableFuture<Long> abandoned = client.begin();
            Thread.currentThread().interrupt();
            assertThrows(InterruptedException.class, () -> client.await(abandoned, FIVE_SECONDS));
            assertFalse(Thread.currentThread().isInterrupted(), "like Future.get, the interrupt is consumed");
            long next = client.await(client.begin(), FIVE_SECONDS);
            assertTrue(next > abandoned.get(5, TimeUnit.SECONDS), "the abandoned begin is answered all the same");
        }
    }

    @Test
    void aCallbackThatWaitsForAnotherReplyFailsInsteadOfHanging() throws Exception {
        try (OracleClient client = connect()) {
            CompletableFuture<Long> nested = client.begin().thenApply(ts -> {
                try {
                    return client.await(client.begin(), FIVE_SECONDS);
                } catch (Exception e) {
                    throw new CompletionException(e);
                }
            });
            ExecutionException e = assertThrows(ExecutionException.class, () -> client.await(nested, FIVE_SECONDS));
            IllegalStateException why = assertInstanceOf(IllegalStateException.class, e.getCause());
            assertTrue(why.getMessage().contains("thenCompose"), why.getMessage());
            assertTrue(client.isOpen());
            client.await(client.begin(), FIVE_SECONDS);
        }
    }

    @Test
    void aFinishLeftForTheNextRequestIsSentByThePollerWhenNoneComes() throws Exception {
        // An oracle of this test's own: no other test's transaction holds its low watermark.
        OracleServer own = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(1 << 16, 1 << 14, 1 << 12));
        try (own; OracleClient client = OracleClient.connect("127.0.0.1", own.port(), 10_000,
                OracleCredentials.newClient(), OracleTransport.WAITING_THREAD);
             OracleClient collector = OracleClient.connect("127.0.0.1", own.port())) {
            long reader = client.await(client.begin(), FIVE_SECONDS);
            assertTrue(collector.lowWatermark().get(5, TimeUnit.SECONDS) <= reader);
            client.finish(reader); // no request follows it on this connection
            await("the low watermark passing the finished reader " + reader).atMost(Duration.ofSeconds(5))
                    .pollInterval(Duration.ofMillis(5))
                    .until(() -> collector.lowWatermark().get(5, TimeUnit.SECONDS), now -> now > reader);
        }
    }

    @Test
    void anIdleClientsReplicaLearnsOtherClientsCommitsFromThePushes() throws Exception {
        try (OracleClient idle = connect();
             OracleClient writer = connect()) {
            long start = writer.await(writer.begin(), FIVE_SECONDS);
            long commit = writer.await(writer.commit(start, new long[] {RowIds.of("pushed", new byte[] {1})}),
                    FIVE_SECONDS);
            await("the idle client's replica applying commit " + commit).atMost(Duration.ofSeconds(10))
                    .until(() -> idle.replica().highestTimestampApplied() >= commit);
        }
    }

    @Test
    void anIdleClientNoticesTheOracleClosingTheConnection() throws Exception {
        // An oracle of this test's own: the class's shared one must outlive it.
        OracleServer own = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(1 << 16, 1 << 14, 1 << 12));
        try (own; OracleClient client = OracleClient.connect("127.0.0.1", own.port(), 10_000,
                OracleCredentials.newClient(), OracleTransport.WAITING_THREAD)) {
            client.await(client.begin(), FIVE_SECONDS);
            own.close();
            await("the idle client noticing the close").atMost(Duration.ofSeconds(10)).until(() -> !client.isOpen());
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> client.await(client.begin(), FIVE_SECONDS));
            assertInstanceOf(OracleUnavailableException.class, e.getCause());
        }
    }
}
