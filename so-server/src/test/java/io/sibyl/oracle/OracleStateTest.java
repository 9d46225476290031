package io.sibyl.oracle;

import io.netty.buffer.Unpooled;
import io.sibyl.protocol.DecisionBlockReader;
import io.sibyl.protocol.Timestamps;
import io.sibyl.protocol.Wire;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Scenarios of the oracle's state machine: Algorithm 3, T_max, the aborted and uncommitted lists. */
class OracleStateTest {
    /** The shared limit alone: one owner may take every place (these tests are about the shared limit). */
    private static OracleConfig withoutQuota(OracleConfig c) {
        return c.withConnectionLimits(c.handshakeTimeoutMillis(), c.maxConnections(), c.maxRunningTransactions());
    }

    private static final OracleConfig ROOMY = OracleConfig.defaults().withCapacities(1 << 12, 1 << 10, 1 << 8);

    private static long[] rows(long... ids) {
        return ids;
    }

    private static long commit(OracleState s, long startTs, long... rowIds) {
        return s.commit(startTs, rowIds, rowIds.length);
    }

    /** Decodes a sealed block into "C s>c", "A s", "F s", "T t" records (reservations left out). */
    private static List<String> records(byte[] block) {
        List<String> out = new ArrayList<>();
        if (block == null) {
            return out;
        }
        DecisionBlockRoundTripTest.Recorder r = new DecisionBlockRoundTripTest.Recorder();
        DecisionBlockReader.readAll(Unpooled.wrappedBuffer(block), r);
        for (String rec : r.records) {
            if (!rec.startsWith("R") && !rec.equals("|")) {
                out.add(rec);
            }
        }
        return out;
    }

    /** Commits {@code n} one-row transactions on fresh rows; returns the commit timestamps. */
    private static long[] commitOthers(OracleState s, int n, long firstRow) {
        long[] out = new long[n];
        for (int i = 0; i < n; i++) {
            long t = s.begin(99);
            out[i] = commit(s, t, firstRow + i);
            assertTrue(out[i] > t);
        }
        return out;
    }

    @Test
    void firstCommitterWinsOnAWriteWriteConflict() {
        OracleState s = new OracleState(ROOMY);
        long t1 = s.begin(1);
        long t2 = s.begin(2);
        long c1 = commit(s, t1, 10, 11);
        assertTrue(c1 > t2, "commit timestamps come from the same clock as start timestamps");
        assertEquals(OracleState.CONFLICT, commit(s, t2, 11, 12), "row 11 committed after t2 started");
        assertEquals(Wire.STATUS_ABORTED, s.status(t2));
        assertEquals(List.of("C" + t1 + ">" + c1, "A" + t2), records(s.sealBlock()));
        long t3 = s.begin(2);
        assertTrue(commit(s, t3, 11, 12) > t3, "t3 started after c1: no conflict");
        assertEquals(Wire.STATUS_COMMITTED, s.status(t1));
        assertEquals(c1, s.commitTimestampOf(t1));
    }

    @Test
    void concurrentTransactionsWithDisjointWriteSetsBothCommit() {
        OracleState s = new OracleState(ROOMY);
        long t1 = s.begin(1);
        long t2 = s.begin(2);
        long c2 = commit(s, t2, 2);
        long c1 = commit(s, t1, 1);
        assertTrue(c2 > t2 && c1 > c2, "commit order is the order of decisions");
    }

    @Test
    void committingARowCommittedBeforeTheStartIsNoConflict() {
        OracleState s = new OracleState(ROOMY);
        long t1 = s.begin(1);
        commit(s, t1, 5);
        long t2 = s.begin(1);
        assertTrue(commit(s, t2, 5) > t2);
    }

