package io.sibyl.oracle;

import io.netty.buffer.Unpooled;
import io.sibyl.protocol.AbortedRange;
import io.sibyl.protocol.DecisionBlockReader;
import io.sibyl.protocol.Timestamps;
import io.sibyl.protocol.Wire;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** An oracle state built from a recovered journal: committed, aborted and in-doubt transactions, clock, T_max. */
class OracleStateRecoveryTest {
    private static final long[] NONE = new long[0];

    /** Every record of the sealed blocks, as in DecisionBlockRoundTripTest ("X from-to" for ABORT_RANGE). */
    private static List<String> records(byte[] block) {
        DecisionBlockRoundTripTest.Recorder r = new DecisionBlockRoundTripTest.Recorder();
        if (block != null) {
            DecisionBlockReader.readAll(Unpooled.wrappedBuffer(block), r);
        }
        return r.records;
    }

    private static long commit(OracleState s, long startTs, long... rows) {
        return s.commit(startTs, rows, rows.length);
    }

    /**
     * The journal said: T_max 100, timestamps up to 1000 may have been handed out, commits 90->120, 150->160,
     * 170->180 and 950->990 (all above T_max), aborted 200 and 300. Everything else in (100, 1000] was running.
     */
    private static OracleState recovered(OracleConfig config) {
        return new OracleState(config, 1000, 100, new long[] {90, 150, 170, 950}, new long[] {120, 160, 180, 990},
                new long[] {200, 300}, List.of());
    }

    @Test
    void committedAbortedAndInDoubtAnswerCorrectly() {
        OracleState s = recovered(OracleConfig.defaults().withCapacities(1 << 12, 1 << 10, 64));
        assertEquals(List.of("X100-1000", "|"), records(s.sealBlock()),
                "the first block aborts the in-doubt range (T_max 100, last timestamp 1000)");
        assertEquals(1, s.aborted().ranges().size());
        assertArrayEquals(new long[] {150, 170, 950}, s.aborted().ranges().get(0).committedStarts(),
                "the commits inside the range are its exceptions (90 started below it)");

        for (long committed : new long[] {90, 150, 170, 950}) {
            assertEquals(Wire.STATUS_COMMITTED, s.status(committed), "committed " + committed);
            assertFalse(s.aborted().isInDoubt(committed));
        }
        assertEquals(160, s.commitTimestampOf(150));
        assertEquals(160, commit(s, 150, 1), "a retried commit is answered with its commit timestamp");
        for (long aborted : new long[] {200, 300}) {
            assertEquals(Wire.STATUS_ABORTED, s.status(aborted));
            assertEquals(OracleState.ALREADY_ABORTED, commit(s, aborted, 1));
        }
        for (long inDoubt : new long[] {101, 151, 500, 949, 951, 1000}) {
            assertTrue(s.aborted().isInDoubt(inDoubt), "in doubt " + inDoubt);
            assertEquals(Wire.STATUS_ABORTED, s.status(inDoubt), "in doubt " + inDoubt);
            assertEquals(OracleState.ALREADY_ABORTED, commit(s, inDoubt, 7), "in doubt " + inDoubt);
            assertFalse(s.abort(inDoubt), "not running");
        }
        assertEquals(Wire.STATUS_COMMITTED_LONG_AGO, s.status(50), "below T_max, outside the range");
        assertEquals(OracleState.UNKNOWN, commit(s, 50, 1), "may have committed long ago: the client must ask");
        assertEquals(Wire.STATUS_UNKNOWN, s.status(5000), "not handed out yet");
        assertEquals(1000, s.clock());
        assertEquals(100, s.tMax());
        assertEquals(List.of(), records(s.sealBlock()), "nothing decided: answers only, no records");
    }

    @Test
    void clockRestartsAboveTheLastTimestampAndReservesAgain() {
        OracleConfig config = OracleConfig.defaults().withCapacities(1 << 12, 1 << 10, 64);
        OracleState s = recovered(config);
        s.sealBlock();
        long t = s.begin(1);
        assertEquals(1002, t, "the first timestamp after recovery: the next multiple of the step");
        long c = commit(s, t, 42);
        assertEquals(1004, c);
        assertEquals(List.of("R" + (1002 + config.timestampReservationBlock()), "C1002>1004", "|"),
                records(s.sealBlock()), "the first new timestamp journals a new reservation");
        assertEquals(Wire.STATUS_COMMITTED, s.status(t));
    }

