package io.sibyl.protocol;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Aborted ranges: membership, the range a recovery must abort, and the HELLO encoding. */
class AbortedRangeTest {

    @Test
    void committedStartsAreTheOnlyExceptions() {
        AbortedRange r = new AbortedRange(100, 200, new long[] {110, 150});
        assertFalse(r.covers(100), "from is exclusive");
        assertTrue(r.covers(200), "to is inclusive");
        assertTrue(r.isCommitted(110));
        assertFalse(r.isInDoubt(110));
        assertTrue(r.isInDoubt(111));
        assertTrue(r.isInDoubt(200));
        assertFalse(r.isInDoubt(201));
        assertFalse(r.isInDoubt(100));
        AbortedRange unknown = new AbortedRange(100, 200, null);
        assertFalse(unknown.committedKnown());
        assertFalse(unknown.isInDoubt(150), "without its commits a range cannot say");
        assertFalse(unknown.isCommitted(150));
        assertThrows(IllegalArgumentException.class, () -> new AbortedRange(5, 5, new long[0]));
        assertThrows(IllegalArgumentException.class, () -> new AbortedRange(5, 9, new long[] {7, 6}));
        assertThrows(IllegalArgumentException.class, () -> new AbortedRange(5, 9, new long[] {10}));
        assertThrows(IllegalArgumentException.class, () -> new AbortedRange(5, 9, new long[] {5}));
    }

    @Test
    void recoveryRangeStartsAboveTmaxAndAboveEarlierRanges() {
        long[] commits = {90, 150, 120, 400}; // any order; 90 is below T_max, 400 above the last timestamp
        AbortedRange r = AbortedRange.afterRecovery(100, 300, List.of(), commits);
        assertEquals(100, r.from());
        assertEquals(300, r.to());
        assertArrayEquals(new long[] {120, 150}, r.committedStarts());

        AbortedRange earlier = new AbortedRange(50, 130, new long[] {120});
        AbortedRange next = AbortedRange.afterRecovery(100, 300, List.of(earlier), commits);
        assertEquals(130, next.from(), "timestamps up to 130 belong to the earlier oracle: its range covers them");
        assertArrayEquals(new long[] {150}, next.committedStarts());

        assertNull(AbortedRange.afterRecovery(0, 0, List.of(), new long[0]), "a brand-new journal");
        assertNull(AbortedRange.afterRecovery(100, 100, List.of(), new long[0]));
        assertNull(AbortedRange.afterRecovery(10, 120, List.of(earlier), new long[0]));
    }

    @Test
    void helloEncodingRoundTripsAndIsValidated() {
        List<AbortedRange> ranges = List.of(new AbortedRange(100, 200, new long[] {101, 150, 200}),
                new AbortedRange(200, 5_000_000, new long[0]),
                new AbortedRange(DecisionBlockWriter.MAX_TIMESTAMP - 10, DecisionBlockWriter.MAX_TIMESTAMP - 1,
                        new long[] {DecisionBlockWriter.MAX_TIMESTAMP - 2}));
        ByteBuf out = Unpooled.buffer();
        AbortedRange.writeAll(out, ranges);
        out.writeByte(99); // what follows in the frame stays unread
        List<AbortedRange> back = AbortedRange.readAll(out);
        assertEquals(1, out.readableBytes());
        assertEquals(ranges.size(), back.size());
        for (int i = 0; i < ranges.size(); i++) {
            assertTrue(ranges.get(i).sameInterval(back.get(i)));
            assertArrayEquals(ranges.get(i).committedStarts(), back.get(i).committedStarts());
        }
        ByteBuf none = Unpooled.buffer();
        AbortedRange.writeAll(none, List.of());
        assertEquals(1, none.readableBytes());
        assertEquals(List.of(), AbortedRange.readAll(none));

        assertThrows(IllegalArgumentException.class, () -> AbortedRange.writeAll(Unpooled.buffer(),
                List.of(new AbortedRange(100, 200, new long[0]), new AbortedRange(150, 300, new long[0]))),
                "overlapping");
        assertThrows(IllegalArgumentException.class, () -> AbortedRange.writeAll(Unpooled.buffer(),
                List.of(new AbortedRange(100, 200, null))), "commits unknown");

        ByteBuf bad = Unpooled.buffer(); // one range of width 0
        Varints.writeUnsigned(bad, 1);
        Varints.writeUnsigned(bad, 10);
        Varints.writeUnsigned(bad, 0);
        Varints.writeUnsigned(bad, 0);
        assertThrows(ProtocolException.class, () -> AbortedRange.readAll(bad));
        ByteBuf outside = Unpooled.buffer(); // a commit beyond the range's end
        Varints.writeUnsigned(outside, 1);
        Varints.writeUnsigned(outside, 10);
        Varints.writeUnsigned(outside, 5);
        Varints.writeUnsigned(outside, 1);
        Varints.writeUnsigned(outside, 6);
        assertThrows(ProtocolException.class, () -> AbortedRange.readAll(outside));
        ByteBuf huge = Unpooled.buffer(); // a count larger than the bytes left
        Varints.writeUnsigned(huge, 1_000_000);
        assertThrows(ProtocolException.class, () -> AbortedRange.readAll(huge));
    }
}
