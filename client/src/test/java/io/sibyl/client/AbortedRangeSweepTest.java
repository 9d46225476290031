package io.sibyl.client;

import io.sibyl.client.oracle.JournaledOracle;
import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.journal.BookKeeperCluster;
import io.sibyl.oracle.journal.JournalSettings;
import io.sibyl.protocol.AbortedRange;
import org.apache.hadoop.hbase.TableName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

import static io.sibyl.client.TestSupport.get;
import static io.sibyl.client.TestSupport.put;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A client JVM writes, then its oracle is replaced by recovery (BookKeeper journal, real bookies) while that
 * transaction runs, then the client is killed: the transaction is in doubt, aborted through the new oracle's aborted
 * range. The sweeper deletes its versions, leaves those of the range's commits, and reports the range; the oracle
 * forgets it (FORGET_RANGE), replicas drop it, a later recovery does not bring it back, and readers see committed data
 * only throughout.
 */
@ExtendWith(MiniCluster.class)
@Timeout(value = 240, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class AbortedRangeSweepTest {
    private static final int ROWS = 10;
    /** A commit window large enough that T_max stays below everything the first oracle decides (all in the range). */
    private static final OracleConfig CONFIG = OracleConfig.defaults().withPort(0)
            .withCapacities(1 << 16, 1 << 14, 1 << 12).withReaderGrace(2000)
            .withAdminSecretFile(TestSupport.adminSecretFile());

    @RegisterExtension
    static final BookKeeperCluster bookies = BookKeeperCluster.perTestClass(3);

    @Test
    void sweptRangeIsForgottenAndItsInDoubtVersionsAreGoneWhileItsCommitsStay() throws Exception {
        MiniCluster c = MiniCluster.get();
        JournalSettings js = bookies.settings("rangesweep");
        TableName name = c.createTable("rangeswept", "cf");
        List<AutoCloseable> toClose = new ArrayList<>();
        try (TTable t = new TTable(c.connection(), name)) {
            JournaledOracle first = JournaledOracle.start(js, "oracle-1", CONFIG);
            toClose.add(first);
            long committedBefore;
            long committedAfter;
            long inDoubt;
            try (TransactionManager tm1 = TransactionManager.create(c.connection(), "127.0.0.1", first.port())) {
                Transaction init = tm1.begin();
                put(t, init, "existing", "committed");
                put(t, init, "doomed", "still here");
                tm1.commit(init);
                committedBefore = init.getStartTimestamp();

                long[] after = new long[1];
                inDoubt = KilledClientProcess.inDoubtAcrossTakeover(c.configuration(), first.port(), name, ROWS,
                        "range-client", () -> {
                            Transaction later = tm1.begin();
                            put(t, later, "later", "committed too");
                            tm1.commit(later);
                            after[0] = later.getStartTimestamp();
                            // The takeover fences the first oracle while the child's transaction runs: in doubt.
                            toClose.add(JournaledOracle.start(js, "oracle-2", CONFIG));
                            assertTrue(first.server().awaitFatalError(20, TimeUnit.SECONDS), "the fenced oracle stops");
                            return null;
                        });
                committedAfter = after[0];
            }
            JournaledOracle second = (JournaledOracle) toClose.get(1);
            AbortedRange range = second.recovered().inDoubtRange();
            assertNotNull(range);
            assertTrue(range.isInDoubt(inDoubt), range + " holds the child's transaction " + inDoubt);
            assertTrue(range.isCommitted(committedBefore) && range.isCommitted(committedAfter),
                    range + " lists the commits above T_max at the crash");
            int written = TestSupport.versionsAt(name, inDoubt);
            assertEquals(ROWS + 2, written, "the child's writes and its delete are in HBase");

            try (TransactionManager tm = TestSupport.adminManager(c, second.port())) {
                assertEquals(1, tm.oracle().replica().abortedRanges().size(), "the HELLO carries the range");
                assertCommittedDataOnly(tm, t);
                // A recovered oracle holds its watermark down for the reader grace (readers of the oracle before).
                awaitOrFail(tm, () -> tm.oracle().lowWatermark().join() > range.to(),
                        "the watermark passes the range");

                AbortSweeper.Report dry = new AbortSweeper(tm, Set.of(name), Set.of(), 0, true).sweep();
                assertEquals(1, dry.abortedRanges(), dry.toString());
                assertEquals(written, dry.versionsFound(), "only the in-doubt versions, not the range's commits: "
                        + dry);
                assertEquals(0, dry.versionsDeleted(), dry.toString());
                assertEquals(1, second.server().stats().abortedRanges(), "a dry run reports nothing");

                AbortSweeper.Report r = new AbortSweeper(tm, Set.of(name), Set.of(), 200, false).sweep();
                assertEquals(1, r.abortedRanges(), r.toString());
                assertEquals(written, r.versionsDeleted(), r.toString());
                assertEquals(1, r.reportedCleanedUp(), r.toString());
                assertEquals(0, TestSupport.versionsAt(name, inDoubt));
                assertEquals(2, TestSupport.versionsAt(name, committedBefore), "a commit of the range stays");
                assertEquals(1, TestSupport.versionsAt(name, committedAfter), "a commit of the range stays");

                awaitOrFail(tm, () -> second.server().stats().abortedRanges() == 0
                        && tm.oracle().replica().abortedRanges().isEmpty(), "the oracle and the replica forget it");
                assertCommittedDataOnly(tm, t);
                AbortSweeper.Report again = new AbortSweeper(tm, Set.of(name), Set.of(), 0, false).sweep();
                assertEquals(0, again.abortedRanges(), "nothing left to sweep: " + again);
            }

            // The journal remembers: a third oracle does not bring the swept range back.
            JournaledOracle third = JournaledOracle.start(js, "oracle-3", CONFIG);
            toClose.add(third);
            assertTrue(second.server().awaitFatalError(20, TimeUnit.SECONDS));
            assertFalse(third.recovered().abortedRanges().stream().anyMatch(range::sameInterval),
                    "swept range replayed back: " + third.recovered().abortedRanges());
            try (TransactionManager tm = TestSupport.adminManager(c, third.port())) {
                assertCommittedDataOnly(tm, t);
            }
        } finally {
            for (int i = toClose.size() - 1; i >= 0; i--) {
                toClose.get(i).close();
            }
        }
    }

    private static void assertCommittedDataOnly(TransactionManager tm, TTable t) throws Exception {
        Transaction tx = tm.begin();
        assertEquals("committed", get(t, tx, "existing"));
        assertEquals("still here", get(t, tx, "doomed"));
        assertEquals("committed too", get(t, tx, "later"));
        for (int i = 0; i < ROWS; i++) {
            assertNull(get(t, tx, String.format("new%04d", i)), "a write of the in-doubt transaction");
        }
        tm.commit(tx);
    }

    /** Waits for {@code condition}, committing empty transactions meanwhile so that the oracle seals blocks. */
    private static void awaitOrFail(TransactionManager tm, BooleanSupplier condition, String what) {
        await(what).atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(50)).pollInSameThread().until(() -> {
            if (condition.getAsBoolean()) {
                return true;
            }
            tm.commit(tm.begin());
            return false;
        });
    }
}
