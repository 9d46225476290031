package io.sibyl.oracle;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sibyl.oracle.OracleSurvivesRandomFramesTest.Msg;
import io.sibyl.oracle.OracleSurvivesRandomFramesTest.WireSocket;
import io.sibyl.protocol.Varints;
import io.sibyl.protocol.Wire;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The attack: connections that drop while holding transactions grow the aborted set, and then many connects each
 * made the sequencer sort and send the whole set (295,000 entries and 4,200 connects stopped every commit for about
 * seven minutes). Now a HELLO copies an image encoded once, and commits go on through the storm.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class HandshakeStormTest {
    private static final int LOST_TRANSACTIONS = 100_000;
    private static final int CONNECTS = 1_000;

    @Test
    void commitsContinueWhileAThousandClientsHandshakeAgainstALargeAbortedSet() throws Exception {
        try (OracleServer server = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(1 << 16, 1 << 14, 1 << 18).withMaxAbortedTransactions(1 << 18))) {
            fillAbortedSet(server.port());
            assertEquals(LOST_TRANSACTIONS, server.stats().abortedSet());
            AtomicBoolean storming = new AtomicBoolean(true);
            AtomicLong longestCommitNanos = new AtomicLong();
            ExecutorService pool = Executors.newFixedThreadPool(5);
            try (WireSocket committer = WireSocket.connect(server.port())) {
                committer.handshake(Wire.VERSION);
                Future<Integer> commits = pool.submit(() -> {
                    int n = 0;
                    for (long id = 1; storming.get(); id += 2) {
                        long t0 = System.nanoTime();
                        committer.send(ForeignTransactionRequestsTest.request(Wire.BEGIN, id));
                        long start = committer.expectReply(id).value();
                        ByteBuf commit = ForeignTransactionRequestsTest.request(Wire.COMMIT, id + 1, start, 1);
                        commit.writeLong(id);
                        committer.send(commit);
                        assertEquals(Wire.COMMITTED, committer.expectReply(id + 1).type());
                        longestCommitNanos.accumulateAndGet(System.nanoTime() - t0, Math::max);
                        n++;
                    }
                    return n;
                });
                List<Future<Long>> storm = new ArrayList<>();
                for (int t = 0; t < 4; t++) {
                    storm.add(pool.submit(() -> {
                        // All at once, as a fleet restarting does: every HELLO is pending on the sequencer together.
                        List<WireSocket> sockets = new ArrayList<>();
                        long t0 = System.nanoTime();
                        try {
                            for (int i = 0; i < CONNECTS / 4; i++) {
                                WireSocket s = WireSocket.connect(server.port());
                                sockets.add(s);
                                s.sendHandshake(Wire.VERSION);
                            }
                            for (WireSocket s : sockets) {
                                s.awaitHello();
                            }
                            return System.nanoTime() - t0;
                        } finally {
                            for (WireSocket s : sockets) {
                                s.close();
                            }
                        }
                    }));
                }
                long longestHello = 0;
                for (Future<Long> f : storm) {
                    longestHello = Math.max(longestHello, f.get());
                }
                storming.set(false);
                int committed = commits.get();
                System.out.printf("%d handshakes with %d aborted: all answered in %d ms; %d commits meanwhile, longest %d ms%n",
                        CONNECTS, LOST_TRANSACTIONS, longestHello / 1_000_000, committed,
                        longestCommitNanos.get() / 1_000_000);
                assertTrue(committed > 0, "no commit during the storm");
                // Before: 1,000 sorts of 100,000 entries held the sequencer (and every commit) for many seconds.
                assertTrue(longestCommitNanos.get() < TimeUnit.SECONDS.toNanos(3),
                        "a commit waited " + longestCommitNanos.get() / 1_000_000 + " ms during the storm");
                assertTrue(longestHello < TimeUnit.SECONDS.toNanos(3),
                        "the storm's handshakes took " + longestHello / 1_000_000 + " ms");
            } finally {
                pool.shutdownNow();
            }
        }
    }

    /** A client begins {@link #LOST_TRANSACTIONS} transactions and vanishes: all of them join the aborted set. */
    private static void fillAbortedSet(int port) throws Exception {
        try (WireSocket lost = WireSocket.connect(port)) {
            lost.handshake(Wire.VERSION);
            int perFrame = 10_000;
            for (int sent = 0; sent < LOST_TRANSACTIONS; sent += perFrame) {
                ByteBuf frame = Unpooled.buffer();
                for (int i = 1; i <= perFrame; i++) {
                    frame.writeByte(Wire.BEGIN);
                    Varints.writeUnsigned(frame, sent + i);
                }
                lost.send(frame);
            }
            int started = 0;
            while (started < LOST_TRANSACTIONS) {
                for (Msg m : lost.readFrameForTest()) {
                    started += m.type() == Wire.STARTED ? 1 : 0;
                }
            }
        }
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (System.nanoTime() < deadline) {
            Thread.sleep(20);
            try (WireSocket probe = WireSocket.connect(port)) {
                probe.handshake(Wire.VERSION);
                probe.send(ForeignTransactionRequestsTest.request(Wire.QUERY, 1, LOST_TRANSACTIONS));
                if (probe.expectReply(1).value() == Wire.STATUS_ABORTED) {
                    return;
                }
            }
        }
    }
}
