package io.sibyl.oracle;

import io.sibyl.protocol.Timestamps;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The oracle's points of the past answer, for every timestamp kept, exactly the state a reader then saw. */
class HistoryPointsTest {
    private static final long SECOND = 1_000_000_000L;
    private final AtomicLong nanos = new AtomicLong(1_000 * SECOND);
    private final OracleState state = new OracleState(OracleConfig.defaults().withCapacities(1 << 12, 1 << 10, 1 << 8)
            .withHistory(new HistorySettings(60_000, 1000, 1 << 20)), nanos::get);

    /** Is the version of {@code writer} in the state the answer reads? (what a client's {@code HistoryPoint} says) */
    private boolean sees(HistoryPoints.Answer a, long writer) {
        if (Timestamps.isSelfCommitted(writer)) {
            return writer <= a.bound();
        }
        if (Arrays.binarySearch(a.committedAfter(), writer) >= 0) {
            return true;
        }
        return writer < a.point().snapshotTs && Arrays.binarySearch(a.point().running, writer) < 0
                && state.status(writer) != io.sibyl.protocol.Wire.STATUS_ABORTED;
    }

    private HistoryPoints.Answer at(long ts) {
        HistoryPoints.Answer a = state.readHorizon().historyAtTimestamp(ts);
        assertNull(a.refusal(), () -> "refused: " + a.refusal());
        return a;
    }

    @Test
    void everyTimestampReadsExactlyTheCommitsAtOrBelowIt() {
        long a = state.begin(1);
        long b = state.begin(1);
        long ca = state.commit(a, new long[] {1}, 1);
        long c = state.begin(1);
        long d = state.begin(1);
        assertTrue(state.abort(d));
        nanos.addAndGet(2 * SECOND); // the next commit records a new point first
        long cc = state.commit(c, new long[] {2}, 1);
        long ticket = state.ticket(new long[] {3}, 1);
        long fastPathVersion = Timestamps.selfCommittedVersion(ticket);
        long cb = state.commit(b, new long[] {4}, 1);

        for (long ts = a; ts <= cb; ts++) {
            HistoryPoints.Answer at = at(ts);
            assertEquals(ts, at.bound());
            assertEquals(ts >= ca, sees(at, a), "a at " + ts);
            assertEquals(ts >= cb, sees(at, b), "b at " + ts);
            assertEquals(ts >= cc, sees(at, c), "c at " + ts);
            assertFalse(sees(at, d), "aborted d at " + ts);
            assertEquals(ts >= fastPathVersion, sees(at, fastPathVersion), "fast-path write at " + ts);
        }
        assertTrue(state.readHorizon().historyFigures()[0] >= 2, "a point per interval with commits");
    }

    @Test
    void aBusyIntervalLogsThousandsOfCommitsAndStaysExact() {
        int n = 10_000; // more than one chunk of the log (4,096 commits)
        long[] starts = new long[n];
        long[] commits = new long[n];
        for (int i = 0; i < n; i++) {
            starts[i] = state.begin(1);
            commits[i] = state.commit(starts[i], new long[] {i}, 1);
        }
        assertEquals(1, state.readHorizon().historyFigures()[0],
                "within one interval every commit is logged after the start point");
        for (int probe : new int[] {0, 1, 4094, 4095, 4096, 4097, 8191, 8192, 8193, n - 1}) {
            HistoryPoints.Answer at = at(commits[probe]);
            assertTrue(sees(at, starts[probe]), "commit " + probe + " at its own timestamp");
            if (probe + 1 < n) {
                assertFalse(sees(at, starts[probe + 1]), "the next commit is not yet in the state at " + probe);
            }
            assertFalse(sees(at(commits[probe] - 1), starts[probe]), "commit " + probe + " just before it");
        }
    }

    @Test
    void aTimeReadsTheCommitsDecidedByThen() throws Exception {
        long a = state.begin(1);
        state.commit(a, new long[] {1}, 1);
        Thread.sleep(5);
        long between = System.currentTimeMillis();
        Thread.sleep(5);
        long b = state.begin(1);
        state.commit(b, new long[] {2}, 1);
        HistoryPoints.Answer then = state.readHorizon().historyAtTime(between);
        assertNull(then.refusal());
        assertTrue(sees(then, a));
        assertFalse(sees(then, b));
        HistoryPoints.Answer now = state.readHorizon().historyAtTime(System.currentTimeMillis());
        assertTrue(sees(now, b));
    }

    @Test
    void readsOutsideTheHistoryAreRefusedAndExpiredPointsLeave() {
        long a = state.begin(1);
        long ca = state.commit(a, new long[] {1}, 1);
        assertTrue(state.readHorizon().historyAtTimestamp(state.clock() + 2).refusal().contains("not been handed out"));
        assertTrue(state.readHorizon().historyAtTime(System.currentTimeMillis() + 60_000).refusal().contains("future"));
        nanos.addAndGet(61 * SECOND); // past the retention: no longer served, still kept for reads under way
        long b = state.begin(1);
        long cb = state.commit(b, new long[] {2}, 1);
        String refusal = state.readHorizon().historyAtTimestamp(ca).refusal();
        assertTrue(refusal.contains("older than the history") && refusal.contains("history.retention.ms=60000"),
                refusal);
        assertTrue(sees(at(cb), b), "the point recorded since is served");
        assertTrue(state.readHorizon().oldestHistoryPoint().snapshotTs < ca,
                "the oldest kept protects reads begun before");
        nanos.addAndGet(3_700 * SECOND); // past the retention and transaction.max.age.ms: every point leaves
        assertNull(state.readHorizon().oldestHistoryPoint());
    }

    @Test
    void anOracleWithoutRetentionRefusesNamingTheSetting() {
        OracleState plain = new OracleState(OracleConfig.defaults().withCapacities(1 << 12, 1 << 10, 1 << 8));
        plain.commit(plain.begin(1), new long[] {1}, 1);
        assertTrue(plain.readHorizon().historyAtTimestamp(1).refusal().contains("history.retention.ms=0"));
        assertNull(plain.readHorizon().oldestHistoryPoint());
    }
}
