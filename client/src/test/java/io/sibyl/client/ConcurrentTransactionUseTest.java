package io.sibyl.client;

import io.sibyl.client.oracle.CommitReplica;
import io.sibyl.client.oracle.OracleClient;
import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Mutation;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.coprocessor.ObserverContext;
import org.apache.hadoop.hbase.coprocessor.RegionCoprocessor;
import org.apache.hadoop.hbase.coprocessor.RegionCoprocessorEnvironment;
import org.apache.hadoop.hbase.coprocessor.RegionObserver;
import org.apache.hadoop.hbase.regionserver.MiniBatchOperationInProgress;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static io.sibyl.client.TestSupport.CF;
import static io.sibyl.client.TestSupport.b;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** One transaction misused from several threads at once: nothing reported written is lost, nothing half applied. */
@ExtendWith(MiniCluster.class)
class ConcurrentTransactionUseTest {
    private static TransactionManager tm;
    private static TTable t;

    @BeforeAll
    static void setUp() throws Exception {
        MiniCluster c = MiniCluster.get();
        tm = c.manager();
        t = new TTable(c.connection(), c.createTable("concurrent_use", "cf"));
    }

    @AfterAll
    static void close() {
        t.close();
        tm.close();
    }

    /**
     * Threads keep putting two-column rows into a transaction while another thread commits it. Every put that
     * returned normally must be committed whole; every put that threw must have left nothing.
     */
    @Test
    void putsRacingACommitAreCommittedWholeOrRefused() throws Exception {
        putsRacingACommit(tm, t, "r");
    }

    /** The same with every put sent to HBase at once: none may land outside the write set the commit sent. */
    @Test
    void writeThroughPutsRacingACommitAreCommittedWholeOrRefused() throws Exception {
        try (TransactionManager writeThrough = MiniCluster.get().manager(
                Map.of(TransactionManager.WRITE_BUFFER_BYTES, "0"));
             TTable wt = new TTable(writeThrough.getConnection(), t.getName())) {
            putsRacingACommit(writeThrough, wt, "wt");
        }
    }

    private static void putsRacingACommit(TransactionManager tm, TTable t, String rows) throws Exception {
        for (int round = 0; round < 20; round++) {
            Transaction tx = tm.begin();
            String prefix = rows + round + "-";
            int threads = 3;
            CountDownLatch started = new CountDownLatch(threads);
            AtomicBoolean stop = new AtomicBoolean();
            List<String> ok = new ArrayList<>();
            List<String> refused = new ArrayList<>();
            AtomicReference<Throwable> unexpected = new AtomicReference<>();
            List<Thread> writers = new ArrayList<>();
            for (int w = 0; w < threads; w++) {
                int id = w;
                Thread th = new Thread(() -> {
                    started.countDown();
                    for (int n = 0; !stop.get(); n++) {
                        String row = prefix + id + "-" + n;
                        try {
                            t.put(tx, new Put(b(row)).addColumn(CF, b("a"), b("x")).addColumn(CF, b("b"), b("y")));
                            synchronized (ok) {
                                ok.add(row);
                            }
                        } catch (IllegalStateException e) {
                            synchronized (refused) {
                                refused.add(row);
                            }
                            return;
                        } catch (Throwable e) {
                            unexpected.set(e);
                            return;
                        }
                    }
                });
                th.start();
                writers.add(th);
            }
            started.await();
            Thread.sleep(2);
            tm.commit(tx);
            stop.set(true);
            for (Thread th : writers) {
                th.join(10_000);
            }
            assertNull(unexpected.get());
            assertEquals(Transaction.Status.COMMITTED, tx.getStatus());
            Transaction check = tm.begin();
            List<Get> gets = new ArrayList<>();
            ok.forEach(r -> gets.add(new Get(b(r))));
            refused.forEach(r -> gets.add(new Get(b(r))));
            Result[] got = t.get(check, gets);
            for (int i = 0; i < got.length; i++) {
                String row = i < ok.size() ? ok.get(i) : refused.get(i - ok.size());
                int cells = got[i].size();
                if (i < ok.size()) {
                    assertEquals(2, cells, "put of " + row + " returned normally before the commit returned,"
                            + " but the committed row holds " + cells + " of its 2 cells");
                } else {
                    assertEquals(0, cells, "put of " + row + " was refused but left " + cells + " cells committed");
                }
            }
            tm.commit(check);
        }
    }

