package io.sibyl.oracle.journal;

import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.LedgerHandle;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestInfo;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The BookKeeper journal on a real in-process ZooKeeper and 3 bookies (the default E2/W2/A2). */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class BookKeeperJournalTest {
    @RegisterExtension
    static final BookKeeperCluster cluster = BookKeeperCluster.perTestClass(3);

    /** Records fatal errors. */
    static final class Fatal implements FatalErrorListener {
        final CountDownLatch latch = new CountDownLatch(1);
        final AtomicReference<String> reason = new AtomicReference<>();
        final AtomicInteger calls = new AtomicInteger();

        @Override
        public void onFatalError(String why, Throwable cause) {
            calls.incrementAndGet();
            reason.set(why);
            latch.countDown();
        }

        boolean await(long seconds) throws InterruptedException {
            return latch.await(seconds, TimeUnit.SECONDS);
        }
    }

    /** A journal with its own clients and registry, as a fresh oracle would start it. */
    private record Opened(BookKeeperJournal journal, BookKeeper bk, ZooKeeper zk, LedgerRegistry registry,
                          Fatal fatal, RecoveredState recovered) {
    }

    private static Opened open(JournalSettings s) throws Exception {
        BookKeeper bk = cluster.bookKeeper(s);
        ZooKeeper zk = cluster.zooKeeper(s);
        LedgerRegistry registry = new LedgerRegistry(zk, s.ledgersZnode());
        RecoveredState recovered = JournalRecovery.recover(bk, registry, s, JournalClients.ownerName());
        Fatal fatal = new Fatal();
        BookKeeperJournal j = BookKeeperJournal.open(bk, registry, recovered.registry(), s, fatal);
        return new Opened(j, bk, zk, registry, fatal, recovered);
    }

    private static RecoveredState recoverWithNewClients(JournalSettings s) throws Exception {
        BookKeeper bk = cluster.bookKeeper(s);
        ZooKeeper zk = cluster.zooKeeper(s);
        try {
            return JournalRecovery.recover(bk, new LedgerRegistry(zk, s.ledgersZnode()), s, "recoverer");
        } finally {
            bk.close();
            zk.close();
        }
    }

    private static String name(TestInfo info) {
        return info.getTestMethod().orElseThrow().getName();
    }

    /**
     * journal.write.retry.ms=0 gives up at the first failed write; an add merely in flight has not failed, so a healthy
     * journal kept busy must not be stopped by the watchdog that bounds pending adds.
     */
    @Test
    void aWriteRetryOfZeroIsNoReasonToStopAHealthyBusyJournal(TestInfo info) throws Exception {
        JournalSettings s = cluster.settings(name(info)).withWriteRetryMs(0);
        Opened o = open(s);
        DecisionModel model = new DecisionModel(11, 1000);
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(1500); // 15 watchdog periods, adds in flight
        CountDownLatch last = null;
        while (System.nanoTime() < until && o.fatal().calls.get() == 0) {
            CountDownLatch done = new CountDownLatch(1);
            o.journal().append(model.nextBlock(6), done::countDown);
            last = done;
        }
        assertTrue(last.await(30, TimeUnit.SECONDS) || o.fatal().calls.get() > 0, "the last block was delivered");
        assertEquals(0, o.fatal().calls.get(), "stopped: " + o.fatal().reason.get());
        o.journal().close();
        model.assertRecovered(recoverWithNewClients(s));
    }

    @Test
    void callbacksRunInAppendOrderOneAtATimeAndBlocksShareEntries(TestInfo info) throws Exception {
        JournalSettings s = cluster.settings(name(info));
        Opened o = open(s);
        DecisionModel model = new DecisionModel(7, 1000);
        int threads = 4;
        int perThread = 3000;
        Object order = new Object();
        int[] nextSeq = {0};
        List<Integer> delivered = Collections.synchronizedList(new ArrayList<>());
        AtomicInteger concurrent = new AtomicInteger();
        AtomicBoolean overlapped = new AtomicBoolean();
        CountDownLatch all = new CountDownLatch(threads * perThread);
        List<Thread> workers = new ArrayList<>();
        for (int t = 0; t < threads; t++) {
            int seed = t;
            Thread w = new Thread(() -> {
                java.util.Random rnd = new java.util.Random(seed);
                for (int i = 0; i < perThread; i++) {
                    synchronized (order) { // the test defines the append order
                        int seq = nextSeq[0]++;
                        byte[] block = rnd.nextInt(10) == 0 ? null : model.nextBlock(6);
                        o.journal().append(block, () -> {
                            if (concurrent.incrementAndGet() != 1) {
                                overlapped.set(true);
                            }
                            delivered.add(seq);
                            concurrent.decrementAndGet();
                            all.countDown();
                        });
                    }
                }
            });
            workers.add(w);
            w.start();
        }
        for (Thread w : workers) {
            w.join();
        }
        assertTrue(all.await(30, TimeUnit.SECONDS), "every callback ran: " + o.journal().stats());
        assertFalse(overlapped.get(), "callbacks never run concurrently");
        for (int i = 0; i < delivered.size(); i++) {
            assertEquals(i, delivered.get(i), "callback order");
        }
        BookKeeperJournal.Stats st = o.journal().stats();
        assertTrue(st.sealedEntries() < st.appendedBlocks(),
                "group commit put several blocks in one entry: " + st);
        assertEquals(0, o.fatal().calls.get());
        o.journal().close();
        model.assertRecovered(recoverWithNewClients(s));
    }

    @Test
    void barrierWaitsForEarlierBlocksAndRunsAtOnceWhenNothingIsOutstanding(TestInfo info) throws Exception {
        // No idle flush and a long delay: the block waits in the batch for 300 ms.
        JournalSettings s = cluster.settings(name(info)).withGroupCommit(64 * 1024, 300_000, false, 8);
        Opened o = open(s);
        DecisionModel model = new DecisionModel(8, 1000);

        List<String> events = Collections.synchronizedList(new ArrayList<>());
        o.journal().append(null, () -> events.add("first barrier")); // nothing outstanding: runs at once
        assertEquals(List.of("first barrier"), events);

        // When the callbacks ran is taken inside them: a look from this thread after a sleep would fail whenever
        // a busy machine delays this thread past the 300 ms.
        long t0 = System.nanoTime();
        long[] ranAt = new long[2];
        CountDownLatch done = new CountDownLatch(2);
        o.journal().append(model.nextBlock(3), () -> {
            ranAt[0] = System.nanoTime();
            events.add("block");
            done.countDown();
        });
        o.journal().append(null, () -> {
            ranAt[1] = System.nanoTime();
            events.add("barrier");
            done.countDown();
        });
        assertTrue(done.await(10, TimeUnit.SECONDS));
        assertEquals(List.of("first barrier", "block", "barrier"), events, "the barrier waits for the block");
        for (int i = 0; i < 2; i++) {
            long waitedMs = (ranAt[i] - t0) / 1_000_000;
            assertTrue(waitedMs >= 250, events.get(i + 1) + " ran " + waitedMs + " ms after the append: the time"
                    + " trigger fires after about 300 ms");
        }

        // A barrier behind an entry in flight waits for that entry's acknowledgement.
        CountDownLatch second = new CountDownLatch(1);
        List<String> order = Collections.synchronizedList(new ArrayList<>());
        for (int i = 0; i < 5; i++) {
            int n = i;
            o.journal().append(model.nextBlock(3), () -> order.add("block" + n));
        }
        o.journal().append(null, () -> {
            order.add("barrier");
            second.countDown();
        });
        assertTrue(second.await(10, TimeUnit.SECONDS));
        assertEquals(List.of("block0", "block1", "block2", "block3", "block4", "barrier"), order);
        o.journal().close();
        model.assertRecovered(recoverWithNewClients(s));
    }

    @Test
    void sizeTriggerCutsEntriesAtBlockBoundaries(TestInfo info) throws Exception {
        JournalSettings s = cluster.settings(name(info)).withGroupCommit(1024, 2_000_000, false, 4);
        Opened o = open(s);
        DecisionModel model = new DecisionModel(9, 1000);
        int blocks = 400;
        CountDownLatch done = new CountDownLatch(blocks);
        long bytes = 0;
        for (int i = 0; i < blocks; i++) {
            byte[] b = model.nextBlock(30);
            bytes += b.length;
            o.journal().append(b, done::countDown);
        }
        o.journal().append(null, () -> { }); // (the batch tail waits for the 2 s timer)
        assertTrue(done.await(20, TimeUnit.SECONDS));
        BookKeeperJournal.Stats st = o.journal().stats();
        long minEntries = bytes / 1024;
        assertTrue(st.sealedEntries() >= minEntries && st.sealedEntries() <= 2 * minEntries + 2,
                "entries of about 1 KB: " + bytes + " bytes in " + st.sealedEntries() + " entries");
        o.journal().close();
        model.assertRecovered(recoverWithNewClients(s));
    }

    @Test
    void survivesCrashAndRecoversAcrossGenerationsAndRollovers(TestInfo info) throws Exception {
        // Small entries and small ledgers, so that rollover happens many times.
        JournalSettings s = cluster.settings(name(info)).withGroupCommit(256, 1000, true, 32).withRollover(4096, 20);
        Opened first = open(s);
        assertEquals(1, first.recovered().epoch());
        assertEquals(0, first.recovered().commitCount());
        DecisionModel model = new DecisionModel(10, 500);
        appendAndAwait(first.journal(), model, 3000, 10);
        assertTrue(first.journal().stats().ledgersCreated() > 3, "rolled over: " + first.journal().stats());

        // Crash: the clients vanish without closing the journal or its ledger.
        try {
            first.bk().close();
        } catch (RuntimeException e) {
            // BookKeeper 4.17 may fail an outstanding add's callback while closing (NPE); the client is gone anyway.
        }
        first.zk().close();

        Opened second = open(s);
        assertEquals(2, second.recovered().epoch());
        assertTrue(second.recovered().registry().ledgers().size() > 3);
        model.assertRecovered(second.recovered());
        assertTrue(second.recovered().lastTimestamp() >= model.lastTimestamp());

        // The new generation continues above everything recovered.
        DecisionModel continued = new DecisionModel(11, 500, second.recovered());
        appendAndAwait(second.journal(), continued, 1000, 10);
        second.journal().close(); // clean this time
        RecoveredState third = recoverWithNewClients(s);
        assertEquals(3, third.epoch());
        continued.assertRecovered(third);
    }

    @Test
    void recoveryFencesTheWriterWhoseCallbacksThenNeverRun(TestInfo info) throws Exception {
        JournalSettings s = cluster.settings(name(info));
        Opened writer = open(s);
        DecisionModel model = new DecisionModel(12, 100);
        appendAndAwait(writer.journal(), model, 500, 8);

        // A new oracle recovers (fencing registry and ledger) while the old one is still up.
        RecoveredState taken = recoverWithNewClients(s);
        model.assertRecovered(taken);

        AtomicBoolean ran = new AtomicBoolean();
        DecisionModel ignored = new DecisionModel(99, 100);
        writer.journal().append(ignored.nextBlock(4), () -> ran.set(true));
        writer.journal().append(null, () -> ran.set(true));
        assertTrue(writer.fatal().await(10), "the deposed writer stops");
        assertNotNull(writer.fatal().reason.get());
        writer.journal().append(ignored.nextBlock(4), () -> ran.set(true));
        Thread.sleep(300);
        assertFalse(ran.get(), "no callback runs after the takeover");
        assertEquals(1, writer.fatal().calls.get(), "one fatal error");
        assertTrue(writer.journal().isFailed());
        writer.journal().close();
        model.assertRecovered(recoverWithNewClients(s));
    }

    @Test
    void fencedLedgerStopsTheJournalOnItsNextAdd(TestInfo info) throws Exception {
        JournalSettings s = cluster.settings(name(info));
        Opened writer = open(s);
        DecisionModel model = new DecisionModel(13, 100);
        appendAndAwait(writer.journal(), model, 200, 8);

        // Fence the ledger alone (no registry change): only BookKeeper can tell the writer.
        BookKeeper other = cluster.bookKeeper(s);
        LedgerHandle fenced = other.openLedger(writer.journal().currentLedgerId(), BookKeeper.DigestType.CRC32C,
                s.password().getBytes(StandardCharsets.UTF_8));
        fenced.close();
        assertFalse(writer.journal().isFailed());

        AtomicBoolean ran = new AtomicBoolean();
        writer.journal().append(model.nextBlock(4), () -> ran.set(true));
        assertTrue(writer.fatal().await(10), "the add fails as fenced");
        assertTrue(writer.fatal().reason.get().contains("fenced"), writer.fatal().reason.get());
        Thread.sleep(200);
        assertFalse(ran.get());
        other.close();
        writer.journal().close();
    }

    @Test
    void zooKeeperSessionExpiryIsFatal(TestInfo info) throws Exception {
        JournalSettings s = cluster.settings(name(info));
        Opened writer = open(s);
        DecisionModel model = new DecisionModel(14, 100);
        appendAndAwait(writer.journal(), model, 50, 4);

        // Expire the session the classic way: another client joins it with its id and password, then closes.
        ZooKeeper twin = new ZooKeeper(cluster.zkConnect(), s.zkSessionTimeoutMs(), e -> { },
                writer.zk().getSessionId(), writer.zk().getSessionPasswd());
        // The twin must really join the session before it closes it (a slow machine may take seconds to connect).
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        while (!twin.getState().isConnected() && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        assertTrue(twin.getState().isConnected(), "the twin joined the writer's session: " + twin.getState());
        twin.close();

        assertTrue(writer.fatal().await(30), "session loss is fatal");
        assertTrue(writer.fatal().reason.get().contains("ZooKeeper"), writer.fatal().reason.get());
        AtomicBoolean ran = new AtomicBoolean();
        writer.journal().append(model.nextBlock(2), () -> ran.set(true));
        Thread.sleep(200);
        assertFalse(ran.get());
        writer.journal().close();
    }

    /**
     * Every block its own entry (no delay), paced so that adds complete while the next ones are being issued:
     * BookKeeper runs an add's callback under its own locks, so a journal that issued adds under its lock deadlocked
     * here within a second.
     */
    @Test
    void addsCompletingWhileOthersAreIssuedDoNotDeadlock(TestInfo info) throws Exception {
        JournalSettings s = cluster.settings(name(info)).withGroupCommit(64 * 1024, 0, true, 32);
        Opened o = open(s);
        DecisionModel model = new DecisionModel(16, 1000);
        int blocks = 6000;
        CountDownLatch done = new CountDownLatch(blocks);
        for (int i = 0; i < blocks; i++) {
            o.journal().append(model.nextBlock(20), done::countDown);
            java.util.concurrent.locks.LockSupport.parkNanos(150_000);
        }
        assertTrue(done.await(30, TimeUnit.SECONDS), "all acknowledged: " + o.journal().stats());
        o.journal().close();
    }

    @Test
    void bootstrapRecoversOpensAndOwnsItsClients(TestInfo info) throws Exception {
        JournalSettings s = cluster.settings(name(info));
        Fatal fatal = new Fatal();
        JournalBootstrap.Started first = JournalBootstrap.recoverAndOpen(s, "boot-1", fatal);
        assertEquals(1, first.recovered().epoch());
        DecisionModel model = new DecisionModel(15, 100);
        appendAndAwait(first.journal(), model, 300, 6);
        first.journal().close();

        JournalBootstrap.Started second = JournalBootstrap.recoverAndOpen(s, "boot-2", fatal);
        assertEquals(2, second.recovered().epoch());
        model.assertRecovered(second.recovered());
        second.journal().close();
        assertEquals(0, fatal.calls.get(), "closing the clients with the journal is not an error");
    }

    static void appendAndAwait(BookKeeperJournal j, DecisionModel model, int blocks, int maxRecords)
            throws InterruptedException {
        CountDownLatch done = new CountDownLatch(blocks);
        for (int i = 0; i < blocks; i++) {
            j.append(model.nextBlock(maxRecords), done::countDown);
        }
        assertTrue(done.await(30, TimeUnit.SECONDS), "acknowledged: " + j.stats());
    }
}
