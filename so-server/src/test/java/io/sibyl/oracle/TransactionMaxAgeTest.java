package io.sibyl.oracle;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** transaction.max.age.ms: a transaction left running (leaked by its client) is aborted and stops holding W. */
class TransactionMaxAgeTest {
    private static final long MS = 1_000_000L;

    @Test
    void aTransactionRunningLongerThanTheMaxAgeIsAbortedAndReleasesTheWatermarkAfterTheGrace() {
        AtomicLong now = new AtomicLong(0);
        OracleState s = new OracleState(OracleConfig.defaults().withCapacities(1 << 12, 1 << 10, 64)
                .withReaderGrace(500).withTransactionMaxAge(1000), now::get);
        long leaked = s.begin(1);
        s.sealBlock();
        now.set(600 * MS);
        long younger = s.begin(1);
        s.sealBlock();
        now.set(900 * MS);
        s.sealBlock();
        assertEquals(leaked, s.lowWatermark(), "not yet 1 s old: it still holds the watermark");
        assertFalse(s.status(leaked) == io.sibyl.protocol.Wire.STATUS_ABORTED);

        now.set(1_050 * MS);
        byte[] block = s.sealBlock();
        assertTrue(block != null, "the abort is journaled and sent to the replicas");
        assertEquals(io.sibyl.protocol.Wire.STATUS_ABORTED, s.status(leaked));
        assertEquals(io.sibyl.protocol.Wire.STATUS_RUNNING, s.status(younger), "the younger one runs on");
        assertEquals(leaked, s.lowWatermark(), "its client may still be reading: held for reader.grace.ms");
        assertEquals(1, s.stats(0, 0, 0).expiredAborts(), "counted for the log line and JMX");
        assertEquals(OracleState.ALREADY_ABORTED, s.commit(leaked, new long[] {7}, 1),
                "a late commit learns that it was aborted");

        now.set(1_600 * MS);
        assertEquals(younger, s.lowWatermark(), "after the grace only the younger transaction holds it");
        now.set(1_700 * MS);
        s.sealBlock();
        assertEquals(io.sibyl.protocol.Wire.STATUS_ABORTED, s.status(younger), "its turn came 1 s after it began");
        now.set(2_300 * MS);
        assertEquals(s.clock() + 1, s.lowWatermark());
    }

    @Test
    void withoutAMaxAgeTransactionsRunForEver() {
        AtomicLong now = new AtomicLong(0);
        OracleState s = new OracleState(OracleConfig.defaults().withCapacities(1 << 12, 1 << 10, 64)
                .withTransactionMaxAge(0), now::get);
        List<Long> started = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            started.add(s.begin(1));
            now.addAndGet(3_600_000 * MS);
            s.sealBlock();
        }
        assertEquals(started.get(0), s.lowWatermark());
        for (long ts : started) {
            assertEquals(io.sibyl.protocol.Wire.STATUS_RUNNING, s.status(ts));
        }
    }

    /** A read-only transaction's FINISH after its max age: it wrote nothing, so its abort must not stay for good. */
    @Test
    void aReadOnlyTransactionFinishedAfterItsMaxAgeLeavesNoAbortBehind() {
        AtomicLong now = new AtomicLong(0);
        OracleState s = new OracleState(OracleConfig.defaults().withCapacities(1 << 12, 1 << 10, 64)
                .withReaderGrace(500).withTransactionMaxAge(1000), now::get);
        long readOnly = s.begin(1);
        s.sealBlock();
        now.set(1_050 * MS);
        s.sealBlock();
        assertEquals(io.sibyl.protocol.Wire.STATUS_ABORTED, s.status(readOnly));
        assertEquals(1, s.aborted().size());
        s.finish(readOnly); // its client commits it read-only (FINISH): it wrote nothing
        now.set(3_000 * MS); // past the reader grace: the watermark is above it
        s.sealBlock();
        assertEquals(0, s.aborted().size(), "nothing to clean up: forgotten like a T_max-aborted read-only one");
    }

    /** The age samples stay bounded whatever the max age: one per 100 ms of a 30-day max age would be 26 M arrays. */
    @Test
    void aLongMaxAgeKeepsFewAgeSamples() throws Exception {
        AtomicLong now = new AtomicLong(0);
        OracleState s = new OracleState(OracleConfig.defaults().withCapacities(1 << 12, 1 << 10, 64)
                .withTransactionMaxAge(30L * 86_400_000L), now::get);
        for (int i = 0; i < 200_000; i++) { // 100 ms apart: 5.6 hours of a busy oracle
            s.begin(1);
            s.finish(s.clock());
            s.sealBlock();
            now.addAndGet(100 * MS);
        }
        java.lang.reflect.Field f = OracleState.class.getDeclaredField("expiry");
        f.setAccessible(true);
        int samples = ((TransactionExpiry) f.get(s)).sampleCount();
        assertTrue(samples <= 40_000, samples + " samples kept for 5.6 hours");
    }
}