    @Test
    void inDoubtTransactionsStayAbortedAfterTmaxPassesThem() {
        // A 4-commit window: T_max follows the commits closely.
        OracleState s = recovered(OracleConfig.defaults().withCapacities(1 << 12, 4, 64));
        s.sealBlock();
        for (int i = 0; i < 20; i++) {
            long t = s.begin(1);
            assertTrue(commit(s, t, 1000 + i) > t);
        }
        s.sealBlock();
        assertTrue(s.tMax() > 1000, "T_max passed the whole range: " + s.tMax());
        for (long inDoubt : new long[] {101, 500, 1000}) {
            assertEquals(Wire.STATUS_ABORTED, s.status(inDoubt), "in doubt " + inDoubt);
            assertEquals(OracleState.ALREADY_ABORTED, commit(s, inDoubt, 7));
        }
        for (long committed : new long[] {150, 170, 950}) {
            assertEquals(Wire.STATUS_COMMITTED_LONG_AGO, s.status(committed), "committed " + committed);
            assertEquals(OracleState.UNKNOWN, commit(s, committed, 7), "forgotten commit: the client must ask");
        }
        assertEquals(Wire.STATUS_COMMITTED_LONG_AGO, s.status(90));
    }

    @Test
    void moreCommitsThanTheWindowRaiseTmaxPastTheOldest() {
        // Window of 4; 6 recovered commits: the two oldest (commit timestamps 120 and 140) are dropped.
        OracleState s = new OracleState(OracleConfig.defaults().withCapacities(1 << 12, 4, 64), 1000, 100,
                new long[] {110, 130, 150, 170, 190, 210}, new long[] {120, 140, 160, 180, 200, 220}, NONE,
                List.of());
        assertEquals(140, s.tMax());
        assertEquals(4, s.recentCommitCount());
        assertEquals(List.of("X100-1000", "T140", "|"), records(s.sealBlock()),
                "the range first, then the raised T_max");
        assertEquals(Wire.STATUS_COMMITTED_LONG_AGO, s.status(110), "dropped, but an exception of the range");
        assertEquals(Wire.STATUS_COMMITTED_LONG_AGO, s.status(130));
        assertEquals(Wire.STATUS_COMMITTED, s.status(150));
        assertEquals(Wire.STATUS_ABORTED, s.status(120), "in doubt (a commit timestamp is no start timestamp)");
        assertEquals(Wire.STATUS_ABORTED, s.status(111));
    }

    @Test
    void earlierRangesAreKeptAndTheNewOneStartsAboveThem() {
        AbortedRange earlier = new AbortedRange(100, 1000, new long[] {150, 950});
        // T_max 800 lies inside the earlier range: the new range starts at its end (1000), not at T_max.
        OracleState s = new OracleState(OracleConfig.defaults().withCapacities(1 << 12, 1 << 10, 64), 3000, 800,
                new long[] {950, 1500}, new long[] {990, 1600}, new long[] {2000}, List.of(earlier));
        assertEquals(List.of("X1000-3000", "|"), records(s.sealBlock()));
        assertEquals(2, s.aborted().ranges().size());
        assertArrayEquals(new long[] {1500}, s.aborted().ranges().get(1).committedStarts());
        assertEquals(Wire.STATUS_ABORTED, s.status(500), "in doubt at the first crash");
        assertEquals(Wire.STATUS_COMMITTED_LONG_AGO, s.status(150), "committed before the first crash");
        assertEquals(Wire.STATUS_COMMITTED, s.status(950));
        assertEquals(Wire.STATUS_ABORTED, s.status(1200), "in doubt at the second crash");
        assertEquals(Wire.STATUS_ABORTED, s.status(2000), "aborted explicitly");
        assertEquals(Wire.STATUS_COMMITTED, s.status(1500));
        assertTrue(s.begin(1) > 3000);
    }