    /**
     * A thread reads a row it just wrote while other threads' writes to the same transaction fill the write buffer,
     * so that it is sent to HBase during the read. The read must still see the write (its own transaction's), not
     * miss it between HBase (fetched before the buffer was sent) and the buffer (copied after it was emptied).
     */
    @Test
    void aReadRacingAFlushByAnotherThreadStillSeesTheTransactionsOwnWrite() throws Exception {
        try (TransactionManager small = MiniCluster.get().manager(
                Map.of(TransactionManager.WRITE_BUFFER_BYTES, "2000"));
             TTable st = new TTable(small.getConnection(), t.getName())) {
            Transaction tx = small.begin();
            AtomicBoolean stop = new AtomicBoolean();
            AtomicReference<Throwable> failed = new AtomicReference<>();
            Thread filler = new Thread(() -> {
                for (int n = 0; !stop.get(); n++) {
                    try {
                        st.put(tx, new Put(b("fill-" + n)).addColumn(CF, b("a"), new byte[200]));
                    } catch (Throwable e) {
                        failed.set(e);
                        return;
                    }
                }
            });
            filler.start();
            List<String> missed = new ArrayList<>();
            try {
                for (int n = 0; n < 400 && missed.size() < 3; n++) {
                    String row = "own-" + n;
                    st.put(tx, new Put(b(row)).addColumn(CF, b("a"), b("x")));
                    if (st.get(tx, new Get(b(row))).isEmpty()) {
                        missed.add(row);
                    }
                }
            } finally {
                stop.set(true);
                filler.join(10_000);
            }
            assertNull(failed.get());
            assertTrue(missed.isEmpty(), "reads missed the transaction's own writes: " + missed);
            small.rollback(tx);
        }
    }

    /**
     * Threads begin, write and commit in a loop while the manager is closed. Each ends promptly; a commit that
     * returned is in the table, a transaction that failed in any way left nothing, and no commit is left in doubt.
     */
    @Test
    void closingTheManagerUnderRunningCommitsEndsEachCommittedOrRolledBack() throws Exception {
        for (int round = 0; round < 3; round++) {
            TransactionManager closing = MiniCluster.get().manager();
            int threads = 4;
            String prefix = "close" + round + "-";
            Map<String, String> outcome = new ConcurrentHashMap<>();
            CountDownLatch going = new CountDownLatch(threads);
            List<Thread> workers = new ArrayList<>();
            for (int w = 0; w < threads; w++) {
                int id = w;
                Thread th = new Thread(() -> {
                    going.countDown();
                    for (int n = 0; ; n++) {
                        String row = prefix + id + "-" + n;
                        try {
                            Transaction tx = closing.begin();
                            t.put(tx, new Put(b(row)).addColumn(CF, b("a"), b("x")));
                            closing.commit(tx);
                            outcome.put(row, "committed");
                        } catch (RollbackException | IllegalStateException
                                 | io.sibyl.client.oracle.OracleUnavailableException e) {
                            outcome.put(row, "failed " + e);
                            return;
                        } catch (Throwable e) {
                            outcome.put(row, "unexpected " + e);
                            return;
                        }
                    }
                });
                th.start();
                workers.add(th);
            }
            going.await();
            Thread.sleep(30);
            closing.close();
            for (Thread th : workers) {
                th.join(10_000);
                assertTrue(!th.isAlive(), "a worker still runs 10 s after the close");
            }
            Transaction check = tm.begin();
            for (Map.Entry<String, String> e : outcome.entrySet()) {
                assertTrue(!e.getValue().startsWith("unexpected"), e.getKey() + ": " + e.getValue());
                boolean visible = !t.get(check, new Get(b(e.getKey()))).isEmpty();
                assertEquals(e.getValue().equals("committed"), visible, e.getKey() + ": " + e.getValue());
            }
            tm.commit(check);
        }
    }