    @Test
    void timestampsAreUniqueAndIncreasing() {
        OracleState s = new OracleState(ROOMY);
        Set<Long> seen = new HashSet<>();
        long last = 0;
        for (int i = 0; i < 500; i++) {
            long t = s.begin(i % 3);
            assertTrue(t > last && seen.add(t));
            last = t;
            if (i % 2 == 0) {
                long c = commit(s, t, i);
                assertTrue(c > last && seen.add(c));
                last = c;
            } else {
                s.finish(t);
            }
            assertEquals(last, s.clock());
        }
    }

    @Test
    void emptyWriteSetCommitsWithoutATimestampOrRecord() {
        OracleState s = new OracleState(ROOMY);
        s.sealBlock();
        long t = s.begin(1);
        s.sealBlock();
        assertEquals(t, s.commit(t, new long[0], 0));
        assertEquals(t, s.clock(), "no commit timestamp was drawn");
        assertNull(s.sealBlock());
        assertEquals(t + 1, s.lowWatermark(), "it left the running set");
    }

    @Test
    void tooOldAbortWhenTmaxPassedTheStartBeforeCommit() {
        OracleState s = new OracleState(OracleConfig.defaults().withCapacities(1 << 12, 4, 64));
        long old = s.begin(1);
        long[] others = commitOthers(s, 5, 100); // the 5th overflows the 4-entry window: T_max = others[0] > old
        assertEquals(others[0], s.tMax());
        assertEquals(OracleState.TOO_OLD, commit(s, old, 1), "conflicts on row 1 can no longer be checked");
        assertEquals(Wire.STATUS_ABORTED, s.status(old));
    }

    @Test
    void tooOldAbortWhenConflictTableEvictionPassedTheStart() {
        OracleState s = new OracleState(OracleConfig.defaults().withCapacities(8, 1 << 10, 64)); // 16 rows
        long old = s.begin(1);
        long t = s.begin(2);
        long[] many = new long[40];
        for (int i = 0; i < many.length; i++) {
            many[i] = 1000 + i;
        }
        long c = s.commit(t, many, many.length); // more rows than the table holds: evicts some of its own rows
        assertTrue(c > 0);
        assertEquals(c, s.tMax(), "the evicted rows were committed at c");
        assertEquals(OracleState.TOO_OLD, commit(s, old, 1));
        long fresh = s.begin(1);
        assertTrue(commit(s, fresh, 1000) > fresh, "a transaction that started after T_max can commit");
    }

    @Test
    void transactionPassedByTmaxWhileRunningIsAbortedAtSealAndCannotCommit() {
        OracleState s = new OracleState(OracleConfig.defaults().withCapacities(1 << 12, 2, 64));
        long reader = s.begin(1);
        long writer = s.begin(1);
        s.sealBlock();
        long[] others = commitOthers(s, 4, 100);
        assertTrue(s.tMax() > writer);
        assertEquals(Wire.STATUS_RUNNING, s.status(writer), "not yet aborted: that happens when the block is sealed");
        List<String> block = records(s.sealBlock());
        int tRecord = block.indexOf("T" + s.tMax());
        assertTrue(block.indexOf("A" + reader) >= 0 && block.indexOf("A" + reader) < tRecord, block.toString());
        assertTrue(block.indexOf("A" + writer) >= 0 && block.indexOf("A" + writer) < tRecord,
                "readers must learn the abort no later than the T_max that passes it: " + block);
        assertEquals(Wire.STATUS_ABORTED, s.status(writer));
        assertEquals(reader, s.lowWatermark(), "an aborted reader still holds the low watermark");
        assertEquals(OracleState.TOO_OLD, commit(s, writer, 5));
        assertEquals(List.of(), records(s.sealBlock()), "no second abort record");
        assertTrue(others.length > 0);
        s.finish(reader);
        assertEquals(s.clock() + 1, s.lowWatermark());
    }

