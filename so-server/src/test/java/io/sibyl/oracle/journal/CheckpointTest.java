package io.sibyl.oracle.journal;

import io.netty.buffer.Unpooled;
import io.sibyl.protocol.AbortedRange;
import io.sibyl.protocol.DecisionBlockWriter;
import io.sibyl.protocol.ProtocolException;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The checkpoint entry format and how replay takes it (no cluster). */
class CheckpointTest {
    private static final LedgerRegistry.Snapshot REG = new LedgerRegistry.Snapshot(1, "test", List.of(), 0);

    private static Checkpoint sample() {
        return new Checkpoint(90, 120, 160, new long[] {3, 17, 95},
                List.of(new AbortedRange(10, 20, new long[] {12, 19}), new AbortedRange(40, 50, new long[0])));
    }

    @Test
    void checkpointRoundTripsAndNoDecisionBlockLooksLikeOne() {
        Checkpoint c = sample();
        byte[] entry = c.encode();
        assertTrue(Checkpoint.isCheckpoint(Unpooled.wrappedBuffer(entry)));
        assertEquals(c, Checkpoint.decode(Unpooled.wrappedBuffer(entry)));
        DecisionBlockWriter w = new DecisionBlockWriter();
        w.start(0);
        w.tMax(1);
        assertFalse(Checkpoint.isCheckpoint(Unpooled.wrappedBuffer(w.seal())), "a block starts with its length");
        byte[] truncated = java.util.Arrays.copyOf(entry, entry.length - 1);
        assertThrows(ProtocolException.class, () -> Checkpoint.decode(Unpooled.wrappedBuffer(truncated)));
        entry[1] = 9;
        assertThrows(ProtocolException.class, () -> Checkpoint.decode(Unpooled.wrappedBuffer(entry)));
    }

    @Test
    void replayStartingAtACheckpointEqualsReplayOfEverythingAndAReplayedCheckpointChangesNothing() {
        DecisionModel model = new DecisionModel(3, 30);
        List<byte[]> before = model.blocks(300, 8);
        JournalReplay full = new JournalReplay();
        before.forEach(full::entry);
        RecoveredState atCheckpoint = full.result(REG, full.stats(0, 0));
        Checkpoint c = new Checkpoint(atCheckpoint.tMax(), atCheckpoint.lastTimestamp(), atCheckpoint.lastTimestamp(),
                atCheckpoint.aborted(), atCheckpoint.abortedRanges());
        List<byte[]> after = model.blocks(300, 8);

        full.entry(c.encode()); // a standby that read everything before it
        after.forEach(full::entry);
        JournalReplay bounded = new JournalReplay();
        bounded.entry(c.encode());
        after.forEach(bounded::entry);

        RecoveredState a = full.result(REG, full.stats(0, 0));
        RecoveredState b = bounded.result(REG, bounded.stats(0, 0));
        model.assertRecovered(a);
        assertArrayEquals(a.aborted(), b.aborted());
        assertEquals(a.tMax(), b.tMax());
        assertEquals(a.lastTimestamp(), b.lastTimestamp());
        // Commits before the checkpoint are not in it: equal once T_max passed its clock (the deletion rule).
        if (c.clock() <= a.tMax()) {
            assertArrayEquals(a.commitTimestamps(), b.commitTimestamps());
            assertArrayEquals(a.commitStarts(), b.commitStarts());
        }
        assertEquals(1, bounded.checkpoints());
    }

    @Test
    void aCheckpointAbovePartBytesIsWrittenInPartsThatReplayAsTheWholeAndASmallOneStaysOneVersionOneEntry() {
        Checkpoint c = sample();
        assertEquals(1, c.entries().size());
        assertArrayEquals(c.encode(), c.entries().get(0), "small checkpoints keep the single-entry format");

        List<byte[]> parts = c.entries(8);
        assertTrue(parts.size() > 2, "parts: " + parts.size());
        for (byte[] part : parts) {
            assertTrue(Checkpoint.isCheckpoint(Unpooled.wrappedBuffer(part)));
            assertTrue(Checkpoint.isPart(Unpooled.wrappedBuffer(part)));
        }
        assertFalse(Checkpoint.isPart(Unpooled.wrappedBuffer(c.encode())));
        JournalReplay replay = new JournalReplay();
        for (int i = 0; i < parts.size() - 1; i++) {
            replay.entry(parts.get(i));
            assertEquals(0, replay.checkpoints(), "a checkpoint takes effect at its last part");
        }
        replay.entry(parts.get(parts.size() - 1));
        assertEquals(1, replay.checkpoints());
        assertSameState(c, replay);
    }

    @Test
    void checkpointPartsRepeatedByARewrittenSuffixOrWithoutTheirStartReplayAsTheCompleteCheckpoint() {
        Checkpoint c = sample();
        List<byte[]> parts = c.entries(8);
        int n = parts.size();
        // The tail of an older checkpoint whose start was in a deleted ledger, then a copy of this one broken off at
        // part 2 by a write failure, then the rewritten suffix from part 1 on.
        JournalReplay replay = new JournalReplay();
        replay.entry(parts.get(n - 2));
        replay.entry(parts.get(n - 1));
        assertEquals(0, replay.checkpoints(), "parts without their start are ignored");
        replay.entry(parts.get(0));
        replay.entry(parts.get(1));
        replay.entry(parts.get(2));
        for (int i = 1; i < n; i++) {
            replay.entry(parts.get(i));
        }
        assertEquals(1, replay.checkpoints());
        assertSameState(c, replay);
    }

    private static void assertSameState(Checkpoint c, JournalReplay replay) {
        RecoveredState r = replay.result(REG, replay.stats(0, 0));
        assertEquals(c.tMax(), r.tMax());
        assertEquals(c.lastTimestamp(), r.lastTimestamp());
        assertArrayEquals(c.aborted(), r.aborted());
        assertTrue(Checkpoint.sameRanges(c.abortedRanges(), r.abortedRanges()));
    }
}
