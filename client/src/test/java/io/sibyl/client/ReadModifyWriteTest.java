package io.sibyl.client;

import org.apache.hadoop.hbase.CompareOperator;
import org.apache.hadoop.hbase.DoNotRetryIOException;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Append;
import org.apache.hadoop.hbase.client.CheckAndMutate;
import org.apache.hadoop.hbase.client.CheckAndMutateResult;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Increment;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.RowMutations;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.filter.SingleColumnValueFilter;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;

import static io.sibyl.client.TestSupport.CF;
import static io.sibyl.client.TestSupport.V;
import static io.sibyl.client.TestSupport.b;
import static io.sibyl.client.TestSupport.get;
import static io.sibyl.client.TestSupport.put;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code Increment}, {@code Append} and {@code CheckAndMutate} inside transactions: read in the snapshot, written
 * like puts, kept from losing updates by the write-write conflict check, and with HBase's own meaning of their
 * arguments (checked against a plain HBase table).
 */
@ExtendWith(MiniCluster.class)
class ReadModifyWriteTest {
    private static final byte[] HITS = b("hits");

    @Test
    void incrementCountsFromZeroSeesOwnIncrementsAndStaysInvisibleUntilCommit() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("rmw_inc", "cf");
        try (TransactionManager tm = c.manager(); TTable t = new TTable(c.connection(), name)) {
            Transaction tx = tm.begin();
            Result first = t.increment(tx, new Increment(b("page")).addColumn(CF, HITS, 5).addColumn(CF, V, 1));
            assertEquals(5, Bytes.toLong(first.getValue(CF, HITS)));
            assertEquals(1, Bytes.toLong(first.getValue(CF, V)));
            assertEquals(tx.getStartTimestamp(), first.getColumnLatestCell(CF, HITS).getTimestamp());
            assertEquals(8, t.incrementColumnValue(tx, b("page"), CF, HITS, 3));

            Transaction concurrent = tm.begin();
            assertTrue(t.get(concurrent, new Get(b("page"))).isEmpty(), "uncommitted increments are invisible");
            tm.commit(tx);
            assertTrue(t.get(concurrent, new Get(b("page"))).isEmpty(), "and stay so for an older snapshot");
            tm.commit(concurrent);

            Transaction later = tm.begin();
            assertEquals(8, Bytes.toLong(t.get(later, new Get(b("page"))).getValue(CF, HITS)));
            Result quiet = t.increment(later, new Increment(b("page")).addColumn(CF, HITS, 2).setReturnResults(false));
            assertTrue(quiet.isEmpty(), "setReturnResults(false) returns nothing, as in HBase");
            tm.rollback(later);

            Transaction last = tm.begin();
            assertEquals(8, Bytes.toLong(t.get(last, new Get(b("page"))).getValue(CF, HITS)),
                    "a rolled-back increment leaves no trace");
            tm.commit(last);
        }
    }

    @Test
    void concurrentIncrementsThroughRunLoseNoUpdate() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("rmw_race", "cf");
        int threads = 6;
        int perThread = 15;
        try (TransactionManager tm = c.manager(); TTable t = new TTable(c.connection(), name)) {
            AtomicInteger attempts = new AtomicInteger();
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                List<Future<?>> futures = new ArrayList<>();
                for (int th = 0; th < threads; th++) {
                    futures.add(pool.submit(() -> {
                        for (int i = 0; i < perThread; i++) {
                            tm.run(tx -> {
                                attempts.incrementAndGet();
                                try {
                                    t.increment(tx, new Increment(b("counter")).addColumn(CF, HITS, 1));
                                    return t.append(tx, new Append(b("counter")).addColumn(CF, V, b("x")));
                                } catch (IOException e) {
                                    throw new UncheckedIOException(e);
                                }
                            });
                        }
                        return null;
                    }));
                }
                for (Future<?> f : futures) {
                    f.get();
                }
            } finally {
                pool.shutdownNow();
            }
            Transaction reader = tm.begin();
            Result r = t.get(reader, new Get(b("counter")));
            assertEquals(threads * perThread, Bytes.toLong(r.getValue(CF, HITS)), attempts + " attempts");
            assertEquals(threads * perThread, r.getValue(CF, V).length, "every append kept");
            assertTrue(attempts.get() > threads * perThread, "the threads really raced (some attempts conflicted): "
                    + attempts);
            tm.commit(reader);
        }
    }

    @Test
    void incrementOfAColumnThatIsNotALongFailsAndWritesNothing() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("rmw_notlong", "cf");
        try (TransactionManager tm = c.manager(); TTable t = new TTable(c.connection(), name)) {
            Transaction init = tm.begin();
            put(t, init, "r", "four");
            tm.commit(init);
            Transaction tx = tm.begin();
            DoNotRetryIOException e = assertThrows(DoNotRetryIOException.class,
                    () -> t.increment(tx, new Increment(b("r")).addColumn(CF, V, 1)));
            assertTrue(e.getMessage().contains("4 bytes") && e.getMessage().contains("8-byte long"), e.getMessage());
            assertTrue(tx.isReadOnly(), "nothing was written");
            IllegalArgumentException range = assertThrows(IllegalArgumentException.class, () -> t.increment(tx,
                    new Increment(b("r")).addColumn(CF, HITS, 1).setTimeRange(0, 100)));
            assertTrue(range.getMessage().contains("time range"), range.getMessage());
            assertThrows(IllegalArgumentException.class, () -> t.append(tx, new Append(b("r"))));
            tm.commit(tx);
        }
    }

    @Test
    void incrementByZeroReadsWithoutJoiningTheWriteSet() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("rmw_zero", "cf");
        try (TransactionManager tm = c.manager(); TTable t = new TTable(c.connection(), name)) {
            Transaction init = tm.begin();
            t.incrementColumnValue(init, b("n"), CF, V, 41);
            tm.commit(init);
            Transaction reader = tm.begin();
            assertEquals(41, t.incrementColumnValue(reader, b("n"), CF, V, 0));
            Transaction writer = tm.begin();
            t.incrementColumnValue(writer, b("n"), CF, V, 1);
            tm.commit(writer);
            assertTrue(reader.isReadOnly());
            tm.commit(reader); // no conflict: it wrote nothing
        }
    }

    @Test
    void appendAddsToTheSnapshotValueAndToOwnWrites() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("rmw_append", "cf");
        try (TransactionManager tm = c.manager(); TTable t = new TTable(c.connection(), name)) {
            Transaction init = tm.begin();
            put(t, init, "log", "a");
            tm.commit(init);
            Transaction tx = tm.begin();
            assertEquals("ab", Bytes.toString(t.append(tx, new Append(b("log")).addColumn(CF, V, b("b")))
                    .getValue(CF, V)));
            Result r = t.append(tx, new Append(b("log")).addColumn(CF, V, b("c")).addColumn(CF, HITS, b("new")));
            assertEquals("abc", Bytes.toString(r.getValue(CF, V)));
            assertEquals("new", Bytes.toString(r.getValue(CF, HITS)), "a missing column starts empty");
            tm.commit(tx);
            Transaction after = tm.begin();
            assertEquals("abc", get(t, after, "log"));
            tm.commit(after);
        }
    }

    @Test
    void checkAndMutateAppliesItsActionOnlyWhenTheSnapshotMatches() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("rmw_cam", "cf");
        try (TransactionManager tm = c.manager(); TTable t = new TTable(c.connection(), name)) {
            Transaction tx = tm.begin();
            CheckAndMutate create = CheckAndMutate.newBuilder(b("user")).ifNotExists(CF, V)
                    .build(new Put(b("user")).addColumn(CF, V, b("alice")));
            assertTrue(t.checkAndMutate(tx, create).isSuccess());
            assertFalse(t.checkAndMutate(tx, create).isSuccess(), "its own write is visible to the next check");
            assertEquals("alice", get(t, tx, "user"));

            CheckAndMutateResult bumped = t.checkAndMutate(tx, CheckAndMutate.newBuilder(b("user"))
                    .ifEquals(CF, V, b("alice")).build(new Increment(b("user")).addColumn(CF, HITS, 2)));
            assertTrue(bumped.isSuccess());
            assertEquals(2, Bytes.toLong(bumped.getResult().getValue(CF, HITS)));
            assertNull(t.checkAndMutate(tx, CheckAndMutate.newBuilder(b("user")).ifEquals(CF, V, b("alice"))
                    .build(new Put(b("user")).addColumn(CF, b("seen"), b("y")))).getResult(), "a put returns no result");

            CheckAndMutate byFilter = CheckAndMutate.newBuilder(b("user"))
                    .ifMatches(new SingleColumnValueFilter(CF, V, CompareOperator.EQUAL, b("bob")))
                    .build(new Delete(b("user")));
            assertFalse(t.checkAndMutate(tx, byFilter).isSuccess());
            CheckAndMutate rename = CheckAndMutate.newBuilder(b("user"))
                    .ifMatches(new SingleColumnValueFilter(CF, V, CompareOperator.EQUAL, b("alice")))
                    .build(RowMutations.of(List.of(new Put(b("user")).addColumn(CF, V, b("bob")),
                            new Delete(b("user")).addColumns(CF, b("seen")),
                            new Append(b("user")).addColumn(CF, b("names"), b("alice,")))));
            CheckAndMutateResult renamed = t.checkAndMutate(tx, rename);
            assertTrue(renamed.isSuccess());
            assertEquals("alice,", Bytes.toString(renamed.getResult().getValue(CF, b("names"))));
            Result now = t.get(tx, new Get(b("user")));
            assertEquals("bob", Bytes.toString(now.getValue(CF, V)));
            assertNull(now.getValue(CF, b("seen")));

            Transaction other = tm.begin();
            assertTrue(t.get(other, new Get(b("user"))).isEmpty(), "nothing visible before commit");
            tm.commit(tx);
            tm.commit(other);
        }
    }

    @Test
    void concurrentCreateIfAbsentHasExactlyOneWinner() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("rmw_unique", "cf");
        int threads = 5;
        try (TransactionManager tm = c.manager(); TTable t = new TTable(c.connection(), name)) {
            CyclicBarrier allChecked = new CyclicBarrier(threads);
            AtomicInteger winners = new AtomicInteger();
            AtomicInteger conflicts = new AtomicInteger();
            ExecutorService pool = Executors.newFixedThreadPool(threads);
            try {
                List<Future<?>> futures = new ArrayList<>();
                for (int th = 0; th < threads; th++) {
                    String me = "owner-" + th;
                    futures.add(pool.submit(() -> {
                        Transaction tx = tm.begin();
                        boolean claimed = t.checkAndMutate(tx, CheckAndMutate.newBuilder(b("lock")).ifNotExists(CF, V)
                                .build(new Put(b("lock")).addColumn(CF, V, b(me)))).isSuccess();
                        allChecked.await(); // every snapshot predates every commit
                        assertTrue(claimed, "each snapshot sees the row absent");
                        try {
                            tm.commit(tx);
                            winners.incrementAndGet();
                        } catch (RollbackException e) {
                            assertEquals(RollbackException.Reason.CONFLICT, e.getReason());
                            conflicts.incrementAndGet();
                        }
                        return null;
                    }));
                }
                for (Future<?> f : futures) {
                    f.get();
                }
            } finally {
                pool.shutdownNow();
            }
            assertEquals(1, winners.get());
            assertEquals(threads - 1, conflicts.get());
            Transaction reader = tm.begin();
            assertTrue(get(t, reader, "lock").startsWith("owner-"));
            tm.commit(reader);
        }
    }

    /** Every operator against a missing, an empty and a present column, with smaller, equal, larger and no value. */
    @Test
    void checkAndMutateConditionsMeanWhatTheyMeanInHBase() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName txName = c.createTable("rmw_ops_tx", "cf");
        TableName plainName = c.createTable("rmw_ops_plain", "cf");
        byte[][] stored = {null, b(""), b("m")};
        byte[][] expected = {b("a"), b("m"), b("z"), b(""), null};
        try (TransactionManager tm = c.manager(); TTable t = new TTable(c.connection(), txName);
             Table plain = c.raw(plainName)) {
            Transaction init = tm.begin();
            for (int s = 0; s < stored.length; s++) {
                if (stored[s] != null) {
                    t.put(init, new Put(b("row" + s)).addColumn(CF, V, stored[s]));
                    plain.put(new Put(b("row" + s)).addColumn(CF, V, stored[s]));
                }
            }
            tm.commit(init);
            int cases = 0;
            for (CompareOperator op : CompareOperator.values()) {
                if (op == CompareOperator.NO_OP) {
                    continue;
                }
                for (int s = 0; s < stored.length; s++) {
                    for (byte[] e : expected) {
                        byte[] row = b("row" + s);
                        CheckAndMutate check = CheckAndMutate.newBuilder(row).ifMatches(CF, V, op, e)
                                .build(new Put(row).addColumn(CF, HITS, b("hit")));
                        boolean hbase = plain.checkAndMutate(check).isSuccess();
                        Transaction tx = tm.begin();
                        boolean ours = t.checkAndMutate(tx, check).isSuccess();
                        tm.rollback(tx);
                        assertEquals(hbase, ours, op + " expected=" + (e == null ? "null" : Bytes.toString(e))
                                + " stored=" + (stored[s] == null ? "missing" : "'" + Bytes.toString(stored[s]) + "'"));
                        cases++;
                    }
                }
            }
            assertEquals(6 * 3 * 5, cases);
        }
    }

    @Test
    void batchAndMutateRowRunIncrementsAndAppendsInOrder() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("rmw_batch", "cf");
        try (TransactionManager tm = c.manager(); TTable t = new TTable(c.connection(), name)) {
            Transaction tx = tm.begin();
            Result[] results = t.batch(tx, List.of(
                    new Put(b("r")).addColumn(CF, HITS, Bytes.toBytes(10L)),
                    new Increment(b("r")).addColumn(CF, HITS, 5),
                    new Append(b("r")).addColumn(CF, V, b("x")),
                    new Get(b("r"))));
            assertEquals(15, Bytes.toLong(results[1].getValue(CF, HITS)), "the increment saw the put before it");
            assertEquals("x", Bytes.toString(results[2].getValue(CF, V)));
            assertEquals(15, Bytes.toLong(results[3].getValue(CF, HITS)), "the get saw both");
            Result row = t.mutateRow(tx, RowMutations.of(List.of(
                    new Increment(b("r")).addColumn(CF, HITS, 1),
                    new Append(b("r")).addColumn(CF, V, b("y")))));
            assertEquals(16, Bytes.toLong(row.getValue(CF, HITS)));
            assertEquals("xy", Bytes.toString(row.getValue(CF, V)));
            assertThrows(IllegalArgumentException.class, () -> t.batch(tx, List.of(
                    new Increment(b("r")).addColumn(CF, HITS, 1),
                    new Increment(b("r")).addColumn(CF, HITS, 1).setTimeRange(0, 10))));
            tm.commit(tx);
            Transaction after = tm.begin();
            Result r = t.get(after, new Get(b("r")));
            assertArrayEquals(Bytes.toBytes(16L), r.getValue(CF, HITS), "the refused batch changed nothing");
            tm.commit(after);
        }
    }

    @Test
    void aMutateRowThatFailsHalfwayLeavesTheTransactionRollBackOnly() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("rmw_half", "cf");
        try (TransactionManager tm = c.manager(); TTable t = new TTable(c.connection(), name)) {
            Transaction init = tm.begin();
            put(t, init, "r", "four");
            tm.commit(init);
            RowMutations rm = RowMutations.of(List.of(new Put(b("r")).addColumn(CF, HITS, b("x")),
                    new Increment(b("r")).addColumn(CF, V, 1)));
            Transaction tx = tm.begin();
            assertThrows(DoNotRetryIOException.class, () -> t.mutateRow(tx, rm));
            IllegalStateException stuck = assertThrows(IllegalStateException.class,
                    () -> t.get(tx, new Get(b("r"))));
            assertTrue(stuck.getMessage().contains("can only roll back"), stuck.getMessage());
            RollbackException e = assertThrows(RollbackException.class, () -> tm.commit(tx));
            assertEquals(RollbackException.Reason.WRITE_FAILED, e.getReason());

            CheckAndMutate cam = CheckAndMutate.newBuilder(b("r")).ifEquals(CF, V, b("four")).build(rm);
            Transaction other = tm.begin();
            assertThrows(DoNotRetryIOException.class, () -> t.checkAndMutate(other, cam));
            assertThrows(RollbackException.class, () -> tm.commit(other));

            Transaction after = tm.begin();
            assertNull(t.get(after, new Get(b("r"))).getValue(CF, HITS), "half of a mutateRow never commits");
            tm.commit(after);
        }
    }

    @Test
    void anIncrementNamingAColumnTwiceIsRefused() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("rmw_twice", "cf");
        try (TransactionManager tm = c.manager(); TTable t = new TTable(c.connection(), name)) {
            Transaction tx = tm.begin();
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class, () -> t.increment(tx,
                    new Increment(b("r")).addColumn(CF, HITS, 1).addColumn(CF, HITS, 10)));
            assertTrue(e.getMessage().contains("twice"), e.getMessage());
            assertTrue(tx.isReadOnly());
            tm.commit(tx);
        }
    }

    @Test
    void aSucceedingCheckAndMutateWritesTheRowEvenWhenItsActionChangesNothing() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("rmw_noop", "cf");
        try (TransactionManager tm = c.manager(); TTable t = new TTable(c.connection(), name)) {
            Transaction init = tm.begin();
            t.incrementColumnValue(init, b("r"), CF, HITS, 5);
            tm.commit(init);
            Transaction checker = tm.begin();
            assertTrue(t.checkAndMutate(checker, CheckAndMutate.newBuilder(b("r"))
                    .ifEquals(CF, HITS, Bytes.toBytes(5L)).build(new Increment(b("r")).addColumn(CF, HITS, 0)))
                    .isSuccess());
            assertFalse(checker.isReadOnly(), "the checked row joined the write set");
            Transaction writer = tm.begin();
            t.incrementColumnValue(writer, b("r"), CF, HITS, 1);
            tm.commit(writer);
            RollbackException e = assertThrows(RollbackException.class, () -> tm.commit(checker));
            assertEquals(RollbackException.Reason.CONFLICT, e.getReason());
        }
    }
}
