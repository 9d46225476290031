package io.sibyl.client.oracle;

import io.sibyl.oracle.OracleExtension;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class OracleClientLoopbackTest {
    @RegisterExtension
    static final OracleExtension oracle = OracleExtension.withSettings(c -> c
            .withCapacities(1 << 16, 1 << 14, 1 << 12)
            .withReplication(50, 1 << 20));

    @Test
    void firstCommitterWinsOverRealSockets() throws Exception {
        try (OracleClient a = OracleClient.connect("127.0.0.1", oracle.port());
             OracleClient b = OracleClient.connect("127.0.0.1", oracle.port())) {
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
        try (OracleClient app = OracleClient.connect("127.0.0.1", oracle.port());
             OracleClient collector = OracleClient.connect("127.0.0.1", oracle.port())) {
            long reader = app.begin().get(5, TimeUnit.SECONDS);
            long writer = app.begin().get(5, TimeUnit.SECONDS);
            app.commit(writer, new long[] {RowIds.of("t", new byte[] {2})}).get(5, TimeUnit.SECONDS);
            long held = collector.lowWatermark().get(5, TimeUnit.SECONDS);
            assertTrue(held <= reader, "other tests' transactions may hold it lower, never higher: " + held);
            app.finish(reader);
            // FINISH is one-way: it may trail.
            await("the low watermark passing the finished reader " + reader).atMost(Duration.ofSeconds(5))
                    .pollInterval(Duration.ofMillis(1))
                    .until(() -> collector.lowWatermark().get(5, TimeUnit.SECONDS), now -> now > reader);
        }
    }
}
