package io.sibyl.gc;

import io.sibyl.client.IsolationLevel;
import io.sibyl.client.RollbackException;
import io.sibyl.client.TTable;
import io.sibyl.client.Transaction;
import io.sibyl.client.TransactionManager;
import io.sibyl.protocol.Timestamps;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Append;
import org.apache.hadoop.hbase.client.CoprocessorDescriptorBuilder;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Increment;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Single-row transactions committed by the region server (SibylFastPathCoprocessor) beside ordinary transactions, on
 * the minicluster with a real oracle: where their versions fall in snapshots, and write-write and read-write
 * conflicts with ordinary transactions in both orders.
 */
@ExtendWith(GcCluster.class)
class FastPathTest {
    private static final byte[] F = Bytes.toBytes("f");
    private static final byte[] Q = Bytes.toBytes("q");

    private static TableName fastPathTable(String prefix) throws IOException {
        return GcCluster.get().createTable(prefix, CoprocessorDescriptorBuilder.of(SibylFastPathCoprocessor.class
                .getName()));
    }

    private static Put put(String row, String value) {
        return new Put(Bytes.toBytes(row)).addColumn(F, Q, Bytes.toBytes(value));
    }

    private static String read(TTable t, Transaction tx, String row) throws IOException {
        byte[] v = t.get(tx, new Get(Bytes.toBytes(row))).getValue(F, Q);
        return v == null ? null : Bytes.toString(v);
    }

    /** The HBase versions of the row's cell, newest first. */
    private static List<Cell> versions(TableName name, String row) throws IOException {
        try (Table raw = GcCluster.get().connection().getTable(name)) {
            return raw.get(new Get(Bytes.toBytes(row)).readAllVersions()).listCells();
        }
    }

    @Test
    void aFastPathPutIsInEverySnapshotBegunAfterItAndInNoneBegunBefore() throws Exception {
        GcCluster cluster = GcCluster.get();
        TableName name = fastPathTable("fp_order");
        try (TransactionManager tm = cluster.manager(); TTable t = new TTable(cluster.connection(), name)) {
            Transaction before = tm.begin();
            long commitsBefore = cluster.oracle().stats().commits();
            t.put(tm, put("r", "fast"));
            assertEquals(commitsBefore, cluster.oracle().stats().commits(), "no commit request reached the oracle");
            Transaction after = tm.begin();
            assertNull(read(t, before, "r"), "begun before the write: never sees it, even reading after it");
            assertEquals("fast", read(t, after, "r"));
            long version = versions(name, "r").get(0).getTimestamp();
            assertTrue(Timestamps.isSelfCommitted(version), "committed at its own version: " + version);
            assertTrue(before.getStartTimestamp() < version && version < after.getStartTimestamp());
            tm.rollback(before);
            tm.rollback(after);

            Transaction readOnly = tm.beginReadOnly();
            assertEquals("fast", read(t, readOnly, "r"), "a read-only snapshot includes this client's own writes");
            tm.rollback(readOnly);
            assertEquals("fast", Bytes.toString(t.getLatest(tm, new Get(Bytes.toBytes("r"))).getValue(F, Q)));
        }
    }

    @Test
    void anOrdinaryWriterThatBeganBeforeAFastPathWriteOfItsRowAborts() throws Exception {
        GcCluster cluster = GcCluster.get();
        TableName name = fastPathTable("fp_ww1");
        try (TransactionManager tm = cluster.manager(); TTable t = new TTable(cluster.connection(), name)) {
            Transaction ordinary = tm.begin();
            t.put(tm, put("r", "fast"));
            t.put(ordinary, put("r", "ordinary"));
            RollbackException e = assertThrows(RollbackException.class, () -> tm.commit(ordinary));
            assertEquals(RollbackException.Reason.CONFLICT, e.getReason());
            Transaction after = tm.begin();
            assertEquals("fast", read(t, after, "r"));
            tm.rollback(after);
        }
    }

    @Test
    void aFastPathWriteOfARowWithARunningWriterCommitsAndTheRunningWriterAborts() throws Exception {
        GcCluster cluster = GcCluster.get();
        TableName name = fastPathTable("fp_ww2");
        Configuration writeThrough = new Configuration(cluster.configuration());
        writeThrough.set(TransactionManager.ORACLE_ADDRESS, "127.0.0.1:" + cluster.oraclePort());
        writeThrough.set(TransactionManager.WRITE_BUFFER_BYTES, "0"); // the running writer's version is in HBase
        try (TransactionManager tm = TransactionManager.create(writeThrough);
             TTable t = new TTable(tm.getConnection(), name)) {
            Transaction running = tm.begin();
            t.put(running, put("r", "ordinary"));
            t.put(tm, put("r", "single-row"));
            assertTrue(Timestamps.isSelfCommitted(versions(name, "r").get(0).getTimestamp()),
                    "committed by the region server above the running writer's version");
            RollbackException e = assertThrows(RollbackException.class, () -> tm.commit(running));
            assertEquals(RollbackException.Reason.CONFLICT, e.getReason(), "the ticket recorded the row");
            Transaction reader = tm.begin();
            t.put(reader, put("unrelated", "x"));
            tm.rollback(reader);
            Transaction after = tm.begin();
            assertEquals("single-row", read(t, after, "r"));
            tm.rollback(after);
        }
    }

