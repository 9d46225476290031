package io.sibyl.oracle.journal;

import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleState;
import io.sibyl.protocol.AbortedRange;
import io.sibyl.protocol.Wire;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Crash, recover, crash again, recover again, with real {@link OracleState}s writing the journal and
 * {@link JournalReplay} reading it: transactions running at each crash stay aborted through later recoveries, however
 * far T_max moves, and commits inside a range stay committed.
 */
class AbortRangeReplayTest {
    private static final LedgerRegistry.Snapshot REG = new LedgerRegistry.Snapshot(1, "test", List.of(), 0);
    /** A 4-commit window, so T_max follows the commits closely and passes every range quickly. */
    private static final OracleConfig CONFIG = OracleConfig.defaults().withCapacities(1 << 12, 4, 256);

    /** An oracle writing into {@code journal} (one entry per sealed block). */
    private static final class Oracle {
        final OracleState state;
        final List<byte[]> journal;
        final Map<Long, Long> committed = new HashMap<>();
        long row = 1;

        Oracle(OracleState state, List<byte[]> journal) {
            this.state = state;
            this.journal = journal;
            seal(); // the first block: the ABORT_RANGE of a recovered oracle
        }

        void seal() {
            byte[] b = state.sealBlock();
            if (b != null) {
                journal.add(b);
            }
        }

        long commitOne() {
            long t = state.begin(1);
            long c = state.commit(t, new long[] {row++}, 1);
            assertTrue(c > t);
            committed.put(t, c);
            seal();
            return t;
        }

        long abortOne() {
            long t = state.begin(1);
            assertTrue(state.abort(t));
            seal();
            return t;
        }

        /** Begins a transaction that will never finish: running at the crash. */
        long leaveRunning() {
            long t = state.begin(1);
            seal();
            return t;
        }
    }

    private static RecoveredState replay(List<byte[]> journal) {
        JournalReplay r = new JournalReplay();
        journal.forEach(r::entry);
        return r.result(REG, r.stats(1, 0));
    }

