package io.sibyl.client;

import org.apache.hadoop.hbase.CompareOperator;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.filter.SingleColumnValueFilter;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.util.List;
import java.util.Map;

import static io.sibyl.client.TestSupport.CF;
import static io.sibyl.client.TestSupport.V;
import static io.sibyl.client.TestSupport.delete;
import static io.sibyl.client.TestSupport.getInt;
import static io.sibyl.client.TestSupport.putInt;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * The anomalies catalogued by the Hermitage project (github.com/ept/hermitage), as run there against PostgreSQL's
 * "repeatable read" (snapshot isolation): table test(id, value) with rows (1, 10) and (2, 20). Where PostgreSQL
 * blocks the second writer, Sibyl lets both write and aborts the later committer (first committer wins).
 *
 * <p>Every scenario runs three times: with buffered writes (sent at commit); with writes sent to HBase at once, so that
 * uncommitted versions really sit in HBase while the other transactions read; and with every transaction on a client
 * (TransactionManager) of its own, writes sent at once, so that each transaction resolves the others' versions with
 * its own replica of the commit metadata, as separate application processes do.
 */
@ExtendWith(MiniCluster.class)
class HermitageAnomaliesTest {
    enum Writes { BUFFERED, WRITE_THROUGH, SEPARATE_CLIENTS }

    private static TransactionManager buffered;
    private static TransactionManager writeThrough;
    /** One client per transaction of a scenario (T1, T2, T3), writes sent at once. */
    private static final TransactionManager[] separate = new TransactionManager[3];
    private TransactionManager tm;
    private Writes mode;
    private TTable test;

    @BeforeAll
    static void managers() throws IOException {
        buffered = MiniCluster.get().manager();
        writeThrough = MiniCluster.get().manager(Map.of(TransactionManager.WRITE_BUFFER_BYTES, "0"));
        for (int i = 0; i < separate.length; i++) {
            separate[i] = MiniCluster.get().manager(Map.of(TransactionManager.WRITE_BUFFER_BYTES, "0"));
        }
    }

    @AfterAll
    static void close() {
        buffered.close();
        writeThrough.close();
        for (TransactionManager m : separate) {
            m.close();
        }
    }

    /** Begins transaction T{@code n} of the scenario, on its own client in {@link Writes#SEPARATE_CLIENTS}. */
    private Transaction begin(int n) {
        return mode == Writes.SEPARATE_CLIENTS ? separate[n - 1].begin() : tm.begin();
    }

    private static void commit(Transaction tx) throws RollbackException {
        TestSupport.internals(tx).manager().commit(tx);
    }

    private static void rollback(Transaction tx) {
        TestSupport.internals(tx).manager().rollback(tx);
    }

    /** A fresh table "test" holding (1, 10) and (2, 20), committed. */
    private void setUp(Writes mode) throws Exception {
        this.mode = mode;
        tm = mode == Writes.BUFFERED ? buffered : writeThrough;
        MiniCluster c = MiniCluster.get();
        test = new TTable(c.connection(), c.createTable("hermitage", "cf"));
        Transaction init = tm.begin();
        putInt(test, init, "1", 10);
        putInt(test, init, "2", 20);
        tm.commit(init);
    }

    private static void assertConflict(Transaction tx) {
        RollbackException e = assertThrows(RollbackException.class, () -> commit(tx));
        assertEquals(RollbackException.Reason.CONFLICT, e.getReason());
        assertEquals(Transaction.Status.ROLLED_BACK, tx.getStatus());
    }

    private void assertCommittedState(long one, long two) throws Exception {
        Transaction check = tm.begin();
        assertEquals(one, getInt(test, check, "1"));
        assertEquals(two, getInt(test, check, "2"));
        tm.commit(check);
    }

    private static Scan valueEquals(long value) {
        SingleColumnValueFilter f = new SingleColumnValueFilter(CF, V, CompareOperator.EQUAL, Bytes.toBytes(value));
        f.setFilterIfMissing(true);
        return new Scan().setFilter(f);
    }

