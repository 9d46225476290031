package io.sibyl.gc;

import io.sibyl.client.TTable;
import io.sibyl.client.Transaction;
import io.sibyl.client.TransactionManager;
import io.sibyl.client.oracle.CommitReplica;
import io.sibyl.client.oracle.OracleClient;
import io.sibyl.client.oracle.RowIds;
import io.sibyl.oracle.InMemoryJournal;
import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import io.sibyl.oracle.OracleState;
import io.sibyl.protocol.LeaderRecord;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.CoprocessorDescriptorBuilder;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.metrics.Counter;
import org.apache.hadoop.hbase.metrics.MetricRegistries;
import org.apache.hadoop.hbase.metrics.MetricRegistry;
import org.apache.hadoop.hbase.metrics.MetricRegistryInfo;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.net.ServerSocket;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertSame;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** What the collector removes at flush and compaction time, and what it must leave, on a real region server. */
@ExtendWith(GcCluster.class)
class GcCompactionTest {
    private static final byte[] F = Bytes.toBytes("f");
    private static final byte[] Q = Bytes.toBytes("q");
    private static final byte[] ROW = Bytes.toBytes("row");

    private static GcCluster cluster;
    private static TransactionManager tm;
    /** A bare oracle client for what the transactional API never does (abandon writes, push T_max). */
    private static OracleClient oracle;

    @BeforeAll
    static void connect() throws Exception {
        cluster = GcCluster.get();
        tm = cluster.manager();
        oracle = OracleClient.connect("127.0.0.1", cluster.oraclePort());
    }

    @AfterAll
    static void disconnect() {
        oracle.close();
        tm.close();
    }

    private static TableName collectedTable(String prefix) throws Exception {
        return cluster.createTable(prefix, CoprocessorDescriptorBuilder.of(SibylGcCoprocessor.class.getName()));
    }

    private static long commitValue(TableName table, String value) throws Exception {
        try (TTable t = new TTable(cluster.connection(), table)) {
            Transaction tx = tm.begin();
            t.put(tx, new Put(ROW).addColumn(F, Q, Bytes.toBytes(value)));
            tm.commit(tx);
            return tx.getStartTimestamp();
        }
    }

    /** A transaction that wrote a version straight to HBase, as a client that then died would leave it. */
    private static long writeAndLeaveRunning(TableName table, String value) throws Exception {
        long ts = oracle.begin().get(5, TimeUnit.SECONDS);
        try (Table t = cluster.connection().getTable(table)) {
            t.put(new Put(ROW).addColumn(F, Q, ts, Bytes.toBytes(value)));
        }
        return ts;
    }

    private static String read(TableName table) throws Exception {
        try (TTable t = new TTable(cluster.connection(), table)) {
            Transaction tx = tm.begin();
            byte[] v = t.get(tx, new Get(ROW)).getValue(F, Q);
            tm.commit(tx);
            return v == null ? null : Bytes.toString(v);
        }
    }

    private static List<Long> versions(TableName table) throws Exception {
        return cluster.versions(table, ROW, F, Q);
    }

    private static void flushAndCompact(TableName table) throws Exception {
        cluster.flush(table);
        cluster.majorCompact(table);
    }

    /** Enough commits on other rows that the oracle's window overflows and T_max passes everything before. */
    private static void pushTmaxPastEverythingSoFar() throws Exception {
        for (int i = 0; i < 2 * GcCluster.COMMIT_WINDOW; i++) {
            long ts = oracle.begin().get(5, TimeUnit.SECONDS);
            oracle.commit(ts, new long[] {RowIds.of("elsewhere", Bytes.toBytes(i))}).get(5, TimeUnit.SECONDS);
        }
    }

    @Test
    void abortedWritesAreRemovedAtMajorCompaction() throws Exception {
        TableName table = collectedTable("aborted");
        long committed = commitValue(table, "kept");
        long abandoned = writeAndLeaveRunning(table, "abandoned");
        cluster.flush(table);
        assertEquals(List.of(abandoned, committed), versions(table), "a running writer's version survives a flush");
        oracle.abort(abandoned).get(5, TimeUnit.SECONDS); // and never cleaned up, as after a client crash
        cluster.majorCompact(table);
        assertEquals(List.of(committed), versions(table));
        assertEquals("kept", read(table));
    }

