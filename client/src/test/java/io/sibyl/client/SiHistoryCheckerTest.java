package io.sibyl.client;

import io.sibyl.client.SiHistory.Op;
import io.sibyl.client.SiHistory.Outcome;
import io.sibyl.client.SiHistory.Tx;
import io.sibyl.client.SiHistoryChecker.Anomaly;
import io.sibyl.client.SiHistoryChecker.Report;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.sibyl.client.SiHistory.Outcome.ABORTED;
import static io.sibyl.client.SiHistory.Outcome.COMMITTED;
import static io.sibyl.client.SiHistory.Outcome.UNKNOWN;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The checker on hand-made histories: each anomaly SI forbids is reported, and what SI allows (write skew, unknown
 * outcomes either way) is not. Keys are 0 (x) and 1 (y); transactions overlap in time unless a test says otherwise.
 */
class SiHistoryCheckerTest {
    private static final int X = 0;
    private static final int Y = 1;

    private static Tx tx(int id, Outcome outcome, Op... ops) {
        return tx(id, outcome, 0, outcome == COMMITTED ? 1_000 : Long.MAX_VALUE, ops);
    }

    /** Overlapping transactions: all begin at 0 and commit at 1000 unless given times. */
    private static Tx tx(int id, Outcome outcome, long invoke, long ack, Op... ops) {
        return new Tx(id, "t", List.of(ops), outcome, invoke, ack, id, id);
    }

    private static Op r(int key, Long... list) {
        return Op.read(key, List.of(list));
    }

    private static Op a(int key, long element) {
        return Op.append(key, element);
    }

    private static Report check(Tx... txs) {
        Report r = SiHistoryChecker.check(List.of(txs));
        System.out.println(r.summary() + " " + r.findings());
        return r;
    }

    private static void assertFound(Anomaly expected, Report r) {
        assertTrue(r.has(expected), "expected " + expected + ", got " + r.findings());
    }

    @Test
    void serialHistoryWithOwnReadsAndUnknownOutcomesIsSi() {
        Report r = check(
                tx(1, COMMITTED, r(X), a(X, 1), r(X, 1L), r(Y), a(Y, 2)),
                tx(2, COMMITTED, r(X, 1L), a(X, 3), a(X, 4), r(X, 1L, 3L, 4L)),
                tx(3, ABORTED, r(X, 1L, 3L, 4L), a(X, 5), r(X, 1L, 3L, 4L, 5L)),
                tx(4, UNKNOWN, r(Y, 2L), a(Y, 6)), // seen below: it committed
                tx(5, UNKNOWN, r(X, 1L, 3L, 4L), a(X, 7)), // never seen: it did not
                tx(6, COMMITTED, r(X, 1L, 3L, 4L), r(Y, 2L, 6L)));
        assertTrue(r.ok(), r.findings().toString());
    }

    @Test
    void writeSkewIsAllowed() {
        Report r = check(
                tx(1, COMMITTED, r(X), r(Y), a(X, 1)),
                tx(2, COMMITTED, r(X), r(Y), a(Y, 2)),
                tx(3, COMMITTED, r(X, 1L), r(Y, 2L)));
        assertTrue(r.ok(), r.findings().toString());
        assertTrue(r.edges() >= 2, "the two rw edges are there: " + r.summary());
    }

    @Test
    void writeSkewIsFoundAsG2WhenTheHistoryMustBeSerializable() {
        Report r = SiHistoryChecker.checkSerializable(List.of(
                tx(1, COMMITTED, r(X), r(Y), a(X, 1)),
                tx(2, COMMITTED, r(X), r(Y), a(Y, 2)),
                tx(3, COMMITTED, r(X, 1L), r(Y, 2L))));
        assertFound(Anomaly.G2, r);
        Report serial = SiHistoryChecker.checkSerializable(List.of(
                tx(1, COMMITTED, r(X), r(Y), a(X, 1)),
                tx(2, COMMITTED, r(X, 1L), r(Y), a(Y, 2)),
                tx(3, COMMITTED, r(X, 1L), r(Y, 2L))));
        assertTrue(serial.ok(), serial.findings().toString());
    }

    @Test
    void g0WriteCycleIsFound() {
        // Blind appends: x orders T1 before T2, y the other way round.
        Report r = check(
                tx(1, COMMITTED, a(X, 1), a(Y, 3)),
                tx(2, COMMITTED, a(X, 2), a(Y, 4)),
                tx(3, COMMITTED, r(X, 1L, 2L), r(Y, 4L, 3L)));
        assertFound(Anomaly.G0, r);
    }

    @Test
    void g1aAbortedReadIsFound() {
        Report r = check(
                tx(1, ABORTED, r(X), a(X, 1)),
                tx(2, COMMITTED, r(X, 1L)));
        assertFound(Anomaly.G1A, r);
    }

