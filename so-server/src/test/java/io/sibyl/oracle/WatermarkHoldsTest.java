package io.sibyl.oracle;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The floors a lost connection or a recovery puts under the low watermark, on an explicit clock. */
class WatermarkHoldsTest {
    private static final long MS = 1_000_000L;

    @Test
    void theLowestFloorInForceWinsUntilItsGracePeriodEnds() {
        WatermarkHolds holds = new WatermarkHolds(1000);
        assertEquals(500, holds.floor(0, 500), "no hold: the caller's value");
        holds.hold(40, 0);
        holds.hold(20, 300 * MS);
        holds.hold(60, 600 * MS);
        assertEquals(20, holds.floor(999 * MS, 500));
        assertEquals(20, holds.floor(1000 * MS, 500), "the first hold ended; the second is lower anyway");
        assertEquals(2, holds.size());
        assertEquals(60, holds.floor(1300 * MS, 500), "the second ended too");
        assertEquals(500, holds.floor(1600 * MS, 500), "all ended");
        assertEquals(0, holds.size());
    }

    @Test
    void aFloorAboveTheRunningTransactionsChangesNothing() {
        WatermarkHolds holds = new WatermarkHolds(1000);
        holds.hold(900, 0);
        assertEquals(700, Math.min(700, holds.floor(10 * MS, Long.MAX_VALUE)));
    }

    @Test
    void expiryIsMeasuredOnTheMonotonicClockEvenAcrossItsSignChange() {
        WatermarkHolds holds = new WatermarkHolds(1000);
        long start = Long.MAX_VALUE - 500 * MS; // System.nanoTime may be anywhere, and wrap
        holds.hold(7, start);
        assertEquals(7, holds.floor(start + 999 * MS, 100));
        assertEquals(100, holds.floor(start + 1000 * MS, 100));
    }
}