    @ParameterizedTest
    @EnumSource(Writes.class)
    void g0DirtyWriteIsPrevented(Writes mode) throws Exception {
        setUp(mode);
        Transaction t1 = begin(1);
        Transaction t2 = begin(2);
        putInt(test, t1, "1", 11);
        putInt(test, t2, "1", 12);
        putInt(test, t1, "2", 21);
        commit(t1);
        assertEquals(12, getInt(test, t2, "1"), "T2 reads its own write, not T1's");
        putInt(test, t2, "2", 22);
        assertConflict(t2);
        assertCommittedState(11, 21); // all of T1, nothing of T2: no interleaving of the two writers
    }

    @ParameterizedTest
    @EnumSource(Writes.class)
    void g1aAbortedReadIsPrevented(Writes mode) throws Exception {
        setUp(mode);
        Transaction t1 = begin(1);
        Transaction t2 = begin(2);
        putInt(test, t1, "1", 101);
        putInt(test, t1, "2", 201);
        assertEquals(10, getInt(test, t2, "1"));
        rollback(t1);
        assertEquals(10, getInt(test, t2, "1"));
        assertEquals(20, getInt(test, t2, "2"));
        commit(t2);
        assertCommittedState(10, 20);
    }

    @ParameterizedTest
    @EnumSource(Writes.class)
    void g1bIntermediateReadIsPrevented(Writes mode) throws Exception {
        setUp(mode);
        Transaction t1 = begin(1);
        Transaction t2 = begin(2);
        putInt(test, t1, "1", 101);
        assertEquals(10, getInt(test, t2, "1"));
        putInt(test, t1, "1", 11);
        commit(t1);
        assertEquals(10, getInt(test, t2, "1"), "neither the intermediate nor the final value of T1");
        commit(t2);
        assertCommittedState(11, 20);
    }

    @ParameterizedTest
    @EnumSource(Writes.class)
    void g1cCircularInformationFlowIsPrevented(Writes mode) throws Exception {
        setUp(mode);
        Transaction t1 = begin(1);
        Transaction t2 = begin(2);
        putInt(test, t1, "1", 11);
        putInt(test, t2, "2", 22);
        assertEquals(20, getInt(test, t1, "2"));
        assertEquals(10, getInt(test, t2, "1"));
        commit(t1);
        commit(t2);
        assertCommittedState(11, 22);
    }

    @ParameterizedTest
    @EnumSource(Writes.class)
    void otvObservedTransactionVanishesIsPrevented(Writes mode) throws Exception {
        setUp(mode);
        Transaction t1 = begin(1);
        Transaction t2 = begin(2);
        putInt(test, t1, "1", 11);
        putInt(test, t1, "2", 19);
        putInt(test, t2, "1", 12);
        commit(t1);
        Transaction t3 = begin(3);
        assertEquals(11, getInt(test, t3, "1"));
        putInt(test, t2, "2", 18);
        assertEquals(19, getInt(test, t3, "2"));
        assertConflict(t2);
        assertEquals(19, getInt(test, t3, "2"));
        assertEquals(11, getInt(test, t3, "1"));
        commit(t3);
        assertCommittedState(11, 19);
    }

    @ParameterizedTest
    @EnumSource(Writes.class)
    void pmpPredicateManyPrecedersIsPreventedWithScans(Writes mode) throws Exception {
        setUp(mode);
        Transaction t1 = begin(1);
        Transaction t2 = begin(2);
        assertEquals(List.of(), TestSupport.rows(test, t1, valueEquals(30)));
        putInt(test, t2, "3", 30);
        commit(t2);
        assertEquals(List.of(), TestSupport.rows(test, t1, valueEquals(30)), "the predicate's answer is stable");
        assertEquals(List.of("1", "2"), TestSupport.rows(test, t1, new Scan()));
        commit(t1);
        Transaction t3 = begin(3);
        assertEquals(List.of("3"), TestSupport.rows(test, t3, valueEquals(30)));
        commit(t3);
    }

    @ParameterizedTest
    @EnumSource(Writes.class)
    void pmpWritePredicateIsPrevented(Writes mode) throws Exception {
        setUp(mode);
        Transaction t1 = begin(1);
        Transaction t2 = begin(2);
        // T1: update test set value = value + 10
        for (String row : TestSupport.rows(test, t1, new Scan())) {
            putInt(test, t1, row, getInt(test, t1, row) + 10);
        }
        // T2: delete from test where value = 20 (its snapshot still has (2, 20))
        assertEquals(List.of("2"), TestSupport.rows(test, t2, valueEquals(20)));
        delete(test, t2, "2");
        commit(t1);
        assertConflict(t2);
        assertCommittedState(20, 30);
    }