    @Test
    void g1bIntermediateReadIsFound() {
        Report r = check(
                tx(1, COMMITTED, r(X), a(X, 1), a(X, 2)),
                tx(2, COMMITTED, r(X, 1L)),
                tx(3, COMMITTED, r(X, 1L, 2L)));
        assertFound(Anomaly.G1B, r);
    }

    @Test
    void g1cCircularInformationFlowIsFound() {
        // Each reads the other's append: wr edges both ways.
        Report r = check(
                tx(1, COMMITTED, a(X, 1), r(Y, 2L)),
                tx(2, COMMITTED, a(Y, 2), r(X, 1L)));
        assertFound(Anomaly.G1C, r);
    }

    @Test
    void readSkewIsFoundAsGSingle() {
        // T2 sees T1's append to x but not its append to y: wr T1->T2 and rw T2->T1, one snapshot cannot explain it.
        Report r = check(
                tx(1, COMMITTED, r(X), a(X, 1), r(Y), a(Y, 2)),
                tx(2, COMMITTED, r(X, 1L), r(Y)),
                tx(3, COMMITTED, r(X, 1L), r(Y, 2L)));
        assertFound(Anomaly.READ_SKEW, r);
        assertFound(Anomaly.G_SINGLE, r);
    }

    @Test
    void gSingleAcrossThreeTransactionsIsFound() {
        // T1 appends x; T2 reads x (sees T1) and appends y; T3 reads y (sees T2) but reads x empty: T3 -rw-> T1.
        // No single read is torn, only the cycle T1 -wr-> T2 -wr-> T3 -rw-> T1 shows it.
        Report r = check(
                tx(1, COMMITTED, a(X, 1)),
                tx(2, COMMITTED, r(X, 1L), a(Y, 2)),
                tx(3, COMMITTED, r(Y, 2L), r(X)),
                tx(4, COMMITTED, r(X, 1L), r(Y, 2L)));
        assertFalse(r.has(Anomaly.READ_SKEW), r.findings().toString());
        assertFound(Anomaly.G_SINGLE, r);
    }

    @Test
    void nonRepeatableReadIsFound() {
        Report r = check(
                tx(1, COMMITTED, r(X), a(X, 1)),
                tx(2, COMMITTED, r(X), r(X, 1L)));
        assertFound(Anomaly.READ_SKEW, r);
    }

    @Test
    void lostUpdateIsFound() {
        // Both read x empty and appended: the whole-list write of one erased the other.
        Report r = check(
                tx(1, COMMITTED, r(X), a(X, 1)),
                tx(2, COMMITTED, r(X), a(X, 2)),
                tx(3, COMMITTED, r(X, 2L)));
        assertFound(Anomaly.LOST_UPDATE, r);
        assertFound(Anomaly.LOST_WRITE, r);
    }

    @Test
    void divergingVersionsAreFound() {
        Report r = check(
                tx(1, COMMITTED, r(X), a(X, 1)),
                tx(2, COMMITTED, r(X), a(X, 2)),
                tx(3, COMMITTED, r(X, 1L)),
                tx(4, COMMITTED, r(X, 2L)));
        assertFound(Anomaly.INCOMPATIBLE_ORDER, r);
        assertFound(Anomaly.LOST_UPDATE, r);
    }

    @Test
    void aReadOnlyTransactionMayMissOtherClientsCommitsWithinItsStalenessOnly() {
        Tx writer = new Tx(1, "w-client0", List.of(r(X), a(X, 1)), COMMITTED, 0, 100, 1, 1);
        Tx last = new Tx(3, "w-client0", List.of(r(X, 1L)), COMMITTED, 10_000, 10_100, 3, 3);
        // Another client's read-only transaction, begun 400 ns after the commit with a staleness bound of 1000 ns.
        assertTrue(check(writer, new Tx(2, "r-client1", List.of(r(X)), COMMITTED, 500, 600, 2, 2, 1_000), last).ok());
        // Begun 1400 ns after: beyond its bound.
        assertFound(Anomaly.REAL_TIME, check(writer,
                new Tx(2, "r-client1", List.of(r(X)), COMMITTED, 1_500, 1_600, 2, 2, 1_000), last));
        // Its own client's commit it must see at once, whatever its bound.
        assertFound(Anomaly.REAL_TIME, check(writer,
                new Tx(2, "r-client0", List.of(r(X)), COMMITTED, 500, 600, 2, 2, 1_000), last));
    }

    @Test
    void staleReadAfterACommitReturnedIsFound() {
        // T2 began after T1's commit returned (500 > 100), yet does not see it.
        Report r = check(
                tx(1, COMMITTED, 0, 100, r(X), a(X, 1)),
                tx(2, COMMITTED, 500, 600, r(X)),
                tx(3, COMMITTED, 700, 800, r(X, 1L)));
        assertFound(Anomaly.REAL_TIME, r);
        // The same reads by a transaction that began before T1 committed are fine.
        assertTrue(check(
                tx(1, COMMITTED, 0, 100, r(X), a(X, 1)),
                tx(2, COMMITTED, 50, 600, r(X)),
                tx(3, COMMITTED, 700, 800, r(X, 1L))).ok());
    }

