package io.sibyl.client;

import io.sibyl.client.oracle.OracleClient;
import io.sibyl.client.oracle.OracleUnavailableException;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;

import static io.sibyl.client.TestSupport.CF;
import static io.sibyl.client.TestSupport.V;
import static io.sibyl.client.TestSupport.getInt;
import static io.sibyl.client.TestSupport.putInt;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Read-only transactions begun from the local replica ({@link TransactionManager#beginReadOnly()}) and latest reads of
 * one row ({@link TTable#getLatest}) on the minicluster with a real oracle: no begin round trip on a busy client,
 * consistent snapshots while another client moves money, this client's own commits always included, other clients'
 * within the staleness bound, the garbage collector's watermark held, a clear error when the replica is cut off.
 */
@ExtendWith(MiniCluster.class)
class ReadOnlyFromReplicaTest {
    private static TransactionManager reader;
    private static TransactionManager writer;

    @BeforeAll
    static void managers() throws IOException {
        reader = MiniCluster.get().manager(Map.of(TransactionManager.READ_ONLY_MAX_STALENESS_MS, "50"));
        writer = MiniCluster.get().manager(Map.of(TransactionManager.WRITE_BUFFER_BYTES, "0"));
    }

    @AfterAll
    static void close() {
        reader.close();
        writer.close();
    }

    private static TTable table(String name, int rows, long each) throws Exception {
        MiniCluster c = MiniCluster.get();
        TTable t = new TTable(c.connection(), c.createTable(name, "cf"));
        Transaction init = writer.begin();
        for (int i = 0; i < rows; i++) {
            putInt(t, init, "r" + i, each);
        }
        writer.commit(init);
        Thread.sleep(51); // the readers' staleness bound is 50 ms: from now on their snapshots include it
        return t;
    }

    private static OracleClient oracleOf(TransactionManager tm) {
        return tm.connection().current();
    }

    @Test
    void readOnlyTransactionsOnABusyClientSendNoBegin() throws Exception {
        TTable t = table("ro-nobegin", 1, 7);
        TransactionManager tm = MiniCluster.get().manager(Map.of(TransactionManager.READ_ONLY_MAX_STALENESS_MS,
                "60000"));
        try {
            tm.commit(tm.beginReadOnly()); // the first one waits for the anchor's begin
            OracleClient oracle = oracleOf(tm);
            long beginsBefore = oracle.startRepliesReceived();
            long t0 = System.nanoTime();
            for (int i = 0; i < 200; i++) {
                Transaction tx = tm.beginReadOnly();
                assertEquals(7, getInt(t, tx, "r0"));
                tm.commit(tx);
                assertEquals(Transaction.Status.COMMITTED, tx.getStatus());
            }
            long seconds = TimeUnit.NANOSECONDS.toSeconds(System.nanoTime() - t0);
            long begins = oracle.startRepliesReceived() - beginsBefore;
            // Only the anchor's renewals (one a second while snapshots are taken), never one per transaction.
            assertTrue(begins <= seconds + 2, begins + " begins for 200 read-only transactions in " + seconds + " s");
        } finally {
            tm.close();
        }
    }

    @Test
    void aReadOnlySnapshotIsConsistentWhileAnotherClientMovesMoney() throws Exception {
        int accounts = 8;
        TTable t = table("ro-bank", accounts, 100);
        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        Future<Integer> transfers = pool.submit(() -> {
            int done = 0;
            java.util.Random random = new java.util.Random(1);
            while (!stop.get()) {
                int from = random.nextInt(accounts);
                int to = (from + 1 + random.nextInt(accounts - 1)) % accounts;
                try {
                    writer.run(TestSupport.io(tx -> {
                        putInt(t, tx, "r" + from, getInt(t, tx, "r" + from) - 3);
                        putInt(t, tx, "r" + to, getInt(t, tx, "r" + to) + 3);
                        return null;
                    }));
                    done++;
                } catch (RollbackException conflict) {
                    // retried by the next round
                }
            }
            return done;
        });
        try {
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(4);
            int audits = 0;
            while (System.nanoTime() < until) {
                Transaction tx = reader.beginReadOnly();
                long total = 0;
                try (org.apache.hadoop.hbase.client.ResultScanner s = t.getScanner(tx, new Scan())) {
                    for (Result row : s) {
                        total += Bytes.toLong(row.getValue(CF, V));
                    }
                }
                long got = 0;
                for (int i = 0; i < accounts; i++) {
                    got += getInt(t, tx, "r" + i);
                }
                reader.commit(tx);
                assertEquals(100L * accounts, total, "scan in snapshot " + tx.getStartTimestamp());
                assertEquals(100L * accounts, got, "gets in snapshot " + tx.getStartTimestamp());
                audits++;
            }
            stop.set(true);
            assertTrue(transfers.get(30, TimeUnit.SECONDS) > 0, "no transfer committed");
            assertTrue(audits > 10, audits + " audits");
        } finally {
            stop.set(true);
            pool.shutdownNow();
        }
    }

    @Test
    void aReadOnlyTransactionSeesEveryCommitOfItsOwnClient() throws Exception {
        TTable t = table("ro-own", 1, 0);
        for (int i = 1; i <= 50; i++) {
            Transaction w = reader.begin();
            putInt(t, w, "r0", i);
            reader.commit(w);
            Transaction r = reader.beginReadOnly();
            assertEquals(i, getInt(t, r, "r0"), "commit " + i + " of this client");
            reader.commit(r);
        }
    }

    @Test
    void anotherClientsCommitIsVisibleOnceTheStalenessBoundHasPassed() throws Exception {
        TTable t = table("ro-bound", 1, 0);
        reader.commit(reader.beginReadOnly());
        for (int i = 1; i <= 20; i++) {
            Transaction w = writer.begin();
            putInt(t, w, "r0", i);
            writer.commit(w);
            Thread.sleep(51); // sibyl.client.readonly.max.staleness.ms of the reader is 50
            Transaction r = reader.beginReadOnly();
            assertEquals(i, getInt(t, r, "r0"), "a commit acknowledged 51 ms before the read-only begin");
            reader.commit(r);
        }
    }

    @Test
    void aReadOnlyTransactionRefusesWritesWithAClearMessage() throws Exception {
        TTable t = table("ro-nowrite", 1, 1);
        Transaction r = reader.beginReadOnly();
        IllegalStateException e = assertThrows(IllegalStateException.class,
                () -> t.put(r, new Put(Bytes.toBytes("r0")).addColumn(CF, V, Bytes.toBytes(2L))));
        assertTrue(e.getMessage().contains("beginReadOnly()") && e.getMessage().contains("begin()"), e.getMessage());
        assertEquals(1, getInt(t, r, "r0"));
        reader.rollback(r);
        assertEquals(Transaction.Status.ROLLED_BACK, r.getStatus());
        assertThrows(IllegalStateException.class, () -> getInt(t, r, "r0"));
    }

    @Test
    void theLowWatermarkStaysAtOrBelowALongReadOnlySnapshot() throws Exception {
        TTable t = table("ro-watermark", 1, 1);
        Transaction longReader = reader.beginReadOnly();
        long snapshot = longReader.getStartTimestamp();
        List<Transaction> later = new ArrayList<>();
        // Snapshots keep being taken for 2.5 s, so the anchor is replaced twice, while another client commits.
        long until = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(2500);
        int v = 2;
        while (System.nanoTime() < until) {
            Transaction w = writer.begin();
            putInt(t, w, "r0", v++);
            writer.commit(w);
            Transaction r = reader.beginReadOnly();
            later.add(r);
            reader.commit(r);
            Thread.sleep(20);
        }
        long watermark = oracleOf(writer).lowWatermark().get(10, TimeUnit.SECONDS);
        assertTrue(watermark <= snapshot, "low watermark " + watermark + " passed the running snapshot " + snapshot);
        assertEquals(1, getInt(t, longReader, "r0"));
        reader.commit(longReader);
        assertTrue(later.get(later.size() - 1).getStartTimestamp() > snapshot);
    }

    @Test
    void getLatestSeesACommitOfAnotherClientAcknowledgedJustBefore() throws Exception {
        TTable t = table("latest", 1, 0);
        byte[] row = Bytes.toBytes("r0");
        for (int i = 1; i <= 20; i++) {
            Transaction w = writer.begin();
            putInt(t, w, "r0", i);
            writer.commit(w);
            Result r = t.getLatest(reader, new Get(row));
            assertEquals(i, Bytes.toLong(r.getValue(CF, V)), "the commit acknowledged just before");
        }
        // A writer that has not committed is not seen; once it commits it is.
        Transaction w = writer.begin();
        putInt(t, w, "r0", 99);
        assertEquals(20, Bytes.toLong(t.getLatest(reader, new Get(row)).getValue(CF, V)));
        writer.commit(w);
        assertEquals(99, Bytes.toLong(t.getLatest(reader, new Get(row)).getValue(CF, V)));
        // An aborted writer is not seen.
        Transaction aborted = writer.begin();
        putInt(t, aborted, "r0", 100);
        writer.rollback(aborted);
        assertEquals(99, Bytes.toLong(t.getLatest(reader, new Get(row)).getValue(CF, V)));
    }

    @Test
    void getLatestNeverReturnsAValueItsWriterOverwroteBeforeCommitting() throws Exception {
        TTable t = table("latest-overwrite", 1, 1);
        byte[] row = Bytes.toBytes("r0");
        AtomicBoolean stop = new AtomicBoolean();
        ExecutorService pool = Executors.newSingleThreadExecutor();
        // Every transaction writes an even value, then overwrites it with the next odd one (write-through: both
        // reach HBase at its start timestamp before it commits): only odd values were ever committed.
        Future<Integer> writes = pool.submit(() -> {
            int commits = 0;
            for (long v = 2; !stop.get(); v += 2) {
                Transaction tx = writer.begin();
                putInt(t, tx, "r0", v);
                putInt(t, tx, "r0", v + 1);
                writer.commit(tx);
                commits++;
            }
            return commits;
        });
        try {
            long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(3);
            int reads = 0;
            while (System.nanoTime() < until) {
                long v = Bytes.toLong(t.getLatest(reader, new Get(row)).getValue(CF, V));
                assertEquals(1, v % 2, "getLatest returned " + v + ", which its writer overwrote before committing");
                reads++;
            }
            stop.set(true);
            assertTrue(writes.get(30, TimeUnit.SECONDS) > 10);
            assertTrue(reads > 10);
        } finally {
            stop.set(true);
            pool.shutdownNow();
        }
    }

    @Test
    void aReplicaCutOffFromItsOracleGetsAClearErrorNotAStalerSnapshot() throws Exception {
        TTable t = table("ro-cutoff", 1, 5);
        try (ReplyProxy proxy = new ReplyProxy(MiniCluster.get().oracle().port())) {
            org.apache.hadoop.conf.Configuration c = MiniCluster.get().configuration();
            c.set(TransactionManager.ORACLE_ADDRESS, "127.0.0.1:" + proxy.port());
            c.set(TransactionManager.READ_ONLY_MAX_STALENESS_MS, "200");
            c.set(TransactionManager.ORACLE_TIMEOUT_MS, "500");
            c.set(TransactionManager.FAILOVER_TIMEOUT_MS, "1000");
            try (TransactionManager tm = TransactionManager.create(c)) {
                Transaction before = tm.beginReadOnly();
                assertEquals(5, getInt(t, before, "r0"));
                tm.commit(before);
                proxy.dropReplies();
                Thread.sleep(250);
                OracleUnavailableException e = assertThrows(OracleUnavailableException.class, tm::beginReadOnly);
                assertTrue(e.getMessage().contains(TransactionManager.READ_ONLY_MAX_STALENESS_MS), e.getMessage());
            }
        }
    }
}