    @Test
    void theRegionServersMetricsCountTheVersionsKeptAndRemoved() throws Exception {
        TableName table = collectedTable("counted");
        long keptBefore = gcCounter(SibylGcCoprocessor.CELLS_KEPT);
        long removedBefore = gcCounter(SibylGcCoprocessor.CELLS_REMOVED);
        commitValue(table, "v1");
        cluster.flush(table);
        assertTrue(gcCounter(SibylGcCoprocessor.CELLS_KEPT) > keptBefore, "the flush kept v1");
        commitValue(table, "v2");
        flushAndCompact(table);
        assertTrue(gcCounter(SibylGcCoprocessor.CELLS_REMOVED) > removedBefore, "the compaction removed v1");
        assertEquals(1, versions(table).size());
    }

    /**
     * A counter of this coprocessor in the region server's HBase metrics (the minicluster's region server runs in
     * this JVM), as JMX and the region server's metrics sinks show it; 0 before the first collection.
     */
    private static long gcCounter(String name) {
        for (MetricRegistry registry : MetricRegistries.global().getMetricRegistries()) {
            MetricRegistryInfo info = registry.getMetricRegistryInfo();
            if (info.getMetricsName().endsWith(SibylGcCoprocessor.class.getName())) {
                assertEquals("RegionServer,sub=Coprocessor.Region.CP_" + SibylGcCoprocessor.class.getName(),
                        info.getMetricsJmxContext(), "where docs/operations.md says to look");
                return registry.get(name).map(m -> ((Counter) m).getCount()).orElse(0L);
            }
        }
        return 0;
    }

    @Test
    void versionShadowedBeforeTheLowWatermarkIsRemoved() throws Exception {
        TableName table = collectedTable("shadowed");
        long first = commitValue(table, "v1");
        cluster.flush(table);
        long second = commitValue(table, "v2");
        flushAndCompact(table);
        assertEquals(List.of(second), versions(table), "v1 (" + first + ") is read by no snapshot any more");
        assertEquals("v2", read(table));
    }

    @Test
    void shadowedVersionWhoseCommitTheOracleForgotIsRemovedToo() throws Exception {
        TableName table = collectedTable("forgotten");
        commitValue(table, "v1");
        cluster.flush(table);
        long second = commitValue(table, "v2");
        pushTmaxPastEverythingSoFar();
        flushAndCompact(table);
        assertEquals(List.of(second), versions(table));
        assertEquals("v2", read(table));
    }

    @Test
    void versionAnOpenSnapshotStillReadsSurvivesCompaction() throws Exception {
        TableName table = collectedTable("snapshot");
        long first = commitValue(table, "v1");
        try (TTable t = new TTable(cluster.connection(), table)) {
            Transaction reader = tm.begin();
            assertEquals("v1", Bytes.toString(t.get(reader, new Get(ROW)).getValue(F, Q)));
            long second = commitValue(table, "v2");
            flushAndCompact(table);
            cluster.flush(table);
            assertEquals(List.of(second, first), versions(table));
            assertEquals("v1", Bytes.toString(t.get(reader, new Get(ROW)).getValue(F, Q)),
                    "the reader's snapshot is intact after a major compaction and a flush");
            tm.commit(reader); // read-only: the oracle hears FINISH and the watermark moves on
            awaitCollected(table, List.of(second));
        }
    }

    /**
     * A reader older than the oracle's commit window (T_max has passed it) still lets the collector remove what was
     * shadowed before it began: its watermark is above the shadowing commit, even though the replica no longer holds
     * that commit's timestamp.
     */
    @Test
    void versionShadowedBeforeALongReaderBeganIsRemovedOnceTmaxHasPassedTheReader() throws Exception {
        TableName table = collectedTable("longreader");
        long first = commitValue(table, "v1");
        cluster.flush(table);
        long second = commitValue(table, "v2");
        try (TTable t = new TTable(cluster.connection(), table)) {
            Transaction reader = tm.begin();
            assertEquals("v2", Bytes.toString(t.get(reader, new Get(ROW)).getValue(F, Q)));
            pushTmaxPastEverythingSoFar(); // the reader is now older than every commit the oracle remembers
            long third = commitValue(table, "v3");
            flushAndCompact(table);
            assertEquals(List.of(third, second), versions(table),
                    "v1 (" + first + ") is read by no snapshot; v2 by the reader " + reader.getStartTimestamp());
            assertEquals("v2", Bytes.toString(t.get(reader, new Get(ROW)).getValue(F, Q)));
            tm.commit(reader);
        }
    }

