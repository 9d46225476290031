package io.sibyl.oracle.journal;

import io.sibyl.protocol.AbortedRange;
import io.sibyl.protocol.DecisionBlockWriter;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * On real bookies: a checkpoint far above the bookies' 5 MB frame limit (many aborted ranges full of commits) is
 * journaled in parts, the journal goes on, and both recovery and a standby's tailer rebuild it.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class BigCheckpointTest {
    @RegisterExtension
    static final BookKeeperCluster cluster = BookKeeperCluster.perTestClass(3);

    @Test
    void aCheckpointAboveTheBookieFrameLimitIsJournaledInPartsAndRecoveryAndTheStandbyRestoreIt() throws Exception {
        // Not much shorter than the default: an add pending this long is fatal too, and a loaded machine can take
        // seconds over the megabytes of checkpoint parts.
        JournalSettings s = cluster.settings("bigcheckpoint").withWriteRetryMs(10_000);
        BookKeeper bk = cluster.bookKeeper(s);
        ZooKeeper zk = cluster.zooKeeper(s);
        LedgerRegistry registry = new LedgerRegistry(zk, s.ledgersZnode());
        RecoveredState recovered = JournalRecovery.recover(bk, registry, s, JournalClients.ownerName());
        AtomicReference<String> fatal = new AtomicReference<>();
        BookKeeperJournal j = BookKeeperJournal.open(bk, registry, recovered.registry(), s,
                (why, cause) -> fatal.set(why));
        // Six earlier recoveries under load, each range carrying 1M commits above T_max at its crash.
        List<AbortedRange> ranges = new ArrayList<>();
        long from = 0;
        for (int r = 0; r < 6; r++) {
            long[] committed = new long[1_000_000];
            for (int i = 0; i < committed.length; i++) {
                committed[i] = from + 1 + 2L * i;
            }
            ranges.add(new AbortedRange(from, from + 2_000_001, committed));
            from += 2_000_001;
        }
        Checkpoint c = new Checkpoint(from, from, from, new long[] {from - 1}, ranges);
        assertTrue(c.encode().length > 5 << 20, "the checkpoint is above the bookies' frame limit");
        JournalTailer standby = new JournalTailer(cluster.bookKeeper(s), new LedgerRegistry(cluster.zooKeeper(s),
                s.ledgersZnode()), s);
        try {
            CountDownLatch first = new CountDownLatch(1);
            j.append(reserveBlock(from), first::countDown); // a block, so the checkpoint opens a new ledger
            assertTrue(first.await(20, TimeUnit.SECONDS));
            j.appendCheckpoint(c);
            CountDownLatch after = new CountDownLatch(1);
            j.append(reserveBlock(from), after::countDown);
            boolean durable = after.await(30, TimeUnit.SECONDS);
            assertNull(fatal.get(), "the journal stopped");
            assertTrue(durable, "the block appended after the checkpoint never became durable");

            // The newest entry of an open ledger is not confirmed to readers: one more block confirms the last part.
            CountDownLatch confirming = new CountDownLatch(1);
            j.append(reserveBlock(from), confirming::countDown);
            assertTrue(confirming.await(20, TimeUnit.SECONDS));
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (standby.replay().checkpoints() == 0 && System.nanoTime() < deadline) {
                standby.poll();
                Thread.sleep(20);
            }
            assertEquals(1, standby.replay().checkpoints(), "the standby rebuilt the checkpoint from its parts");
            assertSameState(c, standby.replay().result(recovered.registry(), standby.replay().stats(0, 0)));
        } finally {
            j.close();
        }

        RecoveredState again = JournalRecovery.recover(bk, registry, s, JournalClients.ownerName());
        assertSameState(c, again);
    }

    /** A decision block that changes nothing the checkpoint holds: a timestamp reservation up to {@code limit}. */
    private static byte[] reserveBlock(long limit) {
        DecisionBlockWriter w = new DecisionBlockWriter();
        w.start(0);
        w.reserve(limit);
        return w.seal();
    }

    private static void assertSameState(Checkpoint c, RecoveredState r) {
        assertEquals(c.tMax(), r.tMax());
        assertTrue(r.lastTimestamp() >= c.lastTimestamp());
        assertArrayEquals(c.aborted(), r.aborted());
        assertTrue(Checkpoint.sameRanges(c.abortedRanges(), r.abortedRanges()), "aborted ranges and their commits");
    }

    /**
     * The layout a write failure between two parts leaves: the first part acknowledged in L1, the rest written again
     * in L2, the checkpoint recorded in L1 (its first part's ledger) and every ledger before L1 dropped. Recovery
     * must read the checkpoint across the two ledgers instead of calling the journal incomplete.
     */
    @Test
    void recoveryReadsACheckpointWhosePartsSpanTheFirstRegisteredLedgerAndTheNext() throws Exception {
        JournalSettings s = cluster.settings("parts-across-ledgers");
        BookKeeper bk = cluster.bookKeeper(s);
        ZooKeeper zk = cluster.zooKeeper(s);
        try {
            LedgerRegistry registry = new LedgerRegistry(zk, s.ledgersZnode());
            LedgerRegistry.Snapshot reg = registry.fence("writer");
            byte[] password = s.password().getBytes(java.nio.charset.StandardCharsets.UTF_8);
            Checkpoint c = new Checkpoint(100, 100, 100, new long[] {7, 9, 11, 13, 15, 17, 19, 21, 23, 25}, List.of());
            List<byte[]> parts = c.entries(8);
            assertTrue(parts.size() > 2, "several parts: " + parts.size());

            org.apache.bookkeeper.client.LedgerHandle before = newLedger(bk, password);
            before.addEntry(reserveBlock(50));
            before.close();
            org.apache.bookkeeper.client.LedgerHandle first = newLedger(bk, password);
            first.addEntry(parts.get(0));
            first.close(); // broke at part 1
            org.apache.bookkeeper.client.LedgerHandle rest = newLedger(bk, password);
            for (int i = 1; i < parts.size(); i++) {
                rest.addEntry(parts.get(i));
            }
            rest.addEntry(reserveBlock(120));
            rest.close();
            for (org.apache.bookkeeper.client.LedgerHandle l : List.of(before, first, rest)) {
                reg = registry.addLedger(reg, l.getId());
            }
            registry.dropLedgers(reg, 1);

            RecoveredState r = JournalRecovery.recover(bk, registry, s, "next");
            assertEquals(100, r.tMax());
            assertArrayEquals(c.aborted(), r.aborted(), "the aborted set came from the checkpoint");
            assertTrue(r.maxReserved() >= 120, "and the block after it was replayed: " + r);
        } finally {
            bk.close();
            zk.close();
        }
    }

    private static org.apache.bookkeeper.client.LedgerHandle newLedger(BookKeeper bk, byte[] password)
            throws Exception {
        return bk.createLedger(3, 2, 2, BookKeeper.DigestType.CRC32C, password);
    }
}