    @Test
    void clientAbortOfATransactionTmaxAlreadyAbortedIsAcknowledgedOnce() {
        OracleState s = new OracleState(OracleConfig.defaults().withCapacities(1 << 12, 2, 64));
        long t = s.begin(1);
        commitOthers(s, 4, 100);
        s.sealBlock();
        assertTrue(s.abort(t));
        assertFalse(s.abort(t), "no longer running");
        assertEquals(OracleState.ALREADY_ABORTED, commit(s, t, 1), "T_max aborted it and its client gave it up");
    }

    @Test
    void abortedTransactionIsForgottenOnlyAfterCleanupAndAfterEveryOlderTransactionFinished() {
        OracleState s = new OracleState(ROOMY);
        long older = s.begin(1);
        long w = s.begin(2);
        long winner = s.begin(3);
        commit(s, winner, 7);
        assertEquals(OracleState.CONFLICT, commit(s, w, 7));
        s.sealBlock();
        long beforeReport = s.begin(3);
        s.finish(older);
        assertEquals(List.of(), records(s.sealBlock()), "not cleaned up yet: never forgotten");
        assertEquals(Wire.STATUS_ABORTED, s.status(w));

        assertTrue(s.cleanedUp(w));
        long afterReport = s.begin(4);
        assertEquals(List.of(), records(s.sealBlock()), beforeReport + " started before the report and still runs");
        assertEquals(Wire.STATUS_ABORTED, s.status(w));
        assertEquals(1, s.aborted().size());

        s.finish(beforeReport);
        assertEquals(List.of("F" + w), records(s.sealBlock()), "a reader that started after the report does not hold it");
        assertEquals(0, s.aborted().size());
        assertEquals(Wire.STATUS_UNKNOWN, s.status(w), "above T_max and known nowhere");
        assertTrue(afterReport > 0);
    }

    @Test
    void readerAbortedByTmaxStillDelaysForgettingUntilItFinishes() {
        OracleState s = new OracleState(OracleConfig.defaults().withCapacities(1 << 12, 2, 64));
        long longReader = s.begin(1);
        long w = s.begin(2);
        assertTrue(s.abort(w));
        assertTrue(s.cleanedUp(w));
        commitOthers(s, 4, 100);
        assertTrue(s.tMax() > longReader);
        assertFalse(records(s.sealBlock()).contains("F" + w), "the long reader may still hold a version of w");
        assertEquals(Wire.STATUS_ABORTED, s.status(w));
        s.finish(longReader);
        assertEquals(List.of("F" + w, "F" + longReader), records(s.sealBlock()),
                "w, and the long reader itself (T_max aborted it, it wrote nothing)");
    }

    @Test
    void readOnlyTransactionAbortedByTmaxLeavesTheAbortedSetAfterItFinishes() {
        OracleState s = new OracleState(OracleConfig.defaults().withCapacities(1 << 12, 2, 64));
        long r = s.begin(1);
        commitOthers(s, 4, 100);
        assertTrue(records(s.sealBlock()).contains("A" + r));
        assertEquals(1, s.aborted().size());
        s.finish(r);
        assertEquals(List.of("F" + r), records(s.sealBlock()), "it wrote nothing: nothing to clean up");
        assertEquals(0, s.aborted().size());
    }

    @Test
    void cleanedUpOfATransactionThatIsNotAbortedIsRefused() {
        OracleState s = new OracleState(ROOMY);
        long t = s.begin(1);
        assertFalse(s.cleanedUp(t), "running");
        long c = commit(s, t, 1);
        assertTrue(c > 0);
        assertFalse(s.cleanedUp(t), "committed");
        assertFalse(s.cleanedUp(12345), "unknown");
    }