    /**
     * Two threads commit and roll back the same transaction at once (and a third commits it too). Exactly one
     * finishes it; the others get IllegalStateException; the data agrees with the status.
     */
    @Test
    void commitAndRollbackRacingOnOneTransactionFinishItOnce() throws Exception {
        for (int round = 0; round < 20; round++) {
            Transaction tx = tm.begin();
            String row = "finish-" + round;
            t.put(tx, new Put(b(row)).addColumn(CF, b("a"), b("x")));
            CountDownLatch go = new CountDownLatch(1);
            List<String> results = java.util.Collections.synchronizedList(new ArrayList<>());
            List<Thread> racers = new ArrayList<>();
            for (int r = 0; r < 3; r++) {
                boolean commit = r != 1;
                Thread th = new Thread(() -> {
                    try {
                        go.await();
                        if (commit) {
                            tm.commit(tx);
                        } else {
                            tm.rollback(tx);
                        }
                        results.add("ok");
                    } catch (IllegalStateException e) {
                        results.add("refused");
                    } catch (Throwable e) {
                        results.add("unexpected " + e);
                    }
                });
                th.start();
                racers.add(th);
            }
            go.countDown();
            for (Thread th : racers) {
                th.join(10_000);
            }
            assertEquals(1, results.stream().filter("ok"::equals).count(), results.toString());
            assertEquals(2, results.stream().filter("refused"::equals).count(), results.toString());
            Transaction check = tm.begin();
            boolean visible = !t.get(check, new Get(b(row))).isEmpty();
            tm.commit(check);
            assertEquals(tx.getStatus() == Transaction.Status.COMMITTED, visible, tx.toString());
            assertTrue(tx.getStatus() != Transaction.Status.RUNNING, tx.toString());
        }
    }

    /**
     * The manager is closed (application shutdown) while run()'s work is between its last write and its return.
     * run() must not return normally as if the work had committed: the close rolled its transaction back.
     */
    @Test
    void runDoesNotReportSuccessWhenTheManagerClosedUnderItsWork() throws Exception {
        TransactionManager closing = MiniCluster.get().manager();
        CountDownLatch written = new CountDownLatch(1);
        CountDownLatch closed = new CountDownLatch(1);
        AtomicReference<Object> outcome = new AtomicReference<>();
        Thread worker = new Thread(() -> {
            try {
                outcome.set(closing.run(tx -> {
                    try {
                        t.put(tx, new Put(b("run-closed")).addColumn(CF, b("a"), b("x")));
                    } catch (java.io.IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                    written.countDown();
                    try {
                        closed.await();
                    } catch (InterruptedException e) {
                        throw new IllegalStateException(e);
                    }
                    return "returned normally";
                }));
            } catch (Throwable e) {
                outcome.set(e);
            }
        });
        worker.start();
        written.await();
        closing.close();
        closed.countDown();
        worker.join(10_000);
        Transaction check = tm.begin();
        boolean visible = !t.get(check, new Get(b("run-closed"))).isEmpty();
        tm.commit(check);
        assertTrue(!visible, "the close rolled the work back");
        assertTrue(outcome.get() instanceof IllegalStateException ise && ise.getMessage().contains("closed"),
                "run() must fail, not return as if committed: " + outcome.get());
    }

    /**
     * A transaction of one manager used through a TTable on another manager's connection: fine while both are open;
     * once the other manager closed its connection, a put through that TTable is refused at once, not accepted and
     * failed only at commit.
     */
    @Test
    void aTTableOnAnotherManagersClosedConnectionRefusesWritesAtOnce() throws Exception {
        TransactionManager other = MiniCluster.get().manager(Map.of());
        TTable onOther = new TTable(other.getConnection(), t.getName());
        Transaction tx = tm.begin();
        onOther.put(tx, new Put(b("cross-a")).addColumn(CF, b("a"), b("x")));
        assertEquals(1, onOther.get(tx, new Get(b("cross-a"))).size());
        tm.commit(tx);
        other.close();
        Transaction late = tm.begin();
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> onOther.put(late, new Put(b("cross-b")).addColumn(CF, b("a"), b("x"))));
        assertTrue(e.getMessage().contains("connection of this TTable") && e.getMessage().contains("closed"),
                e.getMessage());
        t.put(late, new Put(b("cross-b")).addColumn(CF, b("a"), b("x"))); // the transaction itself is fine
        tm.commit(late);
        assertEquals(Transaction.Status.COMMITTED, late.getStatus());
    }