    @Test
    void aSerializableTransactionThatReadARowBeforeAFastPathWriteOfItAborts() throws Exception {
        GcCluster cluster = GcCluster.get();
        TableName name = fastPathTable("fp_rw");
        try (TransactionManager tm = cluster.manager(); TTable t = new TTable(cluster.connection(), name)) {
            Transaction reader = tm.begin(IsolationLevel.SERIALIZABLE);
            assertNull(read(t, reader, "r"));
            t.put(tm, put("r", "fast"));
            t.put(reader, put("other", "depends on r being empty"));
            RollbackException e = assertThrows(RollbackException.class, () -> tm.commit(reader));
            assertEquals(RollbackException.Reason.READ_CONFLICT, e.getReason());
        }
    }

    @Test
    void aColumnDeleteTakesTheFastPathAndARowDeleteTheOrdinaryOne() throws Exception {
        GcCluster cluster = GcCluster.get();
        TableName name = fastPathTable("fp_delete");
        try (TransactionManager tm = cluster.manager(); TTable t = new TTable(cluster.connection(), name)) {
            t.put(tm, put("a", "1"));
            t.put(tm, put("b", "2"));
            t.delete(tm, new Delete(Bytes.toBytes("a")).addColumns(F, Q));
            t.delete(tm, new Delete(Bytes.toBytes("b")));
            assertTrue(Timestamps.isSelfCommitted(versions(name, "a").get(0).getTimestamp()));
            assertFalse(Timestamps.isSelfCommitted(versions(name, "b").get(0).getTimestamp()));
            Transaction after = tm.begin();
            assertNull(read(t, after, "a"));
            assertNull(read(t, after, "b"));
            tm.rollback(after);
        }
    }

    @Test
    void aTableWithoutTheCoprocessorCommitsSingleRowWritesAsOrdinaryTransactions() throws Exception {
        GcCluster cluster = GcCluster.get();
        TableName name = cluster.createTable("fp_none", null);
        try (TransactionManager tm = cluster.manager(); TTable t = new TTable(cluster.connection(), name)) {
            t.put(tm, put("r", "ordinary"));
            assertFalse(Timestamps.isSelfCommitted(versions(name, "r").get(0).getTimestamp()));
            Result r = t.getLatest(tm, new Get(Bytes.toBytes("r")));
            assertEquals("ordinary", Bytes.toString(r.getValue(F, Q)));
        }
    }

    @Test
    void aFastPathIncrementAddsToTheNewestCommittedValueNotToAnAbortedOrRunningWritersOne() throws Exception {
        GcCluster cluster = GcCluster.get();
        TableName name = fastPathTable("fp_increment");
        Configuration writeThrough = new Configuration(cluster.configuration());
        writeThrough.set(TransactionManager.ORACLE_ADDRESS, "127.0.0.1:" + cluster.oraclePort());
        writeThrough.set(TransactionManager.WRITE_BUFFER_BYTES, "0");
        byte[] row = Bytes.toBytes("counter");
        try (TransactionManager tm = TransactionManager.create(writeThrough);
             TTable t = new TTable(tm.getConnection(), name)) {
            assertEquals(5L, Bytes.toLong(t.increment(tm, new Increment(row).addColumn(F, Q, 5)).getValue(F, Q)));
            Transaction aborted = tm.begin();
            t.increment(aborted, new Increment(row).addColumn(F, Q, 1000));
            tm.rollback(aborted);
            Result r = t.increment(tm, new Increment(row).addColumn(F, Q, 2));
            assertEquals(7L, Bytes.toLong(r.getValue(F, Q)), "the rolled-back 1000 is not counted");
            assertTrue(Timestamps.isSelfCommitted(r.rawCells()[0].getTimestamp()), "committed by the region server");
            assertEquals(7L, Bytes.toLong(t.getLatest(tm, new Get(row)).getValue(F, Q)));

            t.append(tm, new Append(row).addColumn(F, Bytes.toBytes("log"), Bytes.toBytes("a")));
            Result appended = t.append(tm, new Append(row).addColumn(F, Bytes.toBytes("log"), Bytes.toBytes("b")));
            assertEquals("ab", Bytes.toString(appended.getValue(F, Bytes.toBytes("log"))));
            assertTrue(Timestamps.isSelfCommitted(appended.rawCells()[0].getTimestamp()),
                    "committed by the region server: " + appended);
        }
    }

