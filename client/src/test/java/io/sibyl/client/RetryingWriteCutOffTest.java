package io.sibyl.client;

import io.sibyl.client.oracle.OracleClient;
import io.sibyl.client.oracle.TransactionStatus;
import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.RegionTooBusyException;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Mutation;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.coprocessor.ObserverContext;
import org.apache.hadoop.hbase.coprocessor.RegionCoprocessor;
import org.apache.hadoop.hbase.coprocessor.RegionCoprocessorEnvironment;
import org.apache.hadoop.hbase.coprocessor.RegionObserver;
import org.apache.hadoop.hbase.regionserver.MiniBatchOperationInProgress;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicInteger;

import static io.sibyl.client.TestSupport.get;
import static io.sibyl.client.TestSupport.put;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * A batch of writes sent just before a transaction's read window ends, to a region that refuses it for now (HBase's
 * client keeps retrying), gives up when the window ends instead of retrying for HBase's operation timeout (a minute
 * here, 20 minutes by default) and landing after the oracle's hold on the transaction ended, when the abort sweeper
 * may already have taken it; while the oracle is heard, a write HBase is slow to take is sent again and lands.
 */
@ExtendWith(MiniCluster.class)
class RetryingWriteCutOffTest {
    /** The oracle's reader grace: a read window of 2 s, heartbeats every 400 ms. */
    private static final long GRACE_MS = 4000;

    /** Refuses every write to the tables it is loaded on while {@link #refusing}, as a busy or moving region does. */
    public static final class RefusingRegion implements RegionCoprocessor, RegionObserver {
        static volatile boolean refusing;
        static final AtomicInteger ATTEMPTS = new AtomicInteger();

        @Override
        public Optional<RegionObserver> getRegionObserver() {
            return Optional.of(this);
        }

        @Override
        public void preBatchMutate(ObserverContext<RegionCoprocessorEnvironment> c,
                                   MiniBatchOperationInProgress<Mutation> miniBatchOp) throws IOException {
            ATTEMPTS.incrementAndGet();
            if (refusing) {
                throw new RegionTooBusyException("refused by the test, for now");
            }
        }
    }

    @Test
    void aBatchThatHBaseKeepsRetryingWhileTheOracleIsSilentGivesUpWhenTheReadWindowEndsAndNeverLands()
            throws Exception {
        silentOracleWhileHBaseRetries(3, "retried_batch");
    }

    @Test
    void aSingleRowWriteThatHBaseKeepsRetryingWhileTheOracleIsSilentGivesUpWhenTheReadWindowEndsAndNeverLands()
            throws Exception {
        silentOracleWhileHBaseRetries(1, "retried_row");
    }