    /**
     * Threads increment one counter in one shared transaction, as they would on a plain HBase Table: each
     * increment reads the transaction's value and writes it plus one, so two interleaved ones lost an update.
     */
    @Test
    void incrementsFromSeveralThreadsInOneTransactionLoseNoUpdate() throws Exception {
        Transaction tx = tm.begin();
        int threads = 4;
        int each = 40;
        AtomicReference<Throwable> failed = new AtomicReference<>();
        List<Thread> workers = new ArrayList<>();
        for (int w = 0; w < threads; w++) {
            Thread th = new Thread(() -> {
                for (int n = 0; n < each; n++) {
                    try {
                        t.incrementColumnValue(tx, b("shared-counter"), CF, b("n"), 1);
                    } catch (Throwable e) {
                        failed.set(e);
                        return;
                    }
                }
            });
            th.start();
            workers.add(th);
        }
        for (Thread th : workers) {
            th.join(20_000);
        }
        assertNull(failed.get());
        assertEquals(threads * each, org.apache.hadoop.hbase.util.Bytes.toLong(
                t.get(tx, new Get(b("shared-counter"))).getValue(CF, b("n"))));
        tm.commit(tx);
    }

    /**
     * Work given to run() that throws a checked exception undeclared (as Kotlin, Scala or Groovy code and Lombok's
     * {@code @SneakyThrows} do) must roll its transaction back like an unchecked one, not leave it running at the
     * oracle, where it would hold the low watermark until the transaction max age.
     */
    @Test
    void runRollsBackWorkThatThrowsACheckedExceptionUndeclared() throws Exception {
        AtomicReference<Transaction> seen = new AtomicReference<>();
        java.io.IOException thrown = new java.io.IOException("from Kotlin");
        Throwable caught = null;
        try {
            tm.run(tx -> {
                seen.set(tx);
                try {
                    t.put(tx, new Put(b("sneaky")).addColumn(CF, b("a"), b("x")));
                } catch (java.io.IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
                return ConcurrentTransactionUseTest.<RuntimeException>sneakyThrow(thrown);
            });
        } catch (Throwable e) {
            caught = e;
        }
        assertEquals(thrown, caught, "the work's exception propagates as is");
        assertEquals(Transaction.Status.ROLLED_BACK, seen.get().getStatus());
    }

    /**
     * An interrupted thread's get, scan, write-through put and commit fail with an exception that says so, the
     * interrupt flag stays set (HBase's client clears it), the transaction is rolled back whole, and the manager
     * goes on serving.
     */
    @Test
    void anInterruptedReadWriteOrCommitFailsClearlyAndKeepsTheInterruptFlag() throws Exception {
        Transaction tx = tm.begin();
        t.put(tx, new Put(b("intr-a")).addColumn(CF, b("a"), b("x")));
        // HBase notices an interrupt when it waits for a reply (not if the reply is already there): either way the
        // call either succeeds or says it was interrupted, and the flag stays set.
        interrupted("get", () -> t.get(tx, new Get(b("intr-x"))));
        interrupted("a scan", () -> {
            try (ResultScanner s = t.getScanner(tx, new Scan())) {
                s.next();
            }
        });
        Thread.currentThread().interrupt();
        try {
            tm.commit(tx);
        } catch (RollbackException e) {
            assertTrue(e.getMessage().contains("interrupted while sending"), e.getMessage());
        }
        assertTrue(Thread.interrupted(), "commit keeps the interrupt flag");
        assertTrue(tx.getStatus() != Transaction.Status.RUNNING, tx.toString());

        Transaction w;
        try (TransactionManager writeThrough = MiniCluster.get().manager(
                Map.of(TransactionManager.WRITE_BUFFER_BYTES, "0"));
             TTable wt = new TTable(writeThrough.getConnection(), t.getName())) {
            w = writeThrough.begin();
            interrupted("a write-through put", () -> wt.put(w, new Put(b("intr-b")).addColumn(CF, b("a"), b("x"))));
            try {
                writeThrough.commit(w);
            } catch (RollbackException e) {
                assertEquals(Transaction.Status.ROLLED_BACK, w.getStatus());
            }
        }

        Transaction after = tm.begin(); // the manager still serves, and the data agrees with each outcome
        assertEquals(tx.getStatus() == Transaction.Status.COMMITTED, !t.get(after, new Get(b("intr-a"))).isEmpty());
        assertEquals(w.getStatus() == Transaction.Status.COMMITTED, !t.get(after, new Get(b("intr-b"))).isEmpty());
        t.put(after, new Put(b("intr-c")).addColumn(CF, b("a"), b("x")));
        tm.commit(after);
        assertEquals(Transaction.Status.COMMITTED, after.getStatus());
    }

    private static void interrupted(String what, org.junit.jupiter.api.function.Executable call) {
        Thread.currentThread().interrupt();
        try {
            call.execute();
        } catch (InterruptedIOException e) {
            // says what happened
        } catch (Throwable e) {
            throw new AssertionError(what + " failed for an interrupt with " + e, e);
        }
        assertTrue(Thread.interrupted(), what + " keeps the interrupt flag");
    }

    @SuppressWarnings("unchecked")
    private static <E extends Throwable> Void sneakyThrow(Throwable e) throws E {
        throw (E) e;
    }

    /**
     * Holds, while armed, the batches deleting row {@code mine} (a rollback's clean-up) and the gets of row {@code k},
     * before or after they read, each until its latch is released, so that a test can stop a rollback and a read at
     * chosen points.
     */
    public static final class HeldRegion implements RegionCoprocessor, RegionObserver {
        static volatile CountDownLatch deletes;
        static volatile CountDownLatch gets;
        static volatile CountDownLatch readGets;
        static final CountDownLatch DELETE_ARRIVED = new CountDownLatch(1);
        static final CountDownLatch GET_ARRIVED = new CountDownLatch(1);
        static final CountDownLatch GET_READ = new CountDownLatch(1);

        @Override
        public Optional<RegionObserver> getRegionObserver() {
            return Optional.of(this);
        }

        @Override
        public void preBatchMutate(ObserverContext<RegionCoprocessorEnvironment> c,
                                   MiniBatchOperationInProgress<Mutation> miniBatchOp) {
            if (miniBatchOp.getOperation(0) instanceof Delete d && Bytes.equals(d.getRow(), b("mine"))) {
                hold(deletes, DELETE_ARRIVED);
            }
        }

        @Override
        public void preGetOp(ObserverContext<RegionCoprocessorEnvironment> c, Get get, List<Cell> result) {
            if (Bytes.equals(get.getRow(), b("k"))) {
                hold(gets, GET_ARRIVED);
            }
        }

        @Override
        public void postGetOp(ObserverContext<RegionCoprocessorEnvironment> c, Get get, List<Cell> result) {
            if (Bytes.equals(get.getRow(), b("k"))) {
                hold(readGets, GET_READ);
            }
        }

        private static void hold(CountDownLatch latch, CountDownLatch arrived) {
            if (latch == null) {
                return;
            }
            arrived.countDown();
            try {
                latch.await(60, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * A rollback on another thread tells the oracle first and then deletes the transaction's versions; until it is
     * done the transaction is running for its other threads, so a get there must still read its snapshot (or be
     * refused): the replica must not let go of a commit after the snapshot, which T_max passed, before then. The get
     * is held in HBase until the rollback has told the oracle and replicated blocks have moved T_max on.
     */
    @Test
    void aGetWhileAnotherThreadRollsTheTransactionBackReadsItsSnapshotOrIsRefused() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = heldRegionTable();
        // A window of 4 commits, so that T_max soon passes a commit made after the transaction began.
        try (OracleServer oracle = oracleWithAWindowOfFourCommits();
             TransactionManager tm = unbufferedManagerOn(c, oracle);
             TTable table = new TTable(tm.getConnection(), name);
             OracleClient others = OracleClient.connect("127.0.0.1", oracle.port())) {
            Transaction init = tm.begin();
            TestSupport.put(table, init, "k", "before");
            tm.commit(init);
            Transaction later = tm.begin(); // begins before tx, commits after it began: not in its snapshot
            Transaction tx = tm.begin();
            TestSupport.put(table, tx, "mine", "x"); // in HBase: the rollback will delete it
            TestSupport.put(table, later, "k", "after");
            tm.commit(later);
            commitElsewhere(others, 0, 20);
            CommitReplica replica = tm.oracle().replica();
            awaitCaughtUp(replica, oracle);
            assertTrue(replica.tMax() > later.getCommitTimestamp(), "T_max passed the later commit");
            assertEquals("before", TestSupport.get(table, tx, "k"));

            CountDownLatch releaseGet = new CountDownLatch(1);
            CountDownLatch releaseDelete = new CountDownLatch(1);
            HeldRegion.gets = releaseGet;
            HeldRegion.deletes = releaseDelete;
            AtomicReference<Object> read = new AtomicReference<>();
            Thread reader = readerOfK(table, tx, read);
            Thread rollback = new Thread(() -> tm.rollback(tx), "rollback");
            try {
                reader.start();
                assertTrue(HeldRegion.GET_ARRIVED.await(60, TimeUnit.SECONDS), "the get reaches HBase");
                rollback.start();
                assertTrue(HeldRegion.DELETE_ARRIVED.await(60, TimeUnit.SECONDS), "the rollback deletes");
                commitElsewhere(others, 20, 40); // blocks reach the replica while the rollback is under way
                awaitCaughtUp(replica, oracle);
                HeldRegion.gets = null;
                releaseGet.countDown();
                reader.join(60_000);
            } finally {
                HeldRegion.gets = null;
                HeldRegion.deletes = null;
                releaseGet.countDown();
                releaseDelete.countDown();
                rollback.join(60_000);
            }
            Object seen = read.get();
            assertTrue("before".equals(seen) || seen instanceof IllegalStateException, "a get of a transaction"
                    + " being rolled back returned " + seen + " (\"after\" was committed after it began)");
            assertEquals(Transaction.Status.ROLLED_BACK, tx.getStatus());
        }
    }

    /**
     * The same race, through the aborted set: a get fetched a version of an aborted writer, the writer's clean-up
     * was reported, and the rollback on another thread told the oracle this transaction ended, so no running
     * transaction is older than the report and the oracle forgets the writer's abort. Resolved after that, the
     * version reads as committed long ago (below T_max, not aborted): the get must then be refused.
     */
    @Test
    void aGetWhileAnotherThreadRollsTheTransactionBackNeverReadsAnAbortedVersionTheOracleForgot() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = heldRegionTable();
        try (OracleServer oracle = oracleWithAWindowOfFourCommits();
             TransactionManager tm = unbufferedManagerOn(c, oracle);
             TTable table = new TTable(tm.getConnection(), name);
             OracleClient others = OracleClient.connect("127.0.0.1", oracle.port())) {
            Transaction init = tm.begin();
            TestSupport.put(table, init, "k", "before");
            tm.commit(init);
            Transaction zombie = tm.begin();
            TestSupport.put(table, zombie, "k", "aborted"); // in HBase
            commitElsewhere(others, 0, 20); // T_max passes it: aborted, and judged by the aborted set alone
            CommitReplica replica = tm.oracle().replica();
            awaitCaughtUp(replica, oracle);
            assertTrue(replica.isAborted(zombie.getStartTimestamp()));
            Transaction tx = tm.begin();
            TestSupport.put(table, tx, "mine", "x"); // in HBase: the rollback will delete it

            CountDownLatch releaseGet = new CountDownLatch(1);
            CountDownLatch releaseDelete = new CountDownLatch(1);
            HeldRegion.readGets = releaseGet;
            HeldRegion.deletes = releaseDelete;
            AtomicReference<Object> read = new AtomicReference<>();
            Thread reader = readerOfK(table, tx, read);
            Thread rollback = new Thread(() -> tm.rollback(tx), "rollback");
            try {
                reader.start();
                assertTrue(HeldRegion.GET_READ.await(60, TimeUnit.SECONDS), "the get has read the aborted version");
                tm.rollback(zombie); // deletes its version and reports the clean-up
                rollback.start();
                assertTrue(HeldRegion.DELETE_ARRIVED.await(60, TimeUnit.SECONDS), "the rollback deletes");
                long deadline = System.nanoTime() + 30_000_000_000L;
                while (replica.isAborted(zombie.getStartTimestamp()) && System.nanoTime() < deadline) {
                    commitElsewhere(others, 20, 21); // blocks go on being sealed and reach the replica
                    Thread.sleep(5);
                }
                assertTrue(!replica.isAborted(zombie.getStartTimestamp()), "the oracle forgot the abort");
                HeldRegion.readGets = null;
                releaseGet.countDown();
                reader.join(60_000);
            } finally {
                HeldRegion.readGets = null;
                HeldRegion.deletes = null;
                releaseGet.countDown();
                releaseDelete.countDown();
                rollback.join(60_000);
            }
            Object seen = read.get();
            assertTrue("before".equals(seen) || seen instanceof IllegalStateException, "a get of a transaction"
                    + " being rolled back returned " + seen + " (\"aborted\" was written by an aborted transaction)");
        }
    }

    /** An in-memory oracle whose commit window is 4 commits, so that T_max soon passes a commit. */
    private static OracleServer oracleWithAWindowOfFourCommits() throws Exception {
        return OracleServer.startInMemory(OracleConfig.defaults().withPort(0).withCapacities(1 << 10, 4, 1 << 12));
    }

    /** A manager on {@code oracle} whose puts go to HBase at once (they are there for a rollback to delete). */
    private static TransactionManager unbufferedManagerOn(MiniCluster c, OracleServer oracle) throws Exception {
        return c.manager(Map.of(TransactionManager.ORACLE_ADDRESS, "127.0.0.1:" + oracle.port(),
                TransactionManager.WRITE_BUFFER_BYTES, "0"));
    }

    /** A thread (not started) that reads row "k" in {@code tx} and leaves the value, or what it threw, in read. */
    private static Thread readerOfK(TTable table, Transaction tx, AtomicReference<Object> read) {
        return new Thread(() -> {
            try {
                read.set(TestSupport.get(table, tx, "k"));
            } catch (Throwable e) {
                read.set(e);
            }
        }, "reader");
    }

    /** A table whose region runs {@link HeldRegion}. */
    private static TableName heldRegionTable() throws IOException {
        TableName name = TableName.valueOf("held_region_" + System.nanoTime());
        try (org.apache.hadoop.hbase.client.Admin admin = MiniCluster.get().connection().getAdmin()) {
            admin.createTable(TableDescriptorBuilder.newBuilder(name).setColumnFamily(TTable.familyDescriptor("cf"))
                    .setCoprocessor(HeldRegion.class.getName()).build());
        }
        return name;
    }

    private static void commitElsewhere(OracleClient client, int from, int to) {
        for (int i = from; i < to; i++) {
            long ts = client.begin().join();
            client.commit(ts, new long[] {2_000_000L + i}).join();
        }
    }

    /** The oracle pushes the newest blocks to an idle connection. */
    private static void awaitCaughtUp(CommitReplica replica, OracleServer oracle) {
        await().atMost(Duration.ofSeconds(30)).pollInterval(Duration.ofMillis(5))
                .untilAsserted(() -> assertEquals(oracle.tMax(), replica.tMax(), "the replica caught up"));
    }
}
