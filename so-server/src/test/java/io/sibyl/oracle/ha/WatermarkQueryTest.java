package io.sibyl.oracle.ha;

import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import io.sibyl.protocol.Timestamps;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The WATERMARK_QUERY request over a real socket: what a garbage collector on a region server asks. */
class WatermarkQueryTest {

    @Test
    void watermarkIsHeldByTheOldestRunningTransactionAndRisesWhenItFinishes() throws Exception {
        try (OracleServer server = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(1 << 12, 1 << 10, 1 << 8));
             RawOracleClient reader = RawOracleClient.connect("127.0.0.1", server.port(), 5000);
             RawOracleClient collector = RawOracleClient.connect("127.0.0.1", server.port(), 5000)) {
            long before = collector.lowWatermark();
            long oldest = reader.begin();
            assertEquals(oldest, Timestamps.nextAbove(before - 1),
                    "nothing ran: the watermark was just above the clock, and the reader got the next timestamp");
            long writer = reader.begin();
            assertTrue(reader.commit(writer, 42L).value() > writer);
            assertEquals(oldest, collector.lowWatermark(), "a read-only transaction holds the watermark until FINISH");
            reader.finish(oldest);
            // Asked on the reader's own connection, whose requests the oracle takes in order: the FINISH, which has
            // no reply, may still be on its way when another connection's query arrives.
            long after = reader.lowWatermark();
            assertTrue(after > oldest, "the reader finished, so the watermark passed it: " + after);
            assertTrue(collector.lowWatermark() >= after, "a watermark once reported never goes back");
            long next = reader.begin();
            assertTrue(next >= after, "a later transaction never starts below a watermark already reported");
            assertEquals(next, collector.lowWatermark());
        }
    }

    @Test
    void watermarkPassesTheReaderOfAClientThatDisconnectedOnceTheGracePeriodEnds() throws Exception {
        long graceMs = 500;
        try (OracleServer server = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(1 << 12, 1 << 10, 1 << 8).withReaderGrace(graceMs));
             RawOracleClient collector = RawOracleClient.connect("127.0.0.1", server.port(), 5000)) {
            long held;
            try (RawOracleClient reader = RawOracleClient.connect("127.0.0.1", server.port(), 5000)) {
                held = reader.begin();
                assertEquals(held, collector.lowWatermark());
            }
            long closed = System.nanoTime();
            long deadline = closed + 20_000_000_000L;
            long now = collector.lowWatermark();
            while (now <= held && System.nanoTime() < deadline) {
                Thread.sleep(20);
                now = collector.lowWatermark();
            }
            assertTrue(now > held, "a dead client's reader no longer pins the watermark: " + now);
            assertTrue(System.nanoTime() - closed >= graceMs * 1_000_000L,
                    "but it did for reader.grace.ms, since its client may have gone on reading");
        }
    }
}