    private void silentOracleWhileHBaseRetries(int rows, String prefix) throws Exception {
        TableName name = refusingTable(prefix);
        try (OracleServer oracle = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(1 << 16, 1 << 16, 1 << 10).withReaderGrace(GRACE_MS));
             ReplyProxy proxy = new ReplyProxy(oracle.port());
             Connection hbase = patientConnection();
             TransactionManager tm = TransactionManager.create(hbase, "127.0.0.1", proxy.port());
             TTable t = new TTable(hbase, name)) {
            Transaction tx = tm.begin();
            for (int i = 0; i < rows; i++) {
                put(t, tx, "row" + i, "sent before the cut-off");
            }
            long window = TestSupport.internals(tx).begunOn().readWindowMillis();
            assertEquals(GRACE_MS / 2, window);
            RefusingRegion.ATTEMPTS.set(0);
            RefusingRegion.refusing = true;
            try {
                proxy.dropReplies(); // the oracle falls silent: its last frame came just now
                CompletableFuture<Void> flush = CompletableFuture.runAsync(() -> {
                    try {
                        TestSupport.internals(tx).flush();
                    } catch (IOException e) {
                        throw new java.io.UncheckedIOException(e);
                    }
                });
                Throwable failure;
                try {
                    flush.get(window + 5000, TimeUnit.MILLISECONDS);
                    fail("the write succeeded while the region refused it");
                    return;
                } catch (ExecutionException e) {
                    failure = e.getCause().getCause();
                } catch (TimeoutException e) {
                    // Without a cap, HBase retries for its operation timeout, and then the write lands below.
                    RefusingRegion.refusing = false;
                    String landed = "";
                    try {
                        flush.get(90, TimeUnit.SECONDS);
                        landed = "; once the region took writes again it landed with "
                                + TestSupport.versionsAt(name, tx.getStartTimestamp()) + " versions";
                    } catch (ExecutionException ignored) {
                        // failed in the end
                    }
                    fail("HBase was still retrying the write " + (window + 5000) + " ms after the oracle's last frame,"
                            + " past the read window of " + window + " ms" + landed);
                    return;
                }
                long silentMs = TestSupport.internals(tx).begunOn().millisSinceHeard();
                int attemptsAtFailure = RefusingRegion.ATTEMPTS.get();
                SnapshotExpiredException expired = assertInstanceOf(SnapshotExpiredException.class, failure,
                        String.valueOf(failure));
                assertTrue(expired.getMessage().contains("cannot write any more"), expired.getMessage());
                assertNotNull(expired.getCause(), "HBase's own failure is the cause");
                assertTrue(attemptsAtFailure > 1, "HBase retried the write: " + attemptsAtFailure + " attempts");
                assertTrue(silentMs >= window - 200 && silentMs < window + 2000, "the write gave up "
                        + silentMs + " ms after the oracle's last frame; the read window is " + window + " ms");
                System.out.printf("%d-row write gave up %d ms after the oracle's last frame (read window %d ms),"
                        + " after %d attempts%n", rows, silentMs, window, attemptsAtFailure);

                // The region takes writes again: nothing of the batch is retried or lands any more.
                RefusingRegion.refusing = false;
                Thread.sleep(1500);
                assertEquals(attemptsAtFailure, RefusingRegion.ATTEMPTS.get(), "HBase retried after giving up");
                assertEquals(0, TestSupport.versionsAt(name, tx.getStartTimestamp()), "a version landed after the"
                        + " read window ended");
                tm.rollback(tx);
            } finally {
                RefusingRegion.refusing = false;
            }
        }
    }

    @Test
    void aWriteThatHBaseRefusesLongerThanTheReadWindowWhileTheOracleIsHeardIsSentAgainAndLands() throws Exception {
        TableName name = refusingTable("slow_region");
        try (OracleServer oracle = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(1 << 16, 1 << 16, 1 << 10).withReaderGrace(GRACE_MS));
             Connection hbase = patientConnection();
             TransactionManager tm = TransactionManager.create(hbase, "127.0.0.1", oracle.port());
             TTable t = new TTable(hbase, name)) {
            Transaction tx = tm.begin();
            put(t, tx, "a", "taken in the end");
            put(t, tx, "b", "taken in the end");
            long window = TestSupport.internals(tx).begunOn().readWindowMillis();
            long refusedAt = System.nanoTime();
            flushWhileRefusedFor(tx, window * 2); // longer than a whole window: HBase gives up at the cap at least once
            long tookMs = (System.nanoTime() - refusedAt) / 1_000_000;
            assertTrue(tookMs >= window * 2, tookMs + " ms");
            tm.commit(tx);
            Transaction reader = tm.begin();
            assertEquals("taken in the end", get(t, reader, "a"));
            assertEquals("taken in the end", get(t, reader, "b"));
            tm.commit(reader);
        }
    }

    /**
     * A region server may still apply a batch HBase gave up on after the transaction's clean-up deleted its versions
     * (and a major compaction may drop the delete markers first). So an aborted transaction that had such a batch is
     * not reported cleaned up: it stays in the oracle's aborted set for bin/sibyl-sweep; one without is reported.
     */
    @Test
    void aRolledBackTransactionWithABatchHBaseGaveUpOnLeavesItsCleanUpToTheSweeper() throws Exception {
        TableName name = refusingTable("late_batch");
        try (OracleServer oracle = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(1 << 16, 1 << 16, 1 << 10).withReaderGrace(GRACE_MS));
             Connection hbase = patientConnection();
             TransactionManager tm = TransactionManager.create(hbase, "127.0.0.1", oracle.port());
             TTable t = new TTable(hbase, name)) {
            Transaction plain = tm.begin();
            put(t, plain, "p", "rolled back");
            TestSupport.internals(plain).flush();
            tm.rollback(plain);

            Transaction tx = tm.begin();
            put(t, tx, "a", "sent again");
            long window = TestSupport.internals(tx).begunOn().readWindowMillis();
            flushWhileRefusedFor(tx, window * 2); // HBase gives up at the cap at least once; the batch is sent again
            assertTrue(TestSupport.internals(tx).mayHaveLateWrites());
            assertFalse(TestSupport.internals(plain).mayHaveLateWrites());
            tm.rollback(tx);
            assertEquals(0, TestSupport.versionsAt(name, tx.getStartTimestamp()), "its versions were deleted");

            // The plain one's report lets the oracle forget it; the other stays aborted for the sweeper.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (askOracle(oracle.port(), plain.getStartTimestamp()).state() == TransactionStatus.State.ABORTED
                    && System.nanoTime() < deadline) {
                tm.commit(tm.begin()); // moves the low watermark past the report
                Thread.sleep(50);
            }
            assertEquals(TransactionStatus.State.UNKNOWN, askOracle(oracle.port(), plain.getStartTimestamp()).state(),
                    "a clean-up without late writes is reported and the abort forgotten");
            assertEquals(TransactionStatus.State.ABORTED, askOracle(oracle.port(), tx.getStartTimestamp()).state(),
                    "a clean-up after a batch HBase gave up on is left to the sweeper");
        }
    }

    /** Flushes {@code tx} while its table's region refuses writes for the first {@code refuseMillis}. */
    private static void flushWhileRefusedFor(Transaction tx, long refuseMillis) throws Exception {
        RefusingRegion.ATTEMPTS.set(0);
        RefusingRegion.refusing = true;
        try {
            CompletableFuture<Void> flush = CompletableFuture.runAsync(() -> {
                try {
                    TestSupport.internals(tx).flush();
                } catch (IOException e) {
                    throw new java.io.UncheckedIOException(e);
                }
            });
            Thread.sleep(refuseMillis);
            RefusingRegion.refusing = false;
            flush.get(30, TimeUnit.SECONDS);
        } finally {
            RefusingRegion.refusing = false;
        }
    }

    private static TransactionStatus askOracle(int port, long startTs) throws Exception {
        try (OracleClient direct = OracleClient.connect("127.0.0.1", port)) {
            return direct.query(startTs).get(10, TimeUnit.SECONDS);
        }
    }

    /** A table whose region refuses writes while {@link RefusingRegion#refusing}. */
    private static TableName refusingTable(String prefix) throws IOException {
        TableName name = TableName.valueOf(prefix + "_" + System.nanoTime());
        try (Admin admin = MiniCluster.get().connection().getAdmin()) {
            admin.createTable(TableDescriptorBuilder.newBuilder(name)
                    .setColumnFamily(TTable.familyDescriptor("cf"))
                    .setCoprocessor(RefusingRegion.class.getName())
                    .build());
        }
        return name;
    }

    /**
     * An HBase connection that retries a write for a minute (the default is 20 minutes); a silent oracle's answers
     * (the rollback's abort) are given up on after a second.
     */
    private static Connection patientConnection() throws IOException {
        Configuration conf = MiniCluster.get().configuration();
        conf.set(TransactionManager.ORACLE_TIMEOUT_MS, "1000");
        conf.set(TransactionManager.FAILOVER_TIMEOUT_MS, "1000");
        conf.setInt("hbase.client.operation.timeout", 60_000);
        conf.setInt("hbase.client.retries.number", 1000);
        conf.setInt("hbase.client.pause", 50);
        return ConnectionFactory.createConnection(conf);
    }
}