    @Test
    void anIncrementOrAppendIsAnsweredWithWhatWasWrittenAlsoBesideTheCollector() throws Exception {
        GcCluster cluster = GcCluster.get();
        TableName name = TableName.valueOf("fp_with_gc");
        try (org.apache.hadoop.hbase.client.Admin admin = cluster.connection().getAdmin()) {
            admin.createTable(org.apache.hadoop.hbase.client.TableDescriptorBuilder.newBuilder(name)
                    .setColumnFamily(TTable.familyDescriptor(F))
                    .setCoprocessor(CoprocessorDescriptorBuilder.of(SibylFastPathCoprocessor.class.getName()))
                    .setCoprocessor(CoprocessorDescriptorBuilder.of(SibylGcCoprocessor.class.getName())).build());
        }
        try (TransactionManager tm = cluster.manager(); TTable t = new TTable(cluster.connection(), name)) {
            for (int i = 0; i < 3; i++) {
                Result r = t.append(tm, new Append(Bytes.toBytes("r")).addColumn(F, Q, Bytes.toBytes("," + i)));
                assertTrue(Timestamps.isSelfCommitted(r.rawCells()[0].getTimestamp()), "append " + i + ": " + r);
                assertEquals(versions(name, "r").get(0).getTimestamp(), r.rawCells()[0].getTimestamp(),
                        "the answer is what was written");
                assertEquals(",0,1,2".substring(0, 2 * (i + 1)), Bytes.toString(r.getValue(F, Q)));
            }
        }
    }

    @Test
    void concurrentFastPathIncrementsAndOrdinaryTransactionsLoseNoUpdate() throws Exception {
        GcCluster cluster = GcCluster.get();
        TableName name = fastPathTable("fp_counter");
        byte[] row = Bytes.toBytes("counter");
        int threads = 4;
        int each = 60;
        try (TransactionManager tm = cluster.manager(); TTable t = new TTable(cluster.connection(), name)) {
            java.util.List<Thread> workers = new java.util.ArrayList<>();
            java.util.concurrent.atomic.AtomicReference<Throwable> failure = new java.util.concurrent.atomic
                    .AtomicReference<>();
            for (int w = 0; w < threads; w++) {
                boolean ordinary = w % 2 == 1;
                Thread th = new Thread(() -> {
                    try {
                        for (int i = 0; i < each; i++) {
                            if (ordinary) {
                                tm.run(tx -> {
                                    try {
                                        return t.increment(tx, new Increment(row).addColumn(F, Q, 1));
                                    } catch (IOException e) {
                                        throw new java.io.UncheckedIOException(e);
                                    }
                                });
                            } else {
                                t.increment(tm, new Increment(row).addColumn(F, Q, 1));
                            }
                        }
                    } catch (Throwable e) {
                        failure.compareAndSet(null, e);
                    }
                });
                workers.add(th);
                th.start();
            }
            for (Thread th : workers) {
                th.join();
            }
            if (failure.get() != null) {
                throw new AssertionError("a worker failed", failure.get());
            }
            assertEquals((long) threads * each, Bytes.toLong(t.getLatest(tm, new Get(row)).getValue(F, Q)),
                    "every increment, fast or ordinary, counted once");
        }
    }

    /**
     * The replica holds no record of a fast-path write: a read-only snapshot must still include one acknowledged
     * before its freshness, which another client's begin (answered after the write) brought up to date.
     */
    @Test
    void aReadOnlySnapshotFresherThanAFastPathWriteOfAnotherClientIncludesIt() throws Exception {
        GcCluster cluster = GcCluster.get();
        TableName name = fastPathTable("fp_stale");
        // A bound the background refresher leaves alone meanwhile (it renews the anchor at half of it, or at 1 s).
        Configuration patient = new Configuration(cluster.configuration());
        patient.set(TransactionManager.ORACLE_ADDRESS, "127.0.0.1:" + cluster.oraclePort());
        patient.set(TransactionManager.READ_ONLY_MAX_STALENESS_MS, "5000");
        try (TransactionManager writer = cluster.manager(); TransactionManager reader = TransactionManager.create(patient);
             TTable w = new TTable(writer.getConnection(), name); TTable r = new TTable(reader.getConnection(), name)) {
            w.put(writer, put("warm-up", "x")); // the writer's first look at the table, done before the clock runs
            Transaction warm = reader.beginReadOnly(); // the reader's anchor: older than the write
            reader.rollback(warm);
            w.put(writer, put("row", "fast"));
            Transaction ordinary = reader.begin(); // answered after the write: the replica is fresh past it
            reader.rollback(ordinary);
            Transaction readOnly = reader.beginReadOnly();
            assertEquals("fast", read(r, readOnly, "row"), "acknowledged before the snapshot's freshness");
            reader.rollback(readOnly);
        }
    }
}