    /** What the region server's replica holds for a long reader is bounded by sibyl.gc.max.held.commits. */
    @Test
    void theReplicaLetsGoOfCommitsHeldForALongReaderBeyondTheLimit() throws Exception {
        OracleLink link = linkToTheOracle("held-commits-limit", 100);
        long reader = oracle.begin().get(5, TimeUnit.SECONDS);
        try {
            GcHorizon first = link.horizon("test");
            assertTrue(first != null && first.lowWatermark() <= reader);
            CommitReplica replica = first.replica();
            commitRows(oracle, "held", 0, 300);
            awaitCommitCount(replica, n -> n >= 300, "the commits above the reader are held");
            link.horizon("test"); // over the limit: let go
            commitRows(oracle, "held", -1, 1); // a block for the replica to trim on
            awaitCommitCount(replica, n -> n <= 100, "trimmed at T_max again");
            link.horizon("test"); // not held again at the same watermark: the commits below are trimmed at T_max
            awaitApplied(replica, commitRows(oracle, "held", 1000, 200));
            assertTrue(replica.commitCount() <= 2 * GcCluster.COMMIT_WINDOW, replica.commitCount() + " held");
        } finally {
            oracle.finish(reader);
            link.release();
        }
    }

    /**
     * A compaction that asked for the watermark before the one that moved the hold, and finds the replica over the
     * limit, lets go of the watermark held, not only of its own older one: else the next flush or refresh, at the
     * watermark still held, held every commit above it again.
     */
    @Test
    void aCompactionWithAnOlderWatermarkLetsGoOfTheOneHeld() throws Exception {
        OracleLink link = linkToTheOracle("older-watermark-limit", 100);
        long reader = oracle.begin().get(5, TimeUnit.SECONDS);
        try (OracleClient current = OracleClient.connect("127.0.0.1", cluster.oraclePort())) {
            long older = oracle.lowWatermark().get(5, TimeUnit.SECONDS);
            long w = older + 1; // as if the oracle had reported a later one meanwhile (reader still holds it there)
            link.hold(current.replica(), w);
            commitRows(oracle, "older", 0, 300);
            awaitCommitCount(current.replica(), n -> n >= 300, "the commits above the watermark are held");
            link.hold(current.replica(), older); // the late compaction: over the limit, lets go
            link.hold(current.replica(), w); // the next flush, at the watermark given up: not held again
            awaitApplied(current.replica(), commitRows(oracle, "older", 1000, 200));
            int held = current.replica().commitCount();
            assertTrue(held <= 2 * GcCluster.COMMIT_WINDOW, held + " commits held: it trims at T_max");
        } finally {
            oracle.finish(reader);
            link.release();
        }
    }

    /**
     * A flush that got the replica of a connection a failover then replaced, and asks after one that got the new
     * one, must not leave the new replica held at the watermark for good.
     */
    @Test
    void aHorizonOnAReplacedConnectionLeavesNoHoldBehindOnTheNewOne() throws Exception {
        OracleLink link = linkToTheOracle("replaced-connection", 1_000_000);
        long reader = oracle.begin().get(5, TimeUnit.SECONDS);
        try (OracleClient replaced = OracleClient.connect("127.0.0.1", cluster.oraclePort());
             OracleClient current = OracleClient.connect("127.0.0.1", cluster.oraclePort())) {
            long w = oracle.lowWatermark().get(5, TimeUnit.SECONDS);
            link.hold(current.replica(), w);
            link.hold(replaced.replica(), w); // the late flush
            awaitApplied(current.replica(), commitRows(oracle, "replaced", 0, 300));
            int held = current.replica().commitCount();
            assertTrue(held <= 2 * GcCluster.COMMIT_WINDOW, held + " commits held: it trims at T_max");
        } finally {
            oracle.finish(reader);
            link.release();
        }
    }

