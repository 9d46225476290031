package io.sibyl.client.oracle;

import io.netty.buffer.PooledByteBufAllocator;
import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import io.sibyl.protocol.Wire;
import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.InetSocketAddress;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An oracle with a thousand connected clients that stop reading after their handshake, and one that keeps
 * committing: every silent client falls more than max.lag.bytes behind the commit metadata and is closed, so the
 * memory the oracle holds for them stays bounded, and the working client commits throughout.
 */
class ThousandSilentClientsTest {
    private static final int SILENT = 1000;
    private static final long MAX_LAG_BYTES = 16 * 1024;

    @Test
    void silentClientsAreClosedAndMemoryStaysBoundedWhileTheWorkingClientCommits() throws Exception {
        OracleConfig config = OracleConfig.defaults().withPort(0).withCapacities(1 << 16, 1 << 14, 1 << 12)
                .withReplication(10, MAX_LAG_BYTES);
        List<Socket> silent = new ArrayList<>();
        try (OracleServer server = OracleServer.startInMemory(config)) {
            for (int i = 0; i < SILENT; i++) {
                Socket s = new Socket();
                s.setReceiveBufferSize(4096); // set before connecting: a small window, so lag builds at the oracle
                s.connect(new InetSocketAddress("127.0.0.1", server.port()), 10_000);
                s.setSoTimeout(10_000);
                handshake(s);
                silent.add(s);
            }
            assertEquals(SILENT, server.connections(), "every silent client is connected");
            long directBefore = PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory();
            long directPeak = directBefore;
            AtomicLong committed = new AtomicLong();
            AtomicLong failed = new AtomicLong();
            try (OracleClient worker = OracleClient.connect("127.0.0.1", server.port(), 10_000)) {
                Semaphore window = new Semaphore(64);
                long row = 0;
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
                while (server.connections() > 1 && System.nanoTime() < deadline) {
                    for (int i = 0; i < 2_000; i++) {
                        window.acquire();
                        long r = row++;
                        CompletableFuture<Long> done = worker.begin()
                                .thenCompose(ts -> worker.commit(ts, new long[] {r}));
                        done.whenComplete((c, e) -> {
                            (e == null ? committed : failed).incrementAndGet();
                            window.release();
                        });
                    }
                    directPeak = Math.max(directPeak, PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory());
                }
                window.acquire(64);
                assertEquals(1, server.connections(), "every silent client was closed; the worker's stays open");
                assertEquals(0, failed.get(), "the working client's transactions all committed");
                assertTrue(committed.get() > 0);
                // What a silent client may cost is bounded by max.lag.bytes plus a block: without the bound the
                // oracle would have buffered every commit's metadata a thousand times over.
                long bound = SILENT * (MAX_LAG_BYTES + 64 * 1024);
                assertTrue(directPeak - directBefore < bound, "direct memory grew by " + (directPeak - directBefore)
                        + " bytes with " + SILENT + " silent clients, more than " + bound);
            }
        } finally {
            for (Socket s : silent) {
                s.close();
            }
        }
    }

    private static void handshake(Socket s) throws Exception {
        DataOutputStream out = new DataOutputStream(s.getOutputStream());
        out.writeInt(6);
        out.writeInt(Wire.MAGIC);
        out.writeShort(Wire.VERSION);
        out.flush();
        DataInputStream in = new DataInputStream(s.getInputStream());
        int len = in.readInt();
        in.readFully(new byte[len]); // HELLO: from now on this client reads nothing
    }
}