    @ParameterizedTest
    @EnumSource(Writes.class)
    void p4LostUpdateIsPrevented(Writes mode) throws Exception {
        setUp(mode);
        Transaction t1 = begin(1);
        Transaction t2 = begin(2);
        long v1 = getInt(test, t1, "1");
        long v2 = getInt(test, t2, "1");
        putInt(test, t1, "1", v1 + 1);
        putInt(test, t2, "1", v2 + 1);
        commit(t1);
        assertConflict(t2);
        assertCommittedState(11, 20);
    }

    @ParameterizedTest
    @EnumSource(Writes.class)
    void gSingleReadSkewIsPrevented(Writes mode) throws Exception {
        setUp(mode);
        Transaction t1 = begin(1);
        Transaction t2 = begin(2);
        assertEquals(10, getInt(test, t1, "1"));
        assertEquals(10, getInt(test, t2, "1"));
        assertEquals(20, getInt(test, t2, "2"));
        putInt(test, t2, "1", 12);
        putInt(test, t2, "2", 18);
        commit(t2);
        assertEquals(20, getInt(test, t1, "2"), "T1 sees 10 + 20, never 10 + 18");
        commit(t1);
        assertCommittedState(12, 18);
    }

    @ParameterizedTest
    @EnumSource(Writes.class)
    void gSingleReadSkewWithPredicateDependenciesIsPrevented(Writes mode) throws Exception {
        setUp(mode);
        Transaction t1 = begin(1);
        Transaction t2 = begin(2);
        assertEquals(List.of("1", "2"), TestSupport.rows(test, t1, new Scan()));
        putInt(test, t2, "1", 12);
        commit(t2);
        assertEquals(List.of(), TestSupport.rows(test, t1, valueEquals(12)));
        assertEquals(List.of("1"), TestSupport.rows(test, t1, valueEquals(10)));
        commit(t1);
    }

    @ParameterizedTest
    @EnumSource(Writes.class)
    void gSingleReadSkewWithWritePredicateIsPrevented(Writes mode) throws Exception {
        setUp(mode);
        Transaction t1 = begin(1);
        Transaction t2 = begin(2);
        assertEquals(10, getInt(test, t1, "1"));
        putInt(test, t2, "1", 12);
        putInt(test, t2, "2", 18);
        commit(t2);
        // T1: delete from test where value = 20 -- row 2 still holds 20 in its snapshot, so it writes row 2
        for (String row : TestSupport.rows(test, t1, valueEquals(20))) {
            delete(test, t1, row);
        }
        assertNull(TestSupport.get(test, t1, "2"));
        assertConflict(t1);
        assertCommittedState(12, 18);
    }

    @ParameterizedTest
    @EnumSource(Writes.class)
    void g2ItemWriteSkewIsAllowed(Writes mode) throws Exception {
        setUp(mode);
        Transaction t1 = begin(1);
        Transaction t2 = begin(2);
        assertEquals(30, getInt(test, t1, "1") + getInt(test, t1, "2"));
        assertEquals(30, getInt(test, t2, "1") + getInt(test, t2, "2"));
        putInt(test, t1, "1", 11);
        putInt(test, t2, "2", 21);
        commit(t1);
        commit(t2); // disjoint write sets: snapshot isolation commits both (write skew)
        assertCommittedState(11, 21);
    }

    @ParameterizedTest
    @EnumSource(Writes.class)
    void g2AntiDependencyCyclesWithPredicatesAreAllowed(Writes mode) throws Exception {
        setUp(mode);
        Transaction t1 = begin(1);
        Transaction t2 = begin(2);
        assertEquals(List.of(), TestSupport.rows(test, t1, valueEquals(30)));
        assertEquals(List.of(), TestSupport.rows(test, t2, valueEquals(42)));
        putInt(test, t1, "3", 30);
        putInt(test, t2, "4", 42);
        commit(t1);
        commit(t2);
        Transaction check = tm.begin();
        assertEquals(List.of("1", "2", "3", "4"), TestSupport.rows(test, check, new Scan()));
        tm.commit(check);
    }
}