    @Test
    void rangesSurviveLaterCrashesAndTmaxPassingThem() {
        List<byte[]> journal = new ArrayList<>();
        Oracle first = new Oracle(new OracleState(CONFIG), journal);
        List<Long> passedByTmax = new ArrayList<>();
        for (int i = 0; i < 30; i++) {
            first.commitOne();
            if (i % 7 == 0 && i < 20) {
                passedByTmax.add(first.leaveRunning()); // T_max passes it while it runs: an explicit ABORT
            }
            if (i % 11 == 0) {
                first.abortOne();
            }
        }
        List<Long> running1 = List.of(first.leaveRunning(), first.leaveRunning()); // above T_max at the crash
        long lastOfFirst = first.state.clock();

        RecoveredState r1 = replay(journal);
        assertEquals(List.of(), r1.abortedRanges());
        for (long t : passedByTmax) {
            assertTrue(r1.isAborted(t), "aborted by T_max before the crash: " + t);
        }
        AbortedRange range1 = r1.inDoubtRange();
        assertNotNull(range1);
        for (long t : running1) {
            assertTrue(r1.isInDoubt(t), "running at the first crash: " + t);
        }
        for (long t : first.committed.keySet()) {
            assertFalse(r1.isInDoubt(t), "committed: " + t);
        }

        Oracle second = new Oracle(r1.newOracleState(CONFIG), journal);
        assertEquals(Wire.STATUS_ABORTED, second.state.status(running1.get(0)));
        for (int i = 0; i < 30; i++) {
            long t = second.commitOne();
            assertTrue(t > lastOfFirst, "no timestamp is handed out twice");
        }
        List<Long> running2 = List.of(second.leaveRunning());
        assertTrue(second.state.tMax() > range1.to(), "T_max passed the first range");

        // A rewritten suffix repeats the second oracle's first block (its ABORT_RANGE) and more: no harm.
        List<byte[]> withRepeat = new ArrayList<>(journal);
        int firstOfSecond = journal.size() - 1;
        while (firstOfSecond > 0 && !containsRange(journal.get(firstOfSecond))) {
            firstOfSecond--;
        }
        withRepeat.addAll(journal.subList(firstOfSecond, journal.size()));

        for (List<byte[]> j : List.of(journal, withRepeat)) {
            RecoveredState r2 = replay(j);
            assertEquals(1, r2.abortedRanges().size(), "the first recovery's range, once");
            AbortedRange replayed = r2.abortedRanges().get(0);
            assertTrue(replayed.sameInterval(range1));
            assertArrayEquals(range1.committedStarts(), replayed.committedStarts(),
                    "the range's commits are rebuilt from the COMMIT records before it");
            assertTrue(r2.tMax() > range1.to());
            for (long t : running1) {
                assertTrue(r2.isInDoubt(t), "running at the first crash, below T_max now: " + t);
            }
            for (long t : running2) {
                assertTrue(r2.isInDoubt(t), "running at the second crash: " + t);
            }
            for (long t : first.committed.keySet()) {
                assertFalse(r2.isInDoubt(t), "committed before the first crash: " + t);
            }
            AbortedRange range2 = r2.inDoubtRange();
            assertEquals(Math.max(r2.tMax(), range1.to()), range2.from());
        }

        RecoveredState r2 = replay(journal);
        Oracle third = new Oracle(r2.newOracleState(CONFIG), journal);
        assertEquals(2, third.state.aborted().ranges().size());
        for (long t : running1) {
            assertEquals(Wire.STATUS_ABORTED, third.state.status(t), "running at the first crash: " + t);
            assertEquals(OracleState.ALREADY_ABORTED, third.state.commit(t, new long[] {1}, 1));
        }
        for (long t : running2) {
            assertEquals(Wire.STATUS_ABORTED, third.state.status(t), "running at the second crash: " + t);
        }
        for (Map<Long, Long> committed : List.of(first.committed, second.committed)) {
            for (long t : committed.keySet()) {
                byte status = third.state.status(t);
                assertTrue(status == Wire.STATUS_COMMITTED || status == Wire.STATUS_COMMITTED_LONG_AGO,
                        "committed " + t + ": status " + status);
            }
        }
        long t = third.commitOne();
        assertTrue(t > second.state.clock());

        RecoveredState r3 = replay(journal);
        assertEquals(2, r3.abortedRanges().size(), "both ranges survive a third recovery");
    }

    @Test
    void aRangeReportedCleanedUpIsForgottenOnceOlderReadersFinishAndStaysForgottenAfterRecovery()
            throws InterruptedException {
        List<byte[]> journal = new ArrayList<>();
        Oracle first = new Oracle(new OracleState(CONFIG), journal);
        first.commitOne();
        long inDoubt = first.leaveRunning();
        RecoveredState r1 = replay(journal);
        AbortedRange range = r1.inDoubtRange();
        assertNotNull(range);

        // The shortest reader grace: a recovered oracle holds the watermark down that long for unknown readers.
        Oracle second = new Oracle(r1.newOracleState(CONFIG.withReaderGrace(100)), journal);
        Thread.sleep(150);
        long olderReader = second.leaveRunning(); // started before the report: may hold a swept version
        assertFalse(second.state.rangeCleanedUp(range.from(), range.to() - 1), "not exactly a range");
        assertTrue(second.state.rangeCleanedUp(range.from(), range.to()));
        assertFalse(second.state.rangeCleanedUp(range.from(), range.to()), "already reported");
        for (int i = 0; i < 5; i++) {
            second.commitOne();
        }
        assertEquals(1, second.state.aborted().ranges().size(), "kept while an older reader runs");
        assertEquals(Wire.STATUS_ABORTED, second.state.status(inDoubt));
        second.state.finish(olderReader);
        second.seal();
        assertEquals(List.of(), second.state.aborted().ranges(), "forgotten once it finished");
        assertEquals(List.of(), second.state.checkpoint().abortedRanges(), "and checkpoints no longer carry it");

        RecoveredState r2 = replay(journal);
        assertEquals(List.of(), r2.abortedRanges(), "the FORGET_RANGE record is replayed");
        List<byte[]> withCheckpoint = new ArrayList<>(journal);
        withCheckpoint.add(0, r1.newOracleState(CONFIG).checkpoint().encode());
        assertEquals(List.of(), replay(withCheckpoint).abortedRanges(),
                "a checkpoint holding the range, followed by the records that forget it");
    }

