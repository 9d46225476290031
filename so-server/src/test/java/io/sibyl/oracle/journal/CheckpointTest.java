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
}
