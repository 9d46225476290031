package io.sibyl.oracle.journal;

import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.LedgerHandle;
import org.apache.bookkeeper.net.BookieId;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An oracle dies and one of the three bookies is lost before its successor recovers the journal (one machine running
 * both, say). Recovery must close the dead oracle's last ledger, and BookKeeper does that by writing the entries past
 * the last-add-confirmed again, to their write set: when the lost bookie is in it, BookKeeper must put a spare bookie
 * in its place. A ledger on all three bookies has no spare, so with the journal's ensemble at the number of bookies
 * no oracle could take over until the bookie came back. This class stops a bookie, so it has its own cluster.
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class BookieLostAtRecoveryTest {
    @RegisterExtension
    static final BookKeeperCluster cluster = BookKeeperCluster.perTestClass(3);

    @Test
    void recoveryClosesTheDeadOraclesLastLedgerWhenOneOfThreeBookiesIsLost() throws Exception {
        JournalSettings s = cluster.settings("lostAtRecovery");
        BookKeeper observer = cluster.bookKeeper(s);
        // The bookie the cluster stops next is the one started last: replace the newest one to learn its address.
        cluster.removeBookie();
        Set<BookieId> before = awaitWritable(observer, 2);
        cluster.addBookie();
        Set<BookieId> after = awaitWritable(observer, 3);
        after.removeAll(before);
        BookieId doomed = after.iterator().next();

        DecisionModel model = new DecisionModel(31, 50);
        for (int attempt = 0; ; attempt++) {
            assertTrue(attempt < 30, "no ledger of the journal was placed on " + doomed);
            BookKeeper bk = JournalClients.newBookKeeper(s);
            ZooKeeper zk = JournalClients.connectZooKeeper(s);
            LedgerRegistry registry = new LedgerRegistry(zk, s.ledgersZnode());
            RecoveredState recovered = JournalRecovery.recover(bk, registry, s, JournalClients.ownerName());
            if (attempt > 0) {
                model = new DecisionModel(31 + attempt, 50, recovered);
            }
            BookKeeperJournal journal = BookKeeperJournal.open(bk, registry, recovered.registry(), s,
                    new BookKeeperJournalTest.Fatal());
            List<Long> ledgers = registry.read().ledgers();
            long current = ledgers.get(ledgers.size() - 1);
            LedgerHandle view = observer.openLedgerNoRecovery(current, BookKeeper.DigestType.CRC32C,
                    s.password().getBytes(StandardCharsets.UTF_8));
            List<BookieId> ensemble = view.getLedgerMetadata().getAllEnsembles().get(0L);
            view.close();
            if (!ensemble.contains(doomed)) {
                journal.close(); // a ledger elsewhere: the next oracle gets another
                bk.close();
                zk.close();
                continue;
            }
            // One entry at a time, until the last one (past the last-add-confirmed the bookies know) is on the
            // doomed bookie; an ensemble of 2 has every entry on both.
            int w = s.writeQuorum();
            int at = ensemble.indexOf(doomed);
            for (long entry = 0; ; entry++) {
                appendAndAwait(journal, model);
                long offset = Math.floorMod(at - entry, ensemble.size());
                if (offset < w) {
                    break;
                }
            }
            // The oracle dies: its clients vanish without closing the ledger.
            try {
                bk.close();
            } catch (RuntimeException e) {
                // BookKeeper 4.17 may fail an outstanding callback while closing; the client is gone anyway
            }
            zk.close();
            break;
        }
        cluster.removeBookie();
        awaitWritable(observer, 2);

        BookKeeper bk = cluster.bookKeeper(s);
        ZooKeeper zk = cluster.zooKeeper(s);
        RecoveredState r = JournalRecovery.recover(bk, new LedgerRegistry(zk, s.ledgersZnode()), s, "successor");
        model.assertRecovered(r);
        // The successor can write too, on the two bookies left.
        BookKeeperJournal next = BookKeeperJournal.open(bk, new LedgerRegistry(zk, s.ledgersZnode()), r.registry(), s,
                new BookKeeperJournalTest.Fatal());
        DecisionModel continued = new DecisionModel(41, 50, r);
        appendAndAwait(next, continued);
        next.close();
        assertEquals(2, awaitWritable(observer, 2).size());
    }

    private static void appendAndAwait(BookKeeperJournal journal, DecisionModel model) throws InterruptedException {
        CountDownLatch done = new CountDownLatch(1);
        journal.append(model.nextBlock(4), done::countDown);
        assertTrue(done.await(20, TimeUnit.SECONDS), "block durable: " + journal.stats());
    }

    private static Set<BookieId> awaitWritable(BookKeeper bk, int count) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        while (true) {
            Set<BookieId> now = new HashSet<>(bk.getMetadataClientDriver().getRegistrationClient()
                    .getWritableBookies().get().getValue());
            if (now.size() == count || System.nanoTime() > deadline) {
                assertEquals(count, now.size(), "writable bookies " + now);
                return now;
            }
            Thread.sleep(20);
        }
    }
}
