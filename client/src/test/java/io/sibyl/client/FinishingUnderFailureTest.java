package io.sibyl.client;

import io.sibyl.client.oracle.OracleClient;
import io.sibyl.client.oracle.TransactionStatus;
import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.sibyl.client.TestSupport.CF;
import static io.sibyl.client.TestSupport.V;
import static io.sibyl.client.TestSupport.b;
import static io.sibyl.client.TestSupport.get;
import static io.sibyl.client.TestSupport.put;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Commits and rollbacks when something fails around them: a lost reply, a manager closed by another thread, a write
 * HBase refuses, a reader whose oracle connection is gone. Whatever happens, a transaction the oracle committed keeps
 * its writes, and one that lost a write never commits.
 */
@ExtendWith(MiniCluster.class)
@Timeout(value = 120, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class FinishingUnderFailureTest {

    private static TransactionStatus askOracle(int port, long startTs) throws Exception {
        try (OracleClient direct = OracleClient.connect("127.0.0.1", port)) {
            return direct.query(startTs).get(10, TimeUnit.SECONDS);
        }
    }

    /**
     * The oracle's decision on {@code startTs} once it has one. A commit whose reply was lost went out on another
     * connection (through the proxy's threads): on a busy machine this query can overtake it, so RUNNING means
     * "not there yet" and is asked again; a commit that never arrives stays RUNNING and fails the caller's check.
     */
    private static TransactionStatus decision(int port, long startTs) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
        TransactionStatus st = askOracle(port, startTs);
        while (st.state() == TransactionStatus.State.RUNNING && System.nanoTime() < deadline) {
            Thread.sleep(20);
            st = askOracle(port, startTs);
        }
        return st;
    }

    private static String readCommitted(TTable t, int oraclePort, String row) throws Exception {
        try (TransactionManager tm = TransactionManager.create(MiniCluster.get().connection(), "127.0.0.1",
                oraclePort)) {
            Transaction r = tm.begin();
            String v = get(t, r, row);
            tm.commit(r);
            return v;
        }
    }

    /** A manager that talks to the oracle through {@code proxy} and gives up on a silent oracle after a second. */
    private static TransactionManager impatientManager(ReplyProxy proxy) throws Exception {
        return MiniCluster.get().manager(Map.of(TransactionManager.ORACLE_ADDRESS, "127.0.0.1:" + proxy.port(),
                TransactionManager.ORACLE_TIMEOUT_MS, "1000", TransactionManager.FAILOVER_TIMEOUT_MS, "1000"));
    }

    @Test
    void rollbackOfATransactionWhoseCommitOutcomeIsUnknownIsRefusedAndItsCommitSurvives() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName table = c.createTable("in-doubt", "cf");
        try (OracleServer oracle = OracleServer.startInMemory(OracleConfig.defaults().withPort(0));
             ReplyProxy proxy = new ReplyProxy(oracle.port());
             TTable t = new TTable(c.connection(), table)) {
            try (TransactionManager tm = impatientManager(proxy)) {
                Transaction tx = tm.begin();
                put(t, tx, "k", "v1");
                proxy.dropReplies(); // the commit reaches the oracle; its answer never comes back
                assertThrows(CommitOutcomeUnknownException.class, () -> tm.commit(tx));
                assertEquals(TransactionStatus.State.COMMITTED, decision(oracle.port(), tx.getStartTimestamp()).state());
                IllegalStateException refused = assertThrows(IllegalStateException.class, () -> tm.rollback(tx));
                assertTrue(refused.getMessage().contains("commit outcome is unknown"), refused.getMessage());
                // As the user guide says: no status of its own, but no further use either.
                assertEquals(Transaction.Status.RUNNING, tx.getStatus());
                IllegalStateException used = assertThrows(IllegalStateException.class, () -> put(t, tx, "k", "v2"));
                assertTrue(used.getMessage().contains("in doubt (its commit outcome is unknown)"), used.getMessage());
            }
            assertEquals("v1", readCommitted(t, oracle.port(), "k"), "the commit the oracle decided kept its write");
        }
    }

    @Test
    void runDoesNotRollBackWorkWhoseOwnCommitEndedInDoubt() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName table = c.createTable("in-doubt-run", "cf");
        try (OracleServer oracle = OracleServer.startInMemory(OracleConfig.defaults().withPort(0));
             ReplyProxy proxy = new ReplyProxy(oracle.port());
             TTable t = new TTable(c.connection(), table)) {
            long[] started = new long[1];
            try (TransactionManager tm = impatientManager(proxy)) {
                assertThrows(CommitOutcomeUnknownException.class, () -> tm.run(tx -> {
                    try {
                        started[0] = tx.getStartTimestamp();
                        put(t, tx, "k", "v1");
                        proxy.dropReplies();
                        tm.commit(tx);
                    } catch (Exception e) {
                        throw e instanceof RuntimeException re ? re : new IllegalStateException(e);
                    }
                    return null;
                }));
            }
            assertEquals(TransactionStatus.State.COMMITTED, decision(oracle.port(), started[0]).state());
            assertEquals("v1", readCommitted(t, oracle.port(), "k"));
        }
    }

    @Test
    void closingTheManagerWhileACommitIsInFlightLetsTheCommitFinishWithItsWrites() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName table = c.createTable("close-during-commit", "cf");
        try (OracleServer oracle = OracleServer.startInMemory(OracleConfig.defaults().withPort(0));
             ReplyProxy proxy = new ReplyProxy(oracle.port());
             TTable t = new TTable(c.connection(), table)) {
            TransactionManager tm = c.manager(Map.of(TransactionManager.ORACLE_ADDRESS, "127.0.0.1:" + proxy.port()));
            Transaction tx = tm.begin();
            put(t, tx, "k", "v1");
            proxy.delayReplies(1500);
            CompletableFuture<Void> commit = CompletableFuture.runAsync(() -> {
                try {
                    tm.commit(tx);
                } catch (RollbackException e) {
                    throw new IllegalStateException(e);
                }
            });
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (!TestSupport.internals(tx).isBeingFinished() && System.nanoTime() < deadline) {
                Thread.sleep(5);
            }
            assertTrue(TestSupport.internals(tx).isBeingFinished(), "the commit started");
            Thread.sleep(300); // its request is at the oracle, the reply on the way
            tm.close();
            commit.get(30, TimeUnit.SECONDS);
            assertEquals(Transaction.Status.COMMITTED, tx.getStatus(), "close waited for the commit under way");
            assertEquals(TransactionStatus.State.COMMITTED, askOracle(oracle.port(), tx.getStartTimestamp()).state());
            assertEquals("v1", readCommitted(t, oracle.port(), "k"));
        }
    }

    @Test
    void aWriteHBaseRefusesMakesTheTransactionRollBackOnlyWithoutLosingEarlierWritesSilently() throws Exception {
        MiniCluster c = MiniCluster.get();
        // The region servers refuse cells over 64 KiB in this table (the client's own limit, which TTable.put checks,
        // stays at its default): a write HBase refuses only when the buffer is sent.
        TableName table = TableName.valueOf("failed-flush_" + System.nanoTime());
        try (Admin admin = c.connection().getAdmin()) {
            admin.createTable(TableDescriptorBuilder.newBuilder(table).setColumnFamily(TTable.familyDescriptor(CF))
                    .setValue("hbase.server.keyvalue.maxsize", "65536").build());
        }
        Map<String, String> settings = Map.of(TransactionManager.WRITE_BUFFER_BYTES, "4096");
        try (TransactionManager tm = c.manager(settings);
             TTable t = new TTable(tm.getConnection(), table)) {
            Transaction tx = tm.begin();
            put(t, tx, "a", "acknowledged"); // buffered: put() returned normally
            assertThrows(IOException.class, () -> t.put(tx, new Put(b("big")).addColumn(CF, V,
                    new byte[100_000]))); // over the buffer: the flush sends both, and HBase refuses the batch
            IllegalStateException rollBackOnly = assertThrows(IllegalStateException.class, () -> get(t, tx, "a"));
            assertTrue(rollBackOnly.getMessage().contains("can only roll back"), rollBackOnly.getMessage());
            assertThrows(IllegalStateException.class, () -> put(t, tx, "b", "more"));
            RollbackException e = assertThrows(RollbackException.class, () -> tm.commit(tx));
            assertEquals(RollbackException.Reason.WRITE_FAILED, e.getReason());
            assertEquals(Transaction.Status.ROLLED_BACK, tx.getStatus());
            Transaction r = tm.begin();
            assertNull(get(t, r, "a"), "nothing of the rolled-back transaction is visible");
            tm.commit(r);
        }
    }

    /**
     * A writer that commits after the reader's snapshot began, while the reader's oracle connection is lost, and
     * that the oracle then reports only as "committed long ago" (T_max passed it): the reader cannot place it, so it
     * must not show it.
     */
    @Test
    void aReaderThatLostItsOracleNeverShowsAWriterItCannotPlace() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName table = c.createTable("long-ago", "cf");
        try (OracleServer oracle = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(1 << 10, 4, 1 << 10)); // a commit window of 4: T_max passes commits quickly
             TransactionManager writers = TransactionManager.create(c.connection(), "127.0.0.1", oracle.port());
             TTable t = new TTable(c.connection(), table)) {
            Transaction w = writers.begin();
            put(t, w, "x", "new");
            try (TransactionManager readers = TransactionManager.create(c.connection(), "127.0.0.1",
                    oracle.port())) {
                Transaction r = readers.begin(); // its connection began after w: w is older than it
                readers.oracle().closeBecause("test: the reader's connection is lost");
                writers.commit(w);
                assertTrue(w.getCommitTimestamp() > r.getStartTimestamp(), "w committed after r's snapshot");
                for (int i = 0; i < 10; i++) {
                    Transaction f = writers.begin();
                    put(t, f, "filler" + i, "1");
                    writers.commit(f);
                }
                assertEquals(TransactionStatus.State.COMMITTED_LONG_AGO,
                        askOracle(oracle.port(), w.getStartTimestamp()).state());
                SnapshotExpiredException e = assertThrows(SnapshotExpiredException.class, () -> get(t, r, "x"));
                assertTrue(e.getMessage().contains("no longer knows when"), e.getMessage());
            }
        }
    }
}