    @Test
    void ownWritesMissingAndGarbageAreFound() {
        assertFound(Anomaly.OWN_WRITES, check(tx(1, COMMITTED, r(X), a(X, 1), r(X))));
        assertFound(Anomaly.GARBLED, check(tx(1, COMMITTED, r(X, 9L))));
        assertFound(Anomaly.LOST_WRITE, check(tx(1, COMMITTED, r(X), a(X, 1)), tx(2, COMMITTED, r(X))));
    }

    /**
     * No false alarms: random interleavings of transactions on an in-memory SI store (snapshot at begin, own
     * writes visible, first committer wins, some rolled back, some with unknown outcomes) are all accepted, write
     * skews and all.
     */
    @Test
    void randomSnapshotIsolationHistoriesAreAccepted() {
        java.util.Random rnd = new java.util.Random(42);
        for (int round = 0; round < 20; round++) {
            List<Tx> h = simulateSi(rnd, 4, 400);
            Report r = SiHistoryChecker.check(h);
            assertTrue(r.ok(), "round " + round + ": " + r.summary() + " " + r.findings());
            assertTrue(r.committed() > 50, r.summary());
        }
    }

    /** Transactions on keys 0..keys-1 over an in-memory multi-version store with SI, interleaved at random. */
    private static List<Tx> simulateSi(java.util.Random rnd, int keys, int txs) {
        // Per key: committed versions as (commit time, list).
        List<List<Object[]>> versions = new java.util.ArrayList<>();
        for (int k = 0; k < keys; k++) {
            List<Object[]> initial = new java.util.ArrayList<>();
            initial.add(new Object[] {0L, List.<Long>of()});
            versions.add(initial);
        }
        record Open(int id, long start, List<Op> ops, java.util.Map<Integer, List<Long>> writes) {
        }
        List<Tx> out = new java.util.ArrayList<>();
        List<Open> open = new java.util.ArrayList<>();
        long clock = 1;
        long element = 0;
        int started = 0;
        while (started < txs || !open.isEmpty()) {
            clock++;
            if (started < txs && (open.isEmpty() || rnd.nextInt(4) == 0)) {
                open.add(new Open(++started, clock, new java.util.ArrayList<>(), new java.util.HashMap<>()));
                continue;
            }
            Open t = open.get(rnd.nextInt(open.size()));
            int k = rnd.nextInt(keys);
            List<Long> snapshot = null;
            for (Object[] v : versions.get(k)) {
                if ((long) v[0] < t.start()) {
                    @SuppressWarnings("unchecked") List<Long> l = (List<Long>) v[1];
                    snapshot = l;
                }
            }
            List<Long> seen = t.writes().getOrDefault(k, snapshot);
            int p = rnd.nextInt(10);
            if (p < 3) {
                t.ops().add(Op.read(k, seen));
            } else if (p < 7) {
                t.ops().add(Op.read(k, seen));
                t.ops().add(Op.append(k, ++element));
                List<Long> l = new java.util.ArrayList<>(seen);
                l.add(element);
                t.writes().put(k, List.copyOf(l));
            } else {
                open.remove(t);
                boolean conflict = false;
                for (int w : t.writes().keySet()) {
                    List<Object[]> vs = versions.get(w);
                    conflict |= (long) vs.get(vs.size() - 1)[0] > t.start();
                }
                Outcome o = conflict || rnd.nextInt(10) == 0 ? ABORTED : COMMITTED;
                if (o == COMMITTED) {
                    for (var w : t.writes().entrySet()) {
                        versions.get(w.getKey()).add(new Object[] {clock, w.getValue()});
                    }
                }
                // Some outcomes are not known to the client, whichever they were.
                Outcome told = rnd.nextInt(15) == 0 && !t.writes().isEmpty() ? UNKNOWN : o;
                out.add(new Tx(t.id(), "sim", List.copyOf(t.ops()), told, t.start(),
                        told == COMMITTED ? clock : Long.MAX_VALUE, t.start(), clock));
            }
        }
        List<Op> last = new java.util.ArrayList<>();
        for (int k = 0; k < keys; k++) {
            List<Object[]> vs = versions.get(k);
            @SuppressWarnings("unchecked") List<Long> l = (List<Long>) vs.get(vs.size() - 1)[1];
            last.add(Op.read(k, l));
        }
        out.add(new Tx(txs + 1, "sim", last, COMMITTED, clock + 1, clock + 2, clock + 1, clock + 1));
        return out;
    }
}
