package io.sibyl.oracle.journal;

import org.apache.bookkeeper.client.BookKeeper;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * On real bookies: a journal whose adds keep failing while ledgers can still be created and registered (here an entry
 * larger than the bookies' 5 MB frame limit, which no ledger accepts) gives up after journal.write.retry.ms through
 * its fatal error, so a standby can take over, and does not register ledgers without bound meanwhile.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class UnwritableEntryTest {
    private static final long WRITE_RETRY_MS = 3000;

    @RegisterExtension
    static final BookKeeperCluster cluster = BookKeeperCluster.perTestClass(3);

    @Test
    void addsThatFailOnEveryNewLedgerEndInTheFatalErrorAfterTheWriteRetryTimeAndRegisterFewLedgers()
            throws Exception {
        JournalSettings s = cluster.settings("unwritable").withWriteRetryMs(WRITE_RETRY_MS);
        BookKeeper bk = cluster.bookKeeper(s);
        ZooKeeper zk = cluster.zooKeeper(s);
        LedgerRegistry registry = new LedgerRegistry(zk, s.ledgersZnode());
        RecoveredState recovered = JournalRecovery.recover(bk, registry, s, JournalClients.ownerName());
        AtomicReference<String> fatal = new AtomicReference<>();
        CountDownLatch stopped = new CountDownLatch(1);
        BookKeeperJournal j = BookKeeperJournal.open(bk, registry, recovered.registry(), s, (why, cause) -> {
            fatal.set(why);
            stopped.countDown();
        });
        try {
            CountDownLatch durable = new CountDownLatch(1);
            long start = System.nanoTime(); // before the append: the lower bound below holds however slow it is
            j.append(new byte[6 << 20], durable::countDown); // above the bookies' frame limit: never written
            assertTrue(stopped.await(WRITE_RETRY_MS + 20_000, TimeUnit.MILLISECONDS),
                    "the journal kept retrying an add that fails on every ledger: " + j.stats());
            long tookMs = (System.nanoTime() - start) / 1_000_000;
            assertTrue(tookMs >= WRITE_RETRY_MS - 100, "gave up after " + tookMs + " ms");
            assertTrue(fatal.get().contains("unwritable"), fatal.get());
            assertEquals(1, durable.getCount(), "the block was never durable, its callback must not run");
            long registered = registry.read().ledgers().size();
            assertTrue(registered <= 30, registered + " ledgers registered in " + tookMs + " ms of failing adds");
        } finally {
            j.close();
        }
    }
}