    /**
     * The oracle's transaction.max.age.ms lets the replica forget its local readers; the watermark the collector
     * registers there is none of them. After the oracle expires a leaked transaction, it still reports that
     * transaction's start as the watermark for reader.grace.ms, and younger transactions keep reading: a commit above
     * the watermark that the replica dropped must not count as one below it.
     */
    @Test
    void theHeldWatermarkOutlivesTheOraclesTransactionMaxAge() throws Exception {
        try (OracleServer aging = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(1 << 12, GcCluster.COMMIT_WINDOW, 1 << 10).withReaderGrace(60_000)
                .withTransactionMaxAge(1000));
             OracleClient client = OracleClient.connect("127.0.0.1", aging.port())) {
            Configuration conf = new Configuration(false);
            conf.set(TransactionManager.ORACLE_ADDRESS, "127.0.0.1:" + aging.port());
            OracleLink link = OracleLink.acquire(conf, new GcSettings(true, "max-age", GcCluster.WATERMARK_TIMEOUT_MS,
                    10_000, 10_000, 1_000_000));
            try {
                assertTrue(link.horizon("test") != null, "connected before the leaked transaction begins");
                long leaked = client.begin().get(5, TimeUnit.SECONDS);
                GcHorizon first = link.horizon("test");
                assertEquals(leaked, first.lowWatermark());
                Thread.sleep(3000); // the oracle expires the leaked transaction and holds the watermark at its start
                long writer = client.begin().get(5, TimeUnit.SECONDS); // also what a younger reader's snapshot is
                long commit = client.commit(writer, new long[] {RowIds.of("aging", Bytes.toBytes(0))})
                        .get(5, TimeUnit.SECONDS);
                // T_max passes the writer's commit
                awaitApplied(first.replica(), commitRows(client, "aging", 1, 2 * GcCluster.COMMIT_WINDOW));
                GcHorizon later = link.horizon("test");
                // The oracle holds the watermark at the leaked start for its reader.grace.ms (a minute) after expiring
                // it; a machine slow enough to get here later has moved on, and then the commit is below it.
                assumeTrue(later.lowWatermark() <= writer, "the watermark moved past the writer: too slow a machine");
                assertEquals(GcHorizon.Verdict.KEEP, later.judge(writer), "committed at " + commit
                        + ", above the watermark " + leaked + ": a snapshot between them reads what it shadows");
            } finally {
                link.release();
            }
        }
    }

    /**
     * The connection outlives the last region using it by {@link OracleLink#LINGER_MS} from the last time it was let
     * go: a region that took it up and let it go again (a split's daughter merged back, a region moved away again)
     * must not find it closed by the close scheduled the first time.
     */
    @Test
    void theConnectionOutlivesTheLastReleaseNotTheFirst() throws Exception {
        // A 16 s linger instead of a minute: the steps below leave 4-6 s of slack each way on a loaded machine.
        long linger = 16_000;
        OracleLink.lingerMillis = linger;
        try {
            lingerOnce(linger);
        } finally {
            OracleLink.lingerMillis = OracleLink.LINGER_MS;
        }
    }

    private void lingerOnce(long linger) throws Exception {
        OracleLink link = linkToTheOracle("linger", 1_000_000);
        assertTrue(link.horizon("test") != null, "connected");
        link.release(); // t = 0: closes at 1 linger unless taken up
        Thread.sleep(linger / 2);
        assertSame(link, linkToTheOracle("linger", 1_000_000), "taken up again within the linger");
        Thread.sleep(linger / 4);
        link.release(); // t = 3/4: closes at 7/4
        Thread.sleep(linger * 5 / 8); // t = 11/8, past the close scheduled at t = 0, before the one at 7/4
        OracleLink again = linkToTheOracle("linger", 1_000_000);
        try {
            assertSame(link, again, "the connection let go of 5/8 of a linger ago is still there");
            assertTrue(again.horizon("test") != null, "and open");
        } finally {
            again.release();
        }
    }

    /** A link to the minicluster's oracle, as a region server's collector opens it, holding at most maxHeld. */
    private static OracleLink linkToTheOracle(String name, long maxHeld) {
        Configuration conf = new Configuration(false);
        conf.set(TransactionManager.ORACLE_ADDRESS, "127.0.0.1:" + cluster.oraclePort());
        return OracleLink.acquire(conf, new GcSettings(true, name, GcCluster.WATERMARK_TIMEOUT_MS, 10_000, 10_000,
                maxHeld));
    }

    /** Commits {@code count} transactions through {@code client}, each on a row of its own; the last commit's ts. */
    private static long commitRows(OracleClient client, String prefix, int from, int count) throws Exception {
        long last = 0;
        for (int i = from; i < from + count; i++) {
            long ts = client.begin().get(5, TimeUnit.SECONDS);
            last = client.commit(ts, new long[] {RowIds.of(prefix, Bytes.toBytes(i))}).get(5, TimeUnit.SECONDS);
        }
        return last;
    }

    private static void awaitApplied(CommitReplica replica, long ts) {
        await("the commits up to " + ts + " reach the replica").atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(20)).until(() -> replica.highestTimestampApplied() >= ts);
    }

    private static void awaitCommitCount(CommitReplica replica, java.util.function.IntPredicate ok, String what) {
        await().atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20)).untilAsserted(() -> {
            int held = replica.commitCount();
            assertTrue(ok.test(held), what + ": " + held + " commits held");
        });
    }

    @Test
    void snapshotOfAReaderWhoseConnectionWasLostSurvivesCompactionForTheGracePeriod() throws Exception {
        TableName table = collectedTable("lost-reader");
        long first = commitValue(table, "v1");
        long reader;
        try (OracleClient lost = OracleClient.connect("127.0.0.1", cluster.oraclePort())) {
            reader = lost.begin().get(5, TimeUnit.SECONDS);
        } // dropped with the reader running: its client may go on reading v1 from HBase for a while
        long lostAt = System.nanoTime();
        long second = commitValue(table, "v2");
        assertTrue(second > reader && reader > first);
        flushAndCompact(table);
        List<Long> afterCompaction = versions(table);
        // The compaction asked for the watermark before it finished, so if it finished within the grace period
        // (less a second: the oracle may have noticed the lost connection a little before lostAt) the hold was on.
        assumeTrue(System.nanoTime() - lostAt < (GcCluster.READER_GRACE_MS - 1000) * 1_000_000L,
                "the machine is too slow to compact within the grace period");
        assertEquals(List.of(second, first), afterCompaction, "v1 is spared while the lost reader may read it");
        awaitCollected(table, List.of(second));
        assertTrue(System.nanoTime() - lostAt >= GcCluster.READER_GRACE_MS * 1_000_000L,
                "v1 was spared for the whole grace period");
    }

    @Test
    void uncommittedVersionOfARunningWriterSurvives() throws Exception {
        TableName table = collectedTable("running");
        long first = commitValue(table, "v1");
        Configuration conf = cluster.configuration();
        conf.set(TransactionManager.ORACLE_ADDRESS, "127.0.0.1:" + cluster.oraclePort());
        conf.set(TransactionManager.WRITE_BUFFER_BYTES, "0"); // every write goes to HBase at once, before commit
        try (TransactionManager eager = TransactionManager.create(conf);
             TTable t = new TTable(eager.getConnection(), table)) {
            Transaction writer = eager.begin();
            t.put(writer, new Put(ROW).addColumn(F, Q, Bytes.toBytes("v2")));
            flushAndCompact(table);
            assertEquals(List.of(writer.getStartTimestamp(), first), versions(table),
                    "neither the running writer's version nor the committed one it may not shadow is removed");
            assertEquals("v2", Bytes.toString(t.get(writer, new Get(ROW)).getValue(F, Q)));
            eager.commit(writer);
            flushAndCompact(table);
            assertEquals(List.of(writer.getStartTimestamp()), versions(table));
        }
    }

    @Test
    void committedTombstoneBelowWatermarkRemovesTheCell() throws Exception {
        TableName table = collectedTable("tombstone");
        long delete = valueFlushedThenDeleted(table);
        cluster.flush(table);
        assertEquals(List.of(delete), versions(table).subList(0, 1),
                "a flush keeps the tombstone: older versions may sit in other files");
        cluster.majorCompact(table);
        assertEquals(List.of(), versions(table), "tombstone and value are gone");
        assertNull(read(table));
    }

    /** Commits v1 and flushes it, then commits a delete of the column (left in the memstore); returns the delete's. */
    private static long valueFlushedThenDeleted(TableName table) throws Exception {
        commitValue(table, "v1");
        cluster.flush(table);
        try (TTable t = new TTable(cluster.connection(), table)) {
            Transaction delete = tm.begin();
            t.delete(delete, new Delete(ROW).addColumn(F, Q));
            tm.commit(delete);
            return delete.getStartTimestamp();
        }
    }

    @Test
    void tombstoneWhoseCommitTheOracleForgotRemovesTheCellAtMajorCompaction() throws Exception {
        TableName table = collectedTable("oldtombstone");
        valueFlushedThenDeleted(table);
        pushTmaxPastEverythingSoFar();
        flushAndCompact(table);
        assertEquals(List.of(), versions(table));
        assertNull(read(table));
    }

    @Test
    void writerAbortedByTmaxKeepsItsVersionUntilItsClientFinishes() throws Exception {
        TableName table = collectedTable("tmaxaborted");
        long first = commitValue(table, "v1");
        long writer = writeAndLeaveRunning(table, "v2");
        pushTmaxPastEverythingSoFar(); // the oracle aborts the writer, but its client does not know yet
        flushAndCompact(table);
        assertEquals(List.of(writer, first), versions(table), "it may still read its own write");
        oracle.abort(writer).get(5, TimeUnit.SECONDS); // its client gives up: it leaves the running set
        flushAndCompact(table);
        assertEquals(List.of(first), versions(table));
    }

    @Test
    void forgottenAbortHiddenByADeleteMarkerInTheMemstoreShadowsNothing() throws Exception {
        TableName table = collectedTable("zombie");
        long first = commitValue(table, "v1");
        long aborted = writeAndLeaveRunning(table, "aborted");
        cluster.flush(table); // both versions in one file
        oracle.abort(aborted).get(5, TimeUnit.SECONDS);
        try (Table raw = cluster.connection().getTable(table)) {
            raw.delete(new Delete(ROW).addColumn(F, Q, aborted)); // the client's clean-up: a marker, in the memstore
        }
        oracle.cleanedUp(aborted).get(5, TimeUnit.SECONDS);
        pushTmaxPastEverythingSoFar(); // the oracle forgets the abort, and T_max passes both writers
        try (OracleClient fresh = OracleClient.connect("127.0.0.1", cluster.oraclePort())) {
            assertFalse(fresh.replica().isAborted(aborted), "forgotten");
            assertTrue(fresh.replica().tMax() > aborted, "and below T_max, so it looks committed long ago");
        }
        cluster.majorCompact(table); // no flush: the marker stays in the memstore, the put is in the file
        cluster.flush(table);
        assertEquals(List.of(first), versions(table), "the older committed version was not taken as shadowed");
        assertEquals("v1", read(table));
    }

    @Test
    void compactionWithoutAReachableOracleRemovesNothing() throws Exception {
        TableName table = cluster.createTable("unreachable", CoprocessorDescriptorBuilder
                .newBuilder(SibylGcCoprocessor.class.getName())
                .setProperties(Map.of(TransactionManager.ORACLE_ADDRESS, "127.0.0.1:1",
                        GcSettings.CONNECT_TIMEOUT_MS, "300", GcSettings.WATERMARK_TIMEOUT_MS, "500"))
                .build());
        long first = commitValue(table, "v1");
        long second = commitValue(table, "v2");
        long abandoned = writeAndLeaveRunning(table, "abandoned");
        oracle.abort(abandoned).get(5, TimeUnit.SECONDS);
        long t0 = System.nanoTime();
        flushAndCompact(table);
        assertEquals(List.of(abandoned, second, first), versions(table));
        assertTrue(System.nanoTime() - t0 < 20_000_000_000L, "the flush and compaction did not wait long");
        assertEquals("v2", read(table));
    }

    @Test
    void collectionResumesOnceTheOracleComesUp() throws Exception {
        int port;
        try (ServerSocket s = new ServerSocket(0)) {
            port = s.getLocalPort(); // free now; the oracle starts there later
        }
        TableName table = cluster.createTable("late", CoprocessorDescriptorBuilder
                .newBuilder(SibylGcCoprocessor.class.getName())
                .setProperties(Map.of(TransactionManager.ORACLE_ADDRESS, "127.0.0.1:" + port,
                        GcSettings.CONNECT_TIMEOUT_MS, "300", GcSettings.RETRY_MS, "200",
                        GcSettings.WATERMARK_TIMEOUT_MS, "1000"))
                .build());
        try (Table raw = cluster.connection().getTable(table)) {
            raw.put(new Put(ROW).addColumn(F, Bytes.toBytes("plain"), Bytes.toBytes("x"))); // something to flush
        }
        flushAndCompact(table); // the region server's link to that port fails meanwhile
        try (OracleServer late = OracleServer.startInMemory(OracleConfig.defaults().withPort(port)
                .withCapacities(1 << 12, GcCluster.COMMIT_WINDOW, 1 << 10));
             OracleClient lateOracle = OracleClient.connect("127.0.0.1", port);
             TransactionManager lateTm = TransactionManager.create(cluster.connection(), "127.0.0.1", port);
             TTable t = new TTable(cluster.connection(), table)) {
            long last = 0;
            for (String v : new String[] {"v1", "v2"}) {
                Transaction tx = lateTm.begin();
                t.put(tx, new Put(ROW).addColumn(F, Q, Bytes.toBytes(v)));
                lateTm.commit(tx);
                last = tx.getStartTimestamp();
            }
            // Whenever the link reconnects, T_max passing both writers makes them collectable for its replica.
            for (int i = 0; i < 2 * GcCluster.COMMIT_WINDOW; i++) {
                long ts = lateOracle.begin().get(5, TimeUnit.SECONDS);
                lateOracle.commit(ts, new long[] {RowIds.of("late", Bytes.toBytes(i))}).get(5, TimeUnit.SECONDS);
            }
            awaitCollected(table, List.of(last));
        }
    }

    @Test
    void tableWithoutTheCoprocessorIsUntouched() throws Exception {
        TableName table = cluster.createTable("plain", null);
        long first = commitValue(table, "v1");
        long second = commitValue(table, "v2");
        long abandoned = writeAndLeaveRunning(table, "abandoned");
        oracle.abort(abandoned).get(5, TimeUnit.SECONDS);
        flushAndCompact(table);
        assertEquals(List.of(abandoned, second, first), versions(table));
    }

    /**
     * A family TTable refuses (one version, or a TTL) holds no transactional data, so its cells are HBase's alone,
     * whatever their timestamps: here plain cells with small explicit timestamps, which the collector would take for
     * writers committed long ago (or aborted), beside a transactional family that is still collected (as when the
     * collector is loaded for every region).
     */
    @Test
    void familiesThatCannotHoldTransactionalDataAreLeftToHBase() throws Exception {
        TableName table = TableName.valueOf("plainfamilies");
        byte[] ttl = Bytes.toBytes("ttl");
        byte[] one = Bytes.toBytes("one");
        try (var admin = cluster.connection().getAdmin()) {
            admin.createTable(TableDescriptorBuilder.newBuilder(table)
                    .setColumnFamily(TTable.familyDescriptor("f"))
                    .setColumnFamily(ColumnFamilyDescriptorBuilder.newBuilder(ttl).setMaxVersions(5)
                            .setMinVersions(3).setTimeToLive(3600).build())
                    .setColumnFamily(ColumnFamilyDescriptorBuilder.of(one))
                    .setCoprocessor(CoprocessorDescriptorBuilder.of(SibylGcCoprocessor.class.getName()))
                    .build());
        }
        // No TTable opens this table (it refuses such families): the transactional family's versions come raw.
        long[] committed = new long[2];
        for (int i = 0; i < 2; i++) {
            committed[i] = writeAndLeaveRunning(table, "v" + i);
            oracle.commit(committed[i], new long[] {RowIds.of(table.getNameAsString(), ROW)}).get(5, TimeUnit.SECONDS);
        }
        long abandoned = writeAndLeaveRunning(table, "abandoned");
        oracle.abort(abandoned).get(5, TimeUnit.SECONDS);
        try (Table t = cluster.connection().getTable(table)) {
            for (long ts = 1; ts <= 3; ts++) { // MIN_VERSIONS keeps them past the TTL
                t.put(new Put(ROW).addColumn(ttl, Q, ts, Bytes.toBytes("plain" + ts)));
            }
            t.put(new Put(ROW).addColumn(one, Q, abandoned, Bytes.toBytes("plain"))); // an aborted start, by chance
        }
        pushTmaxPastEverythingSoFar();
        flushAndCompact(table);
        assertEquals(List.of(3L, 2L, 1L), cluster.versions(table, ROW, ttl, Q));
        assertEquals(List.of(abandoned), cluster.versions(table, ROW, one, Q));
        assertEquals(List.of(committed[1]), versions(table), "the transactional family is collected");
    }

    /**
     * A split closes the region before it opens the daughters. If the last region using the region server's oracle
     * connection closing closed it, the daughters' new connection would not know the commits made before it began, and
     * would keep what they shadow until T_max passed them.
     */
    @Test
    void theCollectorStillKnowsRecentCommitsAfterASplit() throws Exception {
        TableName table = cluster.createTable("split", CoprocessorDescriptorBuilder
                .newBuilder(SibylGcCoprocessor.class.getName())
                // Another name for the same oracle: a connection of this table's regions alone.
                .setProperties(Map.of(TransactionManager.ORACLE_ADDRESS, "localhost:" + cluster.oraclePort()))
                .build());
        byte[] other = Bytes.toBytes("another");
        try (Table raw = cluster.connection().getTable(table)) {
            raw.put(new Put(other).addColumn(F, Q, Bytes.toBytes("x"))); // so that each daughter has a file
        }
        cluster.flush(table); // waits for the region's connection: the commits below reach its replica
        commitValue(table, "v1");
        cluster.flush(table);
        long second = commitValue(table, "v2");
        cluster.flush(table); // v1 and v2 in two files: only a compaction can drop v1
        try (var admin = cluster.connection().getAdmin()) {
            admin.split(table, Bytes.toBytes("b"));
            await("the split").atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(50)).pollInSameThread()
                    .until(() -> admin.getRegions(table).size() == 2
                            && cluster.util().getMiniHBaseCluster().getRegions(table).size() == 2);
        }
        cluster.majorCompact(table); // rewrites the daughters' references to their parent's files
        assertEquals(List.of(second), versions(table));
        assertEquals("v2", read(table));
    }

    /**
     * The production set-up: the region server finds the oracle through the leader znode of an HA group (here written
     * by hand, for the test's oracle, in the minicluster's ZooKeeper), with a ZooKeeper client inside the region
     * server beside HBase's own.
     */
    @Test
    void collectsWithTheOracleFoundThroughTheLeaderZnode() throws Exception {
        Configuration hbase = cluster.configuration();
        String zk = hbase.get("hbase.zookeeper.quorum") + ":" + hbase.get("hbase.zookeeper.property.clientPort");
        String znode = "/gc-test/leader";
        CountDownLatch connected = new CountDownLatch(1);
        try (ZooKeeper client = new ZooKeeper(zk, 10_000, e -> connected.countDown())) {
            assertTrue(connected.await(10, TimeUnit.SECONDS), "ZooKeeper at " + zk);
            client.create("/gc-test", new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            client.create(znode, new LeaderRecord(1, "127.0.0.1", cluster.oraclePort(), "test").encode(),
                    ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
        }
        TableName table = cluster.createTable("zk", CoprocessorDescriptorBuilder
                .newBuilder(SibylGcCoprocessor.class.getName())
                .setProperties(Map.of(TransactionManager.ORACLE_ZK_CONNECT, zk,
                        TransactionManager.ORACLE_LEADER_ZNODE, znode))
                .build());
        try (Table raw = cluster.connection().getTable(table)) {
            raw.put(new Put(Bytes.toBytes("another")).addColumn(F, Q, Bytes.toBytes("x")));
        }
        cluster.flush(table); // waits for the region server's connection: the commits below reach its replica
        commitValue(table, "v1");
        cluster.flush(table);
        long second = commitValue(table, "v2");
        flushAndCompact(table);
        assertEquals(List.of(second), versions(table));
    }

    @Test
    void nonTransactionalCellsWithWallClockTimestampsAreKept() throws Exception {
        TableName table = collectedTable("wallclock");
        try (Table t = cluster.connection().getTable(table)) {
            t.put(new Put(ROW).addColumn(F, Q, Bytes.toBytes("a")));
            Thread.sleep(2);
            t.put(new Put(ROW).addColumn(F, Q, Bytes.toBytes("b")));
        }
        flushAndCompact(table);
        assertEquals(2, versions(table).size(), "versions far above every oracle timestamp are unknown: kept");
        try (Table t = cluster.connection().getTable(table)) {
            assertArrayEquals(Bytes.toBytes("b"), t.get(new Get(ROW)).getValue(F, Q));
        }
    }

    /**
     * The oracle's timestamps are a counter (two per writing transaction), so a busy oracle passes the wall-clock
     * milliseconds plain HBase writes carry (about 1.8e12 in 2026) within months: from then on such cells are below
     * T_max and count as committed long ago, and the collector shadows their older versions like any other
     * (docs/gc.md, "Installing it on a region server"). Here an oracle that continues at a clock an hour of
     * milliseconds ahead of the wall clock stands for one that got there.
     */
    @Test
    void wallClockCellsCountAsTransactionalOnceTheOracleClockHasPassedTheWallClock() throws Exception {
        long ahead = System.currentTimeMillis() + 3_600_000L;
        OracleConfig config = OracleConfig.defaults().withPort(0).withCapacities(1 << 12, GcCluster.COMMIT_WINDOW,
                1 << 10).withReaderGrace(200);
        try (OracleServer busy = OracleServer.start(config, new InMemoryJournal(), new OracleState(config, ahead,
                ahead, new long[0], new long[0], new long[0], List.of()))) {
            TableName table = cluster.createTable("wallclockpassed", CoprocessorDescriptorBuilder
                    .newBuilder(SibylGcCoprocessor.class.getName())
                    .setProperties(Map.of(TransactionManager.ORACLE_ADDRESS, "127.0.0.1:" + busy.port()))
                    .build());
            try (Table t = cluster.connection().getTable(table)) {
                t.put(new Put(ROW).addColumn(F, Q, Bytes.toBytes("a")));
                Thread.sleep(2);
                t.put(new Put(ROW).addColumn(F, Q, Bytes.toBytes("b")));
            }
            Thread.sleep(500); // the recovered oracle's hold of the watermark at 0 (its reader grace) is over
            awaitCollected(table, versions(table).subList(0, 1));
        }
    }

    /** The watermark moves on when the oracle applies a one-way FINISH: compact until it has. */
    private static void awaitCollected(TableName table, List<Long> expected) {
        await().atMost(Duration.ofSeconds(60)).pollInterval(Duration.ofMillis(100)).pollInSameThread()
                .untilAsserted(() -> {
                    flushAndCompact(table);
                    assertEquals(expected, versions(table));
                });
    }
}