    @Test
    void onlyTheNewestRangesAreKept() {
        List<AbortedRange> many = new ArrayList<>();
        for (int i = 0; i < AbortedRange.MAX_KEPT; i++) {
            many.add(new AbortedRange(i * 10L + 1, i * 10L + 5, NONE));
        }
        OracleState s = new OracleState(OracleConfig.defaults().withCapacities(1 << 12, 1 << 10, 64), 10_000, 9000,
                NONE, NONE, NONE, many);
        assertEquals(AbortedRange.MAX_KEPT, s.aborted().ranges().size());
        assertEquals(11, s.aborted().ranges().get(0).from(), "the oldest was dropped");
        assertEquals(9000, s.aborted().ranges().get(AbortedRange.MAX_KEPT - 1).from());
        assertTrue(s.aborted().isInDoubt(14));
        assertFalse(s.aborted().isInDoubt(4), "forgotten");
    }

    @Test
    void aFreshJournalHasNothingInDoubt() {
        OracleState s = new OracleState(OracleConfig.defaults(), 0, 0, NONE, NONE, NONE, List.of());
        assertEquals(List.of(), s.aborted().ranges());
        assertEquals(List.of(), records(s.sealBlock()));
        assertEquals(Timestamps.STEP, s.begin(1));
    }

    @Test
    void inconsistentRecoveredStateIsRefused() {
        OracleConfig c = OracleConfig.defaults().withCapacities(1 << 12, 1 << 10, 64);
        assertThrows(IllegalArgumentException.class, () -> new OracleState(c, 1000, 100, new long[] {150, 160},
                new long[] {170, 165}, NONE, List.of()), "commit timestamps not ascending");
        assertThrows(IllegalArgumentException.class, () -> new OracleState(c, 1000, 100, new long[] {50},
                new long[] {90}, NONE, List.of()), "a commit at or below T_max");
        assertThrows(IllegalArgumentException.class, () -> new OracleState(c, 100, 1000, NONE, NONE, NONE,
                List.of()), "T_max above the last timestamp");
    }

    @Test
    void aRecoveredOracleLetsNothingBeCollectedForTheGracePeriod() throws InterruptedException {
        long graceMs = 1000;
        long recovered = System.nanoTime();
        OracleState s = new OracleState(OracleConfig.defaults().withCapacities(1 << 12, 1 << 10, 64)
                .withReaderGrace(graceMs), 1000, 100, NONE, NONE, NONE, List.of());
        long held = s.lowWatermark();
        // Only a look taken within the grace period must see it held (a busy machine may stall this thread past it).
        if (System.nanoTime() - recovered < graceMs * 1_000_000L) {
            assertEquals(0, held, "readers of the crashed oracle are unknown: they may read anything");
        }
        long deadline = recovered + 20_000_000_000L;
        while (s.lowWatermark() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertEquals(s.clock() + 1, s.lowWatermark(), "after the grace period only this oracle's readers count");
        assertTrue(System.nanoTime() - recovered >= graceMs * 1_000_000L, "held for the whole grace period");
    }

    @Test
    void aRecoveredOracleHoldsForAnEarlierOraclesLongerGrace() throws InterruptedException {
        long recovered = System.nanoTime();
        OracleState s = new OracleState(OracleConfig.defaults().withCapacities(1 << 12, 1 << 10, 64)
                .withReaderGrace(100), 1000, 100, NONE, NONE, NONE, List.of(), 1500);
        Thread.sleep(300);
        long held = s.lowWatermark();
        if (System.nanoTime() - recovered < 1_500_000_000L) {
            assertEquals(0, held, "past its own 100 ms grace, within the earlier oracle's 1.5 s");
        }
        long deadline = recovered + 20_000_000_000L;
        while (s.lowWatermark() == 0 && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertTrue(System.nanoTime() - recovered >= 1_500_000_000L, "held for the earlier oracle's grace");
        assertEquals(s.clock() + 1, s.lowWatermark());
    }

    @Test
    void aFreshOracleHoldsNothing() {
        assertEquals(1, new OracleState(OracleConfig.defaults()).lowWatermark());
    }
}
