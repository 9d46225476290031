package io.sibyl.client;

import io.sibyl.client.oracle.OracleException;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Scan;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.sibyl.client.TestSupport.get;
import static io.sibyl.client.TestSupport.put;
import static io.sibyl.client.TestSupport.scan;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code begin()} returns before the oracle answers, and a first read is sent to HBase meanwhile with no upper bound
 * on versions. These tests hold the begin's answer back until the read has been sent, so the read really fetches
 * versions newer than its snapshot, and check they are skipped; and that a begin the oracle refuses surfaces, with
 * the oracle's reason, at the first use of the transaction.
 */
@ExtendWith(MiniCluster.class)
class BeginOverlapTest {
    private static TransactionManager tm;
    private static TTable table;

    @BeforeAll
    static void setUp() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("overlap", "cf");
        tm = c.manager();
        table = new TTable(c.connection(), name);
    }

    @AfterAll
    static void tearDown() {
        table.close();
        tm.close();
    }

    /** A transaction whose begin answer the test releases: the real timestamp, {@code delayMs} from now. */
    private static Transaction beganWithAnswerHeldBack(long startTs, long delayMs) {
        CompletableFuture<Long> answer = new CompletableFuture<>();
        answer.completeAsync(() -> startTs, CompletableFuture.delayedExecutor(delayMs, TimeUnit.MILLISECONDS));
        return new Transaction(tm, tm.oracle(), answer, Long.MAX_VALUE);
    }

    @Test
    void versionsNewerThanTheSnapshotAreSkippedWhenTheFirstGetOverlapsTheBegin() throws Exception {
        Transaction old = tm.begin();
        put(table, old, "g", "before");
        tm.commit(old);
        long snapshot = tm.oracle().begin().join(); // the reader's timestamp, answered later
        for (int i = 0; i < 5; i++) { // more versions than one fetch holds, all after the snapshot
            Transaction later = tm.begin();
            put(table, later, "g", "after-" + i);
            tm.commit(later);
        }
        Transaction reader = beganWithAnswerHeldBack(snapshot, 300);
        assertEquals(0, reader.knownStartTimestamp(), "the read is sent while the begin is in flight");
        assertEquals("before", get(table, reader, "g"));
        assertEquals(snapshot, reader.getStartTimestamp());
        tm.commit(reader);
    }

    @Test
    void rowsWrittenAfterTheSnapshotStayOutOfAScanThatOverlapsTheBegin() throws Exception {
        Transaction old = tm.begin();
        put(table, old, "s1", "before");
        tm.commit(old);
        long snapshot = tm.oracle().begin().join();
        Transaction later = tm.begin();
        put(table, later, "s1", "after");
        put(table, later, "s2", "after");
        tm.commit(later);
        Transaction reader = beganWithAnswerHeldBack(snapshot, 300);
        Map<String, Map<String, String>> rows = scan(table, reader,
                new Scan().withStartRow(TestSupport.b("s")).withStopRow(TestSupport.b("t")));
        assertEquals(Map.of("s1", Map.of("cf:v", "before")), rows);
        tm.commit(reader);
    }

    @Test
    void aBeginTheOracleRefusesSurfacesAtFirstUseAndEndsTheTransaction() {
        OracleException refused = new OracleException(7, "too many transactions are running");
        Transaction tx = new Transaction(tm, tm.oracle(), CompletableFuture.failedFuture(refused), Long.MAX_VALUE);
        OracleException e = assertThrows(OracleException.class, () -> get(table, tx, "g"));
        assertTrue(e.getMessage().contains("too many transactions"), e.getMessage());
        assertEquals(Transaction.Status.ROLLED_BACK, tx.getStatus());
        IllegalStateException misuse = assertThrows(IllegalStateException.class, () -> tm.commit(tx));
        assertTrue(misuse.getMessage().contains("could not begin"), misuse.getMessage());
    }
}
