package io.sibyl.client.oracle;

import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class OracleClientLoopbackTest {
    private static OracleServer server;

    @BeforeAll
    static void startOracle() throws Exception {
        server = OracleServer.startInMemory(OracleConfig.defaults().withPort(0).withCapacities(1 << 16, 1 << 14, 1 << 12)
                .withReplication(50, 1 << 20));
    }

    @AfterAll
    static void stopOracle() {
        server.close();
    }

    @Test
    void firstCommitterWinsOverRealSockets() throws Exception {
        try (OracleClient a = OracleClient.connect("127.0.0.1", server.port());
             OracleClient b = OracleClient.connect("127.0.0.1", server.port())) {
            long t1 = a.begin().get(5, TimeUnit.SECONDS);
            long t2 = b.begin().get(5, TimeUnit.SECONDS);
            long row = RowIds.of("t", new byte[] {1});
            long c1 = a.commit(t1, new long[] {row}).get(5, TimeUnit.SECONDS);
            assertTrue(c1 > t2);
            ExecutionException e = assertThrows(ExecutionException.class,
                    () -> b.commit(t2, new long[] {row}).get(5, TimeUnit.SECONDS));
            TransactionAbortedException abort = assertInstanceOf(TransactionAbortedException.class, e.getCause());
            assertEquals(TransactionAbortedException.Reason.CONFLICT, abort.reason());
            long t3 = b.begin().get(5, TimeUnit.SECONDS);
            assertTrue(b.inSnapshot(t1, t3).get(5, TimeUnit.SECONDS), "t1 committed before t3 started");
            assertFalse(b.inSnapshot(t2, t3).get(5, TimeUnit.SECONDS), "t2 aborted");
            assertTrue(b.replica().isAborted(t2));
        }
    }

    @Test
    void lowWatermarkStaysAtARunningReaderUntilItFinishes() throws Exception {
        try (OracleClient app = OracleClient.connect("127.0.0.1", server.port());
             OracleClient collector = OracleClient.connect("127.0.0.1", server.port())) {
            long reader = app.begin().get(5, TimeUnit.SECONDS);
            long writer = app.begin().get(5, TimeUnit.SECONDS);
            app.commit(writer, new long[] {RowIds.of("t", new byte[] {2})}).get(5, TimeUnit.SECONDS);
            long held = collector.lowWatermark().get(5, TimeUnit.SECONDS);
            assertTrue(held <= reader, "other tests' transactions may hold it lower, never higher: " + held);
            app.finish(reader);
            long deadline = System.nanoTime() + 5_000_000_000L;
            long now = collector.lowWatermark().get(5, TimeUnit.SECONDS);
            while (now <= reader && System.nanoTime() < deadline) {
                now = collector.lowWatermark().get(5, TimeUnit.SECONDS); // FINISH is one-way: it may trail
            }
            assertTrue(now > reader, "the reader finished: " + now);
        }
    }
}
