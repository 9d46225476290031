package io.sibyl.client;

import org.apache.hadoop.hbase.CompareOperator;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.filter.SingleColumnValueFilter;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static io.sibyl.client.TestSupport.CF;
import static io.sibyl.client.TestSupport.V;
import static io.sibyl.client.TestSupport.getInt;
import static io.sibyl.client.TestSupport.putInt;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/**
 * {@link IsolationLevel#SERIALIZABLE}: the anomalies snapshot isolation allows (Hermitage's G2-item write skew and G2
 * anti-dependency cycles through predicates, HermitageAnomaliesTest) are refused, the later committer rolled back with
 * {@link RollbackException.Reason#READ_CONFLICT}; read-only transactions never abort; a scan conflicts only with writes
 * inside its rows' prefixes. Two clients (TransactionManagers), writes sent to HBase at once.
 */
@ExtendWith(MiniCluster.class)
class SerializableIsolationTest {
    private static TransactionManager one;
    private static TransactionManager two;

    @BeforeAll
    static void managers() throws IOException {
        one = MiniCluster.get().manager(Map.of(TransactionManager.WRITE_BUFFER_BYTES, "0"));
        two = MiniCluster.get().manager(Map.of(TransactionManager.WRITE_BUFFER_BYTES, "0"));
    }

    @AfterAll
    static void close() {
        one.close();
        two.close();
    }

    /** A fresh table holding rows 1 = 10 and 2 = 20. */
    private static TTable table() throws Exception {
        MiniCluster c = MiniCluster.get();
        TTable t = new TTable(c.connection(), c.createTable("serializable", "cf"));
        Transaction init = one.begin();
        putInt(t, init, "1", 10);
        putInt(t, init, "2", 20);
        one.commit(init);
        return t;
    }

    private static void assertReadConflict(Transaction tx) {
        RollbackException e = assertThrows(RollbackException.class, () -> TestSupport.internals(tx).manager().commit(tx));
        assertEquals(RollbackException.Reason.READ_CONFLICT, e.getReason(), e.getMessage());
        assertEquals(Transaction.Status.ROLLED_BACK, tx.getStatus());
    }

    @Test
    void writeSkewIsRefusedTheLaterCommitterRollsBack() throws Exception {
        TTable test = table();
        Transaction t1 = one.begin(IsolationLevel.SERIALIZABLE);
        Transaction t2 = two.begin(IsolationLevel.SERIALIZABLE);
        assertEquals(30, getInt(test, t1, "1") + getInt(test, t1, "2"));
        assertEquals(30, getInt(test, t2, "1") + getInt(test, t2, "2"));
        putInt(test, t1, "1", 11);
        putInt(test, t2, "2", 21);
        one.commit(t1);
        assertReadConflict(t2); // t2 read row 1, which t1 committed after t2 began
        Transaction check = one.begin();
        assertEquals(11, getInt(test, check, "1"));
        assertEquals(20, getInt(test, check, "2"));
        one.commit(check);
    }

    @Test
    void antiDependencyCyclesThroughPredicatesAreRefused() throws Exception {
        TTable test = table();
        Transaction t1 = one.begin(IsolationLevel.SERIALIZABLE);
        Transaction t2 = two.begin(IsolationLevel.SERIALIZABLE);
        assertEquals(List.of(), TestSupport.rows(test, t1, valueEquals(30)));
        assertEquals(List.of(), TestSupport.rows(test, t2, valueEquals(42)));
        putInt(test, t1, "3", 30);
        putInt(test, t2, "4", 42); // a row t1's scan would have seen: a phantom for it, and the other way round
        one.commit(t1);
        assertReadConflict(t2);
    }

    @Test
    void aSerializableReadOnlyTransactionNeverAborts() throws Exception {
        TTable test = table();
        Transaction reader = one.begin(IsolationLevel.SERIALIZABLE);
        assertEquals(10, getInt(test, reader, "1"));
        Transaction writer = two.begin(IsolationLevel.SERIALIZABLE);
        putInt(test, writer, "1", 99);
        two.commit(writer);
        assertEquals(10, getInt(test, reader, "1"), "its snapshot");
        one.commit(reader); // serializes at its snapshot: nothing to certify
        assertEquals(Transaction.Status.COMMITTED, reader.getStatus());
    }

    @Test
    void aScanConflictsOnlyWithWritesInsideItsPrefixes() throws Exception {
        MiniCluster c = MiniCluster.get();
        TTable accounts = new TTable(c.connection(), c.createTable("ser_scan", "cf"));
        Transaction init = one.begin();
        for (int i = 10; i < 30; i++) {
            putInt(accounts, init, "acct-" + i, 100);
        }
        putInt(accounts, init, "zz-audit", 0);
        one.commit(init);

        Transaction auditor = one.begin(IsolationLevel.SERIALIZABLE);
        Scan range = new Scan().withStartRow(Bytes.toBytes("acct-10")).withStopRow(Bytes.toBytes("acct-20"));
        assertEquals(10, TestSupport.rows(accounts, auditor, range).size());
        Transaction elsewhere = two.begin();
        putInt(accounts, elsewhere, "other-1", 5); // prefix "ot": not what the auditor scanned
        two.commit(elsewhere);
        putInt(accounts, auditor, "zz-audit", 1000);
        one.commit(auditor);
        assertEquals(Transaction.Status.COMMITTED, auditor.getStatus());

        Transaction second = one.begin(IsolationLevel.SERIALIZABLE);
        assertEquals(10, TestSupport.rows(accounts, second, range).size());
        Transaction inserter = two.begin(); // snapshot isolation: every writer's ranges are recorded all the same
        putInt(accounts, inserter, "acct-15b", 1);
        two.commit(inserter);
        putInt(accounts, second, "zz-audit", 2000);
        assertReadConflict(second);
    }

    @Test
    void runRetriesReadConflictsUntilTheTransfersAreSerializable() throws Exception {
        TTable test = table();
        AtomicInteger attempts = new AtomicInteger();
        Transaction rival = two.begin(IsolationLevel.SERIALIZABLE);
        getInt(test, rival, "1");
        int result = one.run(IsolationLevel.SERIALIZABLE, tx -> {
            try {
                if (attempts.incrementAndGet() == 1) {
                    long seen = getInt(test, tx, "2");
                    putInt(test, rival, "2", seen + 1); // someone writes what this attempt read, and commits
                    two.commit(rival);
                }
                putInt(test, tx, "1", getInt(test, tx, "2") * 10);
                return attempts.get();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            } catch (RollbackException e) {
                throw new IllegalStateException(e);
            }
        });
        assertEquals(2, result, "the first attempt was rolled back for a read conflict and run again");
        Transaction check = one.begin();
        assertEquals(210, getInt(test, check, "1"));
        one.commit(check);
    }

    private static Scan valueEquals(long value) {
        SingleColumnValueFilter f = new SingleColumnValueFilter(CF, V, CompareOperator.EQUAL, Bytes.toBytes(value));
        f.setFilterIfMissing(true);
        return new Scan().setFilter(f);
    }
}
