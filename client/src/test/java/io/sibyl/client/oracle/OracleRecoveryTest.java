package io.sibyl.client.oracle;

import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.journal.BookKeeperCluster;
import io.sibyl.oracle.journal.JournalSettings;
import io.sibyl.oracle.journal.RecoveredState;
import io.sibyl.protocol.AbortedRange;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The oracle on the BookKeeper journal (real in-process ZooKeeper and 3 bookies, E2/W2/A2), replaced by recovery
 * while it runs: the new oracle fences the old one's journal, which stops serving through its fatal-error path. Every
 * acknowledged commit is committed afterwards, transactions running at the takeover end aborted (for the oracle and
 * for replicas, also after T_max passes them), and no timestamp is handed out twice; then once more.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class OracleRecoveryTest {
    /**
     * The first oracle keeps a large commit window, so T_max stays low and everything it decides lies in the range
     * the next one aborts; the next ones keep 16 commits, so recovery raises T_max past most recovered commits at
     * once and a few commits carry it past every old timestamp.
     */
    private static final OracleConfig ROOMY = OracleConfig.defaults().withPort(0)
            .withCapacities(1 << 16, 1 << 14, 1 << 12).withReplication(20, 64 << 20);
    private static final OracleConfig TIGHT = ROOMY.withCapacities(1 << 16, 16, 1 << 12);

    @RegisterExtension
    static final BookKeeperCluster cluster = BookKeeperCluster.perTestClass(3);

    private static OracleClient connect(JournaledOracle o) throws InterruptedException {
        return OracleClient.connect("127.0.0.1", o.port());
    }

    @Test
    void acknowledgedCommitsSurviveTakeoversAndRunningTransactionsEndAborted() throws Exception {
        JournalSettings js = cluster.settings("takeover");
        RecoveryWorkload work = new RecoveryWorkload(100);
        List<AutoCloseable> toClose = new ArrayList<>();
        try {
            JournaledOracle first = JournaledOracle.start(js, "oracle-1", ROOMY);
            toClose.add(first);
            assertEquals(null, first.recovered().inDoubtRange(), "a new journal has nothing in doubt");
            OracleClient c1 = connect(first);
            toClose.add(c1);
            AtomicBoolean stop = new AtomicBoolean();
            for (Thread t : work.start(c1, 4, 400, stop)) {
                t.join();
            }
            work.leaveRunning(c1, 5);
            assertTrue(work.acked.size() > 1000, work.toString());
            assertTrue(first.server().tMax() < work.running.stream().min(Long::compare).orElseThrow(),
                    "the running transactions are above T_max: only the range can abort them");

            // Takeover while the first oracle still serves: recovery fences its journal.
            JournaledOracle second = JournaledOracle.start(js, "oracle-2", TIGHT);
            toClose.add(second);
            assertTrue(first.server().awaitFatalError(20, TimeUnit.SECONDS), "the fenced oracle stops");
            assertNotNull(first.server().failure());
            assertClosed(first.port());
            waitClosed(c1);

            RecoveredState r2 = second.recovered();
            AbortedRange range = r2.inDoubtRange();
            assertNotNull(range);
            for (long t : work.running) {
                assertTrue(r2.isInDoubt(t), "running at the takeover: " + t);
            }
            assertTrue(second.server().tMax() > r2.tMax(), "recovery raised T_max past commits beyond the window");

            OracleClient c2 = connect(second);
            toClose.add(c2);
            assertEquals(1, c2.replica().abortedRanges().size(), "the HELLO carries the range");
            work.checkAfterRecovery(c2, false);
            // Carry T_max past every timestamp of the first oracle; the answers must not change.
            RecoveryWorkload more = new RecoveryWorkload(100);
            for (Thread t : more.start(c2, 2, 50, stop)) {
                t.join();
            }
            assertTrue(second.server().tMax() > range.to(), "T_max " + second.server().tMax() + " passed the range "
                    + range);
            work.checkAfterRecovery(c2, false);
            try (OracleClient c3 = connect(second)) {
                assertTrue(c3.replica().tMax() > range.to(), "a new connection starts above the range");
                work.checkAfterRecovery(c3, true);
                more.checkAfterRecovery(c3, false);
            }
            more.leaveRunning(c2, 3);

            // And again: the first range survives the second takeover, the second oracle's running ones join it.
            JournaledOracle third = JournaledOracle.start(js, "oracle-3", TIGHT);
            toClose.add(third);
            assertTrue(second.server().awaitFatalError(20, TimeUnit.SECONDS));
            assertEquals(1, third.recovered().abortedRanges().size());
            assertTrue(third.recovered().abortedRanges().get(0).sameInterval(range));
            try (OracleClient c4 = connect(third)) {
                assertEquals(2, c4.replica().abortedRanges().size());
                work.checkAfterRecovery(c4, false);
                more.checkAfterRecovery(c4, true);
            }
        } finally {
            for (int i = toClose.size() - 1; i >= 0; i--) {
                toClose.get(i).close();
            }
        }
    }

    /** The listening socket of a stopped oracle refuses connections (within 20 s: a busy machine is slow). */
    static void assertClosed(int port) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (System.nanoTime() < deadline) {
            try {
                new Socket("127.0.0.1", port).close();
            } catch (IOException refused) {
                return;
            }
            Thread.sleep(50);
        }
        fail("the oracle still accepts connections on port " + port);
    }

    static void waitClosed(OracleClient client) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (client.isOpen() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertFalse(client.isOpen(), "the fenced oracle closed its client connections");
    }
}
