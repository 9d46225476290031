package io.sibyl.client.oracle;

import io.netty.buffer.Unpooled;
import io.sibyl.protocol.AbortedRange;
import io.sibyl.protocol.DecisionBlockWriter;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;

/** The replica's answers for writers inside aborted ranges (transactions running when an oracle stopped). */
class ReplicaAbortedRangeTest {

    /** A sealed decision block starting at {@code base} with the records {@code records} writes. */
    static byte[] block(long base, java.util.function.Consumer<DecisionBlockWriter> records) {
        DecisionBlockWriter w = new DecisionBlockWriter();
        w.start(base);
        records.accept(w);
        return w.seal();
    }

    @Test
    void inDoubtWritersStayInvisibleAsTmaxPassesThemAndCommittedOnesVisible() {
        // Recovered at T_max 100 with timestamps up to 1000 handed out; 150 and 950 committed, 300 aborted.
        CommitReplica r = new CommitReplica(1001, 100, new long[] {300},
                List.of(new AbortedRange(100, 1000, new long[] {150, 950})));
        r.registerReader(1001);
        long reader = 1001;
        assertEquals(Visibility.VISIBLE, r.inSnapshot(150, reader), "committed before the crash");
        assertEquals(Visibility.VISIBLE, r.inSnapshot(950, reader));
        assertEquals(Visibility.INVISIBLE, r.inSnapshot(300, reader), "aborted");
        assertEquals(Visibility.INVISIBLE, r.inSnapshot(500, reader), "running at the crash");
        assertEquals(Visibility.INVISIBLE, r.inSnapshot(1000, reader));
        assertEquals(Visibility.VISIBLE, r.inSnapshot(50, reader), "below T_max, outside the range");

        r.apply(Unpooled.wrappedBuffer(block(1001, w -> {
            w.commit(1002, 1003);
            w.tMax(5000);
        })));
        assertEquals(5000, r.tMax());
        assertEquals(Visibility.INVISIBLE, r.inSnapshot(500, reader), "still aborted with T_max past it");
        assertEquals(Visibility.INVISIBLE, r.inSnapshot(1000, reader));
        assertEquals(Visibility.VISIBLE, r.inSnapshot(150, reader));
        assertEquals(Visibility.VISIBLE, r.inSnapshot(50, reader));
        assertEquals(Visibility.INVISIBLE, r.inSnapshot(1002, reader), "committed after the reader started");
        assertEquals(Visibility.ASK_ORACLE, r.inSnapshot(150, 900),
                "a reader inside the range cannot tell when the commit happened");
    }

    @Test
    void aRangeLearntFromABlockAloneIsAskedAbout() {
        CommitReplica r = new CommitReplica(2001, 100, new long[0]);
        r.registerReader(2001);
        r.apply(Unpooled.wrappedBuffer(block(2000, w -> {
            w.abortRange(1000, 2000);
            w.abort(1500);
            w.tMax(3000);
        })));
        assertEquals(1, r.abortedRanges().size());
        assertEquals(Visibility.ASK_ORACLE, r.inSnapshot(1200, 2001), "its commits are not known here");
        assertEquals(Visibility.INVISIBLE, r.inSnapshot(1500, 2001), "explicitly aborted");
        r.rememberCommittedBeforeInit(1200);
        assertEquals(Visibility.VISIBLE, r.inSnapshot(1200, 2001));
        r.apply(Unpooled.wrappedBuffer(block(2000, w -> w.abortRange(1000, 2000))));
        assertEquals(1, r.abortedRanges().size(), "a repeat is ignored");
    }

    @Test
    void aForgottenRangeNoLongerHidesItsWritersAndOtherRangesStay() {
        CommitReplica r = new CommitReplica(3001, 2500, new long[0],
                List.of(new AbortedRange(100, 1000, new long[] {150}), new AbortedRange(1000, 2000, new long[0])));
        r.registerReader(3001);
        assertEquals(Visibility.INVISIBLE, r.inSnapshot(500, 3001));
        assertEquals(Visibility.INVISIBLE, r.inSnapshot(1500, 3001));
        r.apply(Unpooled.wrappedBuffer(block(3001, w -> w.forgetRange(100, 1000))));
        assertEquals(List.of(1000L), r.abortedRanges().stream().map(AbortedRange::from).toList());
        assertEquals(Visibility.VISIBLE, r.inSnapshot(500, 3001),
                "swept: no version of it is left, and a timestamp below T_max is committed long ago");
        assertEquals(Visibility.INVISIBLE, r.inSnapshot(1500, 3001), "the other range is kept");
        r.apply(Unpooled.wrappedBuffer(block(3001, w -> w.forgetRange(100, 1000))));
        r.apply(Unpooled.wrappedBuffer(block(3001, w -> w.forgetRange(1000, 1999))));
        assertEquals(1, r.abortedRanges().size(), "a repeat, or an interval that is not exactly a range, is ignored");
    }
}