    /**
     * Once a range is forgotten, the next recovery's range starts at T_max again (no kept range above it), so it may
     * cover the forgotten span: its in-doubt writers are in doubt once more, and the commits there, of the oracle
     * before and of the one that forgot it, are listed in the new range since their COMMIT records are above T_max.
     */
    @Test
    void aRangeAfterAForgottenOneMayCoverItsSpanAndKeepsItsCommits() throws InterruptedException {
        OracleConfig roomy = OracleConfig.defaults().withCapacities(1 << 12, 1 << 12, 256); // T_max stays put
        List<byte[]> journal = new ArrayList<>();
        Oracle first = new Oracle(new OracleState(roomy), journal);
        first.commitOne();
        long inDoubt1 = first.leaveRunning();
        first.commitOne();
        RecoveredState r1 = replay(journal);
        AbortedRange range1 = r1.inDoubtRange();
        assertNotNull(range1);

        Oracle second = new Oracle(r1.newOracleState(roomy.withReaderGrace(100)), journal);
        Thread.sleep(150);
        assertTrue(second.state.rangeCleanedUp(range1.from(), range1.to()));
        second.commitOne();
        assertEquals(List.of(), second.state.aborted().ranges(), "forgotten");
        long inDoubt2 = second.leaveRunning();

        RecoveredState r2 = replay(journal);
        assertEquals(List.of(), r2.abortedRanges());
        AbortedRange range2 = r2.inDoubtRange();
        assertTrue(range2.from() < range1.to(), "starts at T_max " + r2.tMax() + ", inside the forgotten " + range1);
        Oracle third = new Oracle(r2.newOracleState(roomy), journal);
        for (long t : List.of(inDoubt1, inDoubt2)) {
            assertEquals(Wire.STATUS_ABORTED, third.state.status(t), "in doubt: " + t);
            assertEquals(OracleState.ALREADY_ABORTED, third.state.commit(t, new long[] {1}, 1));
        }
        for (Map<Long, Long> committed : List.of(first.committed, second.committed)) {
            for (long t : committed.keySet()) {
                assertTrue(range2.isCommitted(t) || !range2.covers(t), "listed: " + t);
                assertEquals(Wire.STATUS_COMMITTED, third.state.status(t), "committed: " + t);
            }
        }
        Checkpoint cp = third.state.checkpoint();
        assertEquals(1, Checkpoint.decode(io.netty.buffer.Unpooled.wrappedBuffer(cp.encode())).abortedRanges().size());
        assertEquals(1, replay(journal).abortedRanges().size());
    }

    private static boolean containsRange(byte[] block) {
        boolean[] seen = {false};
        io.sibyl.protocol.DecisionBlockReader.readAll(io.netty.buffer.Unpooled.wrappedBuffer(block),
                new io.sibyl.protocol.DecisionVisitor() {
                    @Override
                    public void onCommit(long startTs, long commitTs) {
                    }

                    @Override
                    public void onAbort(long startTs) {
                    }

                    @Override
                    public void onForget(long startTs) {
                    }

                    @Override
                    public void onTmax(long tMax) {
                    }

                    @Override
                    public void onAbortRange(long from, long to) {
                        seen[0] = true;
                    }
                });
        return seen[0];
    }
}
