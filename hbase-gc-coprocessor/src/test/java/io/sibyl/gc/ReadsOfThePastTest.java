package io.sibyl.gc;

import io.sibyl.client.HistoryUnavailableException;
import io.sibyl.client.TTable;
import io.sibyl.client.Transaction;
import io.sibyl.client.TransactionManager;
import io.sibyl.oracle.HistorySettings;
import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleExtension;
import io.sibyl.oracle.OracleServer;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.CoprocessorDescriptorBuilder;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Reads of the past on a real region server with the collector loaded, against an oracle that keeps an hour of
 * history (its own, named in the table's coprocessor properties): exact states at commit timestamps and wall-clock
 * times after flushes and major compactions, and clear refusals outside the history kept.
 */
@ExtendWith(GcCluster.class)
class ReadsOfThePastTest {
    private static final byte[] F = Bytes.toBytes("f");
    private static final byte[] Q = Bytes.toBytes("q");

    // A tiny commit window, so that T_max passes the writers below and replicas forget their commit timestamps.
    @RegisterExtension
    static final OracleExtension oracle = OracleExtension.withSettings(c -> c
            .withCapacities(1 << 12, GcCluster.COMMIT_WINDOW, 1 << 10).withReaderGrace(GcCluster.READER_GRACE_MS)
            .withHistory(new HistorySettings(3_600_000, 1000, 64L << 20)));
    private static GcCluster cluster;
    private static TransactionManager tm;

    @BeforeAll
    static void start() throws Exception {
        cluster = GcCluster.get();
        tm = TransactionManager.create(cluster.connection(), "127.0.0.1", oracle.port());
    }

    @AfterAll
    static void stop() {
        tm.close();
    }

    private static TableName collectedTable(String prefix) throws Exception {
        return cluster.createTable(prefix, CoprocessorDescriptorBuilder.newBuilder(SibylGcCoprocessor.class.getName())
                .setProperty(TransactionManager.ORACLE_ADDRESS, oracle.address()).build());
    }

    private static long commitPut(TTable t, String row, String value) throws Exception {
        Transaction tx = tm.begin();
        t.put(tx, new Put(Bytes.toBytes(row)).addColumn(F, Q, Bytes.toBytes(value)));
        tm.commit(tx);
        return tx.getCommitTimestamp();
    }

    private static String readIn(TTable t, Transaction tx, String row) throws Exception {
        byte[] v = t.get(tx, new Get(Bytes.toBytes(row))).getValue(F, Q);
        return v == null ? null : Bytes.toString(v);
    }

    private static String readAt(TTable t, long timestamp, String row) throws Exception {
        Transaction tx = tm.beginAt(timestamp);
        try {
            return readIn(t, tx, row);
        } finally {
            tm.commit(tx);
        }
    }

    /** Many commits push T_max past everything above, as a busy system does. */
    private static void churn(TTable t, int commits) throws Exception {
        for (int i = 0; i < commits; i++) {
            commitPut(t, "churn" + (i % 7), "c" + i);
        }
    }

    @Test
    void pastReadsSeeExactlyTheCommittedStateAtEachTimestampAfterMajorCompaction() throws Exception {
        TableName table = collectedTable("past_exact");
        try (TTable t = new TTable(cluster.connection(), table)) {
            long beforeAll = commitPut(t, "other", "o");
            Transaction straddler = tm.begin(); // begins before v1, commits after v5
            t.put(straddler, new Put(Bytes.toBytes("z")).addColumn(F, Q, Bytes.toBytes("late")));
            List<Long> commits = new ArrayList<>();
            for (int i = 1; i <= 5; i++) {
                commits.add(commitPut(t, "x", "v" + i));
                if (i == 3) {
                    Transaction aborted = tm.begin();
                    t.put(aborted, new Put(Bytes.toBytes("x")).addColumn(F, Q, Bytes.toBytes("never")));
                    tm.rollback(aborted);
                    Transaction deleter = tm.begin();
                    t.delete(deleter, new Delete(Bytes.toBytes("other")));
                    tm.commit(deleter);
                }
            }
            tm.commit(straddler);
            long straddlerCommit = straddler.getCommitTimestamp();
            churn(t, 3 * GcCluster.COMMIT_WINDOW);
            cluster.flush(table);
            cluster.majorCompact(table);
            churn(t, 3 * GcCluster.COMMIT_WINDOW);
            cluster.flush(table);
            cluster.majorCompact(table);

            assertNull(readAt(t, beforeAll, "x"), "before the first write of x");
            assertEquals("o", readAt(t, beforeAll, "other"));
            for (int i = 1; i <= 5; i++) {
                long c = commits.get(i - 1);
                assertEquals("v" + i, readAt(t, c, "x"), "at the commit timestamp of v" + i);
                if (i < 5) {
                    assertEquals("v" + i, readAt(t, c + 1, "x"), "just after the commit of v" + i);
                }
                assertEquals(i > 1 ? "v" + (i - 1) : null, readAt(t, c - 1, "x"), "just before the commit of v" + i);
                assertNull(readAt(t, c, "z"), "the straddler commits after v5");
                assertEquals(i <= 3 ? "o" : null, readAt(t, c, "other"), "deleted after v3");
            }
            assertEquals("late", readAt(t, straddlerCommit, "z"));
            assertNull(readAt(t, straddlerCommit - 1, "z"));

            Transaction past = tm.beginAt(commits.get(2));
            List<String> rows = new ArrayList<>();
            try (ResultScanner scanner = t.getScanner(past, new Scan())) {
                for (Result r : scanner) {
                    rows.add(Bytes.toString(r.getRow()) + "=" + Bytes.toString(r.getValue(F, Q)));
                }
            } finally {
                tm.commit(past);
            }
            assertEquals(List.of("other=o", "x=v3"), rows, "a scan of the past");
        }
    }

    @Test
    void aReadAtAWallClockTimeSeesTheCommitsDecidedByThen() throws Exception {
        TableName table = collectedTable("past_time");
        try (TTable t = new TTable(cluster.connection(), table)) {
            commitPut(t, "x", "before");
            Thread.sleep(30);
            Instant between = Instant.now();
            Thread.sleep(30);
            commitPut(t, "x", "after");
            churn(t, 2 * GcCluster.COMMIT_WINDOW);
            cluster.flush(table);
            cluster.majorCompact(table);

            Transaction then = tm.beginAt(between);
            try {
                assertEquals("before", readIn(t, then, "x"));
            } finally {
                tm.commit(then);
            }
            Transaction now = tm.beginAt(Instant.now());
            try {
                assertEquals("after", readIn(t, now, "x"));
            } finally {
                tm.commit(now);
            }
        }
    }

    @Test
    void aReadOfThePastRefusesWrites() throws Exception {
        TableName table = collectedTable("past_readonly");
        try (TTable t = new TTable(cluster.connection(), table)) {
            long c = commitPut(t, "x", "v");
            Transaction past = tm.beginAt(c);
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> t.put(past, new Put(Bytes.toBytes("x")).addColumn(F, Q, Bytes.toBytes("w"))));
            assertTrue(e.getMessage().contains("reads the past"), e.getMessage());
            tm.rollback(past);
        }
    }

    @Test
    void readsOutsideTheHistoryKeptFailNamingTheSetting() throws Exception {
        TableName table = collectedTable("past_refusals");
        // An oracle that keeps a millisecond of history: a read of a commit a moment old is refused.
        try (OracleServer forgetful = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withHistory(new HistorySettings(1, 1, 1 << 20)));
             TransactionManager shortMemory = TransactionManager.create(cluster.connection(), "127.0.0.1",
                     forgetful.port());
             TTable t = new TTable(cluster.connection(), table)) {
            Transaction tx = shortMemory.begin();
            t.put(tx, new Put(Bytes.toBytes("x")).addColumn(F, Q, Bytes.toBytes("v")));
            shortMemory.commit(tx);
            Thread.sleep(50);
            shortMemory.rollback(shortMemory.begin()); // the clock moves on: the commit is no longer the present
            HistoryUnavailableException tooOld = assertThrows(HistoryUnavailableException.class,
                    () -> shortMemory.beginAt(tx.getCommitTimestamp()));
            assertTrue(tooOld.getMessage().contains("older than the history")
                    && tooOld.getMessage().contains("history.retention.ms=1"), tooOld.getMessage());
        }
        HistoryUnavailableException future = assertThrows(HistoryUnavailableException.class,
                () -> tm.beginAt(Long.MAX_VALUE / 4));
        assertTrue(future.getMessage().contains("not been handed out"), future.getMessage());
        HistoryUnavailableException later = assertThrows(HistoryUnavailableException.class,
                () -> tm.beginAt(Instant.now().plusSeconds(3600)));
        assertTrue(later.getMessage().contains("future"), later.getMessage());
        try (TransactionManager plain = cluster.manager()) {
            HistoryUnavailableException off = assertThrows(HistoryUnavailableException.class,
                    () -> plain.beginAt(Instant.now()));
            assertTrue(off.getMessage().contains("history.retention.ms=0"), off.getMessage());
        }
        assertThrows(IllegalArgumentException.class, () -> tm.beginAt(0));
        assertThrows(NullPointerException.class, () -> tm.beginAt((Instant) null));
    }
}
