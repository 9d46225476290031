package io.sibyl.oracle.journal;

import org.apache.bookkeeper.client.BookKeeper;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Losing one of three bookies under load at E3/W2/A2 does not stop the journal. BookKeeper alone cannot repair that
 * ensemble (no spare bookie) and closes the ledger; the journal moves to a new ledger on the two bookies left and
 * rewrites what was not acknowledged. This class stops a bookie, so it has its own cluster.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class BookieLossTest {
    @RegisterExtension
    static final BookKeeperCluster cluster = BookKeeperCluster.perTestClass(3);

    @Test
    void appendsContinueInOrderWhenOneOfThreeBookiesStops() throws Exception {
        // E3 on 3 bookies: no spare, so BookKeeper cannot repair the ledger and the journal must move on by itself.
        JournalSettings s = cluster.settings("bookieLoss").withQuorums(3, 2, 2);
        assertEquals(3, s.ensembleSize());
        assertEquals(2, s.writeQuorum());
        assertEquals(2, s.ackQuorum());
        BookKeeper bk = cluster.bookKeeper(s);
        ZooKeeper zk = cluster.zooKeeper(s);
        LedgerRegistry registry = new LedgerRegistry(zk, s.ledgersZnode());
        RecoveredState fresh = JournalRecovery.recover(bk, registry, s, "loss-test");
        BookKeeperJournalTest.Fatal fatal = new BookKeeperJournalTest.Fatal();
        BookKeeperJournal journal = BookKeeperJournal.open(bk, registry, fresh.registry(), s, fatal);

        DecisionModel model = new DecisionModel(21, 200);
        int total = 6000;
        int stopAt = 2000;
        List<Integer> delivered = Collections.synchronizedList(new ArrayList<>());
        CountDownLatch all = new CountDownLatch(total);
        AtomicInteger acked = new AtomicInteger();
        for (int i = 0; i < total; i++) {
            if (i == stopAt) {
                // Let the first part be acknowledged on the full ensemble, then stop a bookie with adds in flight.
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
                while (acked.get() < stopAt - 100 && System.nanoTime() < deadline) {
                    Thread.sleep(5);
                }
            }
            if (i == stopAt + 200) {
                cluster.removeBookie();
            }
            int seq = i;
            journal.append(model.nextBlock(8), () -> {
                delivered.add(seq);
                acked.incrementAndGet();
                all.countDown();
            });
            if (i % 50 == 0) {
                Thread.sleep(1); // keep the load going for a while rather than all at once
            }
        }
        assertTrue(all.await(40, TimeUnit.SECONDS), "all acknowledged (" + acked.get() + "): " + journal.stats()
                + (fatal.reason.get() == null ? "" : ", fatal: " + fatal.reason.get()));
        assertEquals(0, fatal.calls.get(), "no fatal error");
        for (int i = 0; i < total; i++) {
            assertEquals(i, delivered.get(i), "order");
        }
        BookKeeperJournal.Stats st = journal.stats();
        assertTrue(st.ledgersCreated() >= 2, "moved to a new ledger: " + st);
        assertTrue(st.resentEntries() > 0, "entries in flight were written again: " + st);
        journal.close();

        BookKeeper bk2 = cluster.bookKeeper(s);
        ZooKeeper zk2 = cluster.zooKeeper(s);
        RecoveredState r = JournalRecovery.recover(bk2, new LedgerRegistry(zk2, s.ledgersZnode()), s, "after-loss");
        model.assertRecovered(r);
    }
}