    @Test
    void disconnectAbortsEveryRunningTransactionOfThatOwnerOnly() {
        OracleState s = new OracleState(ROOMY);
        long a = s.begin(1);
        long c = s.begin(2);
        long b = s.begin(1);
        long d = s.begin(1);
        s.finish(d);
        s.sealBlock();
        s.disconnect(1);
        assertEquals(List.of("A" + a, "A" + b), records(s.sealBlock()));
        assertEquals(Wire.STATUS_ABORTED, s.status(a));
        assertEquals(Wire.STATUS_ABORTED, s.status(b));
        assertEquals(Wire.STATUS_RUNNING, s.status(c));
        assertEquals(OracleState.ALREADY_ABORTED, commit(s, a, 1));
        assertEquals(a, s.lowWatermark(), "its client may still be reading: held for reader.grace.ms");
        assertTrue(commit(s, c, 1) > 0);
    }

    @Test
    void aLostClientsReadersHoldTheLowWatermarkForTheGracePeriodOnly() throws InterruptedException {
        long graceMs = 1000;
        OracleState s = new OracleState(ROOMY.withReaderGrace(graceMs));
        long a = s.begin(1);
        long c = s.begin(2);
        s.begin(1);
        long lost = System.nanoTime();
        s.disconnect(1);
        long held = s.lowWatermark();
        // Only a look taken within the grace period must see it held (a busy machine may stall this thread past it).
        if (System.nanoTime() - lost < graceMs * 1_000_000L) {
            assertEquals(a, held, "the lost client may go on reading its snapshot for a while");
        }
        long deadline = lost + 20_000_000_000L;
        while (s.lowWatermark() != c && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertEquals(c, s.lowWatermark(), "after the grace period only running transactions count");
        assertTrue(System.nanoTime() - lost >= graceMs * 1_000_000L, "held for the whole grace period");
    }

    @Test
    void commitAfterClientAbortIsAlreadyAborted() {
        OracleState s = new OracleState(ROOMY);
        long t = s.begin(1);
        assertTrue(s.abort(t));
        assertEquals(OracleState.ALREADY_ABORTED, commit(s, t, 1));
    }

    @Test
    void commitOfAnUnknownTransactionIsUnknown() {
        OracleState s = new OracleState(ROOMY);
        assertEquals(OracleState.UNKNOWN, commit(s, 42, 1));
        long t = s.begin(1);
        s.finish(t);
        assertEquals(OracleState.UNKNOWN, commit(s, t, 1), "a finished read-only transaction is gone");
    }

    @Test
    void retriedCommitReturnsTheSameCommitTimestamp() {
        OracleState s = new OracleState(ROOMY);
        long t = s.begin(1);
        long c = commit(s, t, 1, 2);
        long other = s.begin(2);
        commit(s, other, 3);
        assertEquals(c, commit(s, t, 1, 2));
        assertEquals(c, commit(s, t, 9), "the retry is answered from the decision, whatever rows it carries");
        assertEquals(1, records(s.sealBlock()).stream().filter(r -> r.startsWith("C" + t + ">")).count(),
                "one commit record");
    }

    @Test
    void recentCommitsOverflowRaisesTmaxEvenWithoutConflictTableEvictions() {
        OracleState s = new OracleState(OracleConfig.defaults().withCapacities(1 << 12, 4, 64));
        long[] c = new long[6];
        long[] t = new long[6];
        for (int i = 0; i < 6; i++) {
            t[i] = s.begin(1);
            c[i] = commit(s, t[i], 1); // one hot row: the conflict table never evicts
            assertEquals(i < 4 ? 0 : c[i - 4], s.tMax(), "after commit " + i);
            assertTrue(s.recentCommitCount() <= 4);
        }
        assertEquals(0, s.commitTimestampOf(t[1]), "forgotten: at or below T_max");
        assertEquals(Wire.STATUS_COMMITTED_LONG_AGO, s.status(t[1]));
        assertEquals(c[2], s.commitTimestampOf(t[2]));
        assertEquals(Wire.STATUS_COMMITTED, s.status(t[2]));
        assertTrue(records(s.sealBlock()).contains("T" + c[1]));
    }

    @Test
    void lowWatermarkIsTheOldestUnfinishedStartOrTheNextTimestamp() {
        OracleState s = new OracleState(ROOMY);
        assertEquals(1, s.lowWatermark());
        long a = s.begin(1);
        long b = s.begin(1);
        long c = s.begin(1);
        assertEquals(a, s.lowWatermark());
        commit(s, b, 1);
        assertEquals(a, s.lowWatermark());
        s.abort(a);
        assertEquals(c, s.lowWatermark());
        s.finish(c);
        assertEquals(s.clock() + 1, s.lowWatermark());
    }

    @Test
    void beginIsRefusedWhenMaxRunningTransactionsAreRunning() {
        OracleState s = new OracleState(withoutQuota(OracleConfig.defaults().withCapacities(1 << 12, 1 << 10, 4)));
        assertEquals(4, s.running().capacity());
        long oldest = s.begin(1);
        long[] others = new long[3];
        for (int i = 0; i < 3; i++) {
            others[i] = s.begin(1);
        }
        assertEquals(4, s.running().live());
        s.sealBlock();
        long clock = s.clock();
        assertEquals(OracleState.OVERLOADED, s.begin(2));
        assertEquals(OracleState.OVERLOADED, s.begin(1), "whoever asks");
        assertTrue(OracleState.OVERLOADED < 0);
        assertEquals(clock, s.clock(), "a refused begin draws no timestamp");
        assertEquals(4, s.running().live(), "and adds no running transaction");
        assertEquals(List.of(), records(s.sealBlock()), "nobody was evicted, nothing aborted");
        assertEquals(oldest, s.lowWatermark(), "the oldest still holds the low watermark");
        for (long t : new long[] {oldest, others[0], others[1], others[2]}) {
            assertEquals(Wire.STATUS_RUNNING, s.status(t));
        }
        assertEquals(Wire.STATUS_UNKNOWN, s.status(clock + 1), "no transaction was started at the next timestamp");

        long c = commit(s, oldest, 1);
        assertTrue(c > clock, "the oldest is unaffected: it commits");
        assertEquals(3, s.running().live());
        long next = s.begin(2);
        assertTrue(next > c, "a place is free again");
        assertEquals(4, s.running().live());
        assertEquals(OracleState.OVERLOADED, s.begin(2));
        s.finish(others[1]); // a read-only one in the middle finishes
        long another = s.begin(2);
        assertTrue(another > next);
        assertEquals(others[0], s.lowWatermark());
        assertTrue(commit(s, others[0], 2) > another);
        assertTrue(s.abort(others[2]));
        assertTrue(commit(s, next, 3) > 0);
        assertTrue(commit(s, another, 4) > 0);
        assertEquals(0, s.running().live());
    }

    /**
     * max.running.transactions.per.connection (by default half of max.running.transactions): one owner that holds its
     * quota is refused, and only it; every way a transaction ends gives its place back, except another connection's
     * abort, which leaves it counted (and holding the watermark) until its owner finishes it.
     */
    @Test
    void oneOwnerAtItsQuotaIsRefusedWhileOthersStillBegin() {
        OracleState s = new OracleState(OracleConfig.defaults().withCapacities(1 << 12, 1 << 10, 8));
        assertEquals(4, s.running().capacityPerOwner(), "half of max.running.transactions");
        long[] mine = new long[4];
        for (int i = 0; i < 4; i++) {
            mine[i] = s.begin(1);
            assertTrue(mine[i] > 0);
        }
        long clock = s.clock();
        assertEquals(OracleState.OWNER_OVERLOADED, s.begin(1));
        assertEquals(clock, s.clock(), "a refused begin draws no timestamp");
        assertEquals(4, s.running().live());
        assertEquals(4, s.running().liveOf(1));
        long[] theirs = new long[4];
        for (int i = 0; i < 4; i++) {
            theirs[i] = s.begin(2 + i % 2);
            assertTrue(theirs[i] > clock, "another owner begins while owner 1 is at its quota");
        }
        assertEquals(OracleState.OVERLOADED, s.begin(4), "the shared limit still holds");
        assertEquals(OracleState.OWNER_OVERLOADED, s.begin(1), "an owner at its quota is told so first");

        assertTrue(commit(s, theirs[0], 1) > 0);
        assertEquals(OracleState.OWNER_OVERLOADED, s.begin(1), "a place of the shared limit is free, not of its own");
        assertTrue(commit(s, mine[0], 2) > 0);
        long again = s.begin(1);
        assertTrue(again > 0, "its commit gave its place back");
        assertEquals(OracleState.OWNER_OVERLOADED, s.begin(1));
        s.abortForOwner(mine[1]); // another connection aborts it: the owner may still be reading its snapshot
        assertEquals(OracleState.OWNER_OVERLOADED, s.begin(1), "still counted until its owner finishes it");
        assertEquals(OracleState.ALREADY_ABORTED, commit(s, mine[1], 3));
        long third = s.begin(1);
        assertTrue(third > again);
        s.finish(mine[2]);
        assertTrue(s.begin(1) > third, "a read-only transaction's finish gives its place back");
        assertEquals(4, s.running().liveOf(1));
        s.disconnect(1);
        assertEquals(0, s.running().liveOf(1));
        for (int i = 0; i < 4; i++) {
            assertTrue(s.begin(1) > 0, "its lost connection's places are free again");
        }
    }

    /** Transactions T_max aborted still run (their snapshots are protected by the low watermark): they still count. */
    @Test
    void transactionsAbortedByTmaxStillCountAgainstTheLimitUntilTheyFinish() {
        OracleState s = new OracleState(withoutQuota(OracleConfig.defaults().withCapacities(1 << 12, 2, 4)));
        long reader = s.begin(1);
        long writer = s.begin(1);
        commitOthers(s, 4, 100); // T_max passes both
        s.sealBlock();
        assertEquals(Wire.STATUS_ABORTED, s.status(reader));
        assertEquals(2, s.running().live());
        long a = s.begin(2);
        long b = s.begin(2);
        assertEquals(OracleState.OVERLOADED, s.begin(2));
        assertEquals(reader, s.lowWatermark());
        assertEquals(OracleState.TOO_OLD, commit(s, writer, 1), "its client learns it is aborted, and it leaves");
        assertEquals(3, s.running().live());
        long c = s.begin(2);
        assertTrue(c > b && b > a);
        assertEquals(reader, s.lowWatermark());
        s.finish(reader);
        assertEquals(a, s.lowWatermark());
    }

    /**
     * The limit is on running transactions, not on how far the oldest is behind: with a limit of 4, one long
     * transaction and thousands of short ones started and finished after it all get in.
     */
    @Test
    void aLongTransactionAndThousandsOfShortOnesAfterItFitInASmallLimit() {
        // Commit window and conflict table large enough that T_max never passes the long transaction.
        OracleState s = new OracleState(withoutQuota(OracleConfig.defaults().withCapacities(1 << 12, 1 << 12, 4)));
        long longOne = s.begin(1);
        long[] open = {s.begin(2), s.begin(2)};
        for (int i = 0; i < 5_000; i++) {
            long t = s.begin(3);
            assertTrue(t > 0, "begin " + i + " refused with " + s.running().live() + " running");
            assertEquals(4, s.running().live());
            assertEquals(OracleState.OVERLOADED, s.begin(3));
            // Finish one of the three younger ones (rotating which), so the finished ones scatter behind the long one.
            long victim = open[i % 2];
            open[i % 2] = t;
            if (i % 3 == 0) {
                s.finish(victim);
            } else {
                assertTrue(commit(s, victim, 1000 + i % 64) > 0);
            }
            if (i % 50 == 0) {
                s.sealBlock();
            }
            assertEquals(longOne, s.lowWatermark());
        }
        assertEquals(Wire.STATUS_RUNNING, s.status(longOne));
        assertTrue(s.tMax() < longOne);
        assertTrue(commit(s, longOne, 1) > 0, "the long transaction was never evicted: it commits");
        assertEquals(Math.min(open[0], open[1]), s.lowWatermark());
    }

    /**
     * A committed transaction whose commit timestamp the oracle no longer remembers (T_max passed it) must not be
     * answered TOO_OLD on a retried commit: it may have committed, so the answer is UNKNOWN (the client then asks).
     */
    @Test
    void commitOfATransactionThatIsNotRunningAndNotRememberedIsUnknownEvenBelowTmax() {
        OracleState s = new OracleState(OracleConfig.defaults().withCapacities(1 << 12, 2, 64));
        long committed = s.begin(1);
        long c = commit(s, committed, 1);
        assertTrue(c > 0);
        long readOnly = s.begin(1);
        s.finish(readOnly);
        commitOthers(s, 4, 100);
        s.sealBlock();
        assertTrue(s.tMax() > c && s.tMax() > readOnly);
        assertEquals(0, s.commitTimestampOf(committed), "forgotten");
        assertEquals(Wire.STATUS_COMMITTED_LONG_AGO, s.status(committed));
        assertEquals(OracleState.UNKNOWN, commit(s, committed, 1), "it did commit: TOO_OLD would be a lie");
        assertEquals(OracleState.UNKNOWN, commit(s, readOnly, 1));
        assertEquals(OracleState.UNKNOWN, commit(s, c, 1), "a commit timestamp, never a start, below T_max");
        assertEquals(Wire.STATUS_COMMITTED_LONG_AGO, s.status(committed), "the retry changed nothing");
        assertEquals(List.of(), records(s.sealBlock()), "and recorded nothing");
    }

    @Test
    void statusDistinguishesEveryState() {
        OracleState s = new OracleState(OracleConfig.defaults().withCapacities(1 << 12, 2, 64));
        long committed = s.begin(1);
        commit(s, committed, 1);
        long aborted = s.begin(1);
        s.abort(aborted);
        long running = s.begin(1);
        assertEquals(Wire.STATUS_COMMITTED, s.status(committed));
        assertEquals(Wire.STATUS_ABORTED, s.status(aborted));
        assertEquals(Wire.STATUS_RUNNING, s.status(running));
        assertEquals(Wire.STATUS_UNKNOWN, s.status(s.clock() + 5));
        commitOthers(s, 3, 100);
        assertTrue(s.tMax() > committed);
        assertEquals(Wire.STATUS_COMMITTED_LONG_AGO, s.status(committed));
        assertEquals(Wire.STATUS_ABORTED, s.status(aborted));
    }

    @Test
    void aFastPathTicketConflictsWithWritersAndReadersThatStartedBeforeItAndNoLaterOnes() {
        OracleState s = new OracleState(ROOMY);
        long before = s.begin(1);
        long serializableReader = s.begin(1);
        long ticket = s.ticket(rows(7, 70), 2);
        long after = s.begin(1);
        assertTrue(ticket > before && after > Timestamps.selfCommittedVersion(ticket),
                "the write's version lies between the two snapshots: " + before + " < " + ticket + " < " + after);
        assertEquals(0, ticket % Timestamps.STEP, "tickets are ordinary timestamps");
        assertEquals(OracleState.CONFLICT, commit(s, before, 7), "wrote row 7 concurrently with the fast path");
        assertEquals(OracleState.READ_CONFLICT, s.commit(serializableReader, rows(8, 7), 1, 1, 0),
                "read row 7 before the fast-path write");
        assertTrue(commit(s, after, 7) > after, "began after the write: sees it, no conflict");
        assertEquals(List.of("A" + before, "A" + serializableReader, "C" + after + ">" + (after + Timestamps.STEP)),
                records(s.sealBlock()), "nothing of the ticket itself is journaled");
        assertEquals(1, s.counts().tickets());
    }
}
