package io.sibyl.client;

import io.sibyl.client.oracle.CommitReplica;
import io.sibyl.client.oracle.OracleClient;
import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Get;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;

import static io.sibyl.client.TestSupport.b;
import static io.sibyl.client.TestSupport.get;
import static io.sibyl.client.TestSupport.put;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An oracle with {@code transaction.max.age.ms}: a transaction that runs longer can no longer read, write or commit,
 * its writes stay invisible, and {@code run} retries slow work in a fresh transaction.
 */
@ExtendWith(MiniCluster.class)
class TransactionMaxAgeTest {
    private static final long MAX_AGE_MS = 1500;

    private static OracleServer oracleWithMaxAge() throws Exception {
        return OracleServer.startInMemory(OracleConfig.defaults().withPort(0).withCapacities(1 << 16, 1 << 14, 1 << 12)
                .withTransactionMaxAge(MAX_AGE_MS));
    }

    private static TransactionManager manager(OracleServer oracle) throws IOException {
        return MiniCluster.get().manager(Map.of(TransactionManager.ORACLE_ADDRESS, "127.0.0.1:" + oracle.port()));
    }

    @Test
    void aTransactionOlderThanTheMaxAgeCanNeitherReadNorWriteNorCommit() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("max_age", "cf");
        try (OracleServer oracle = oracleWithMaxAge(); TransactionManager tm = manager(oracle);
             TTable t = new TTable(c.connection(), name)) {
            Transaction init = tm.begin();
            put(t, init, "k", "committed");
            tm.commit(init);

            Transaction slow = tm.begin();
            put(t, slow, "k", "slow");
            TestSupport.internals(slow).flush(); // its version is in HBase
            Transaction reader = tm.begin();
            assertEquals("committed", get(t, reader, "k"));
            Thread.sleep(MAX_AGE_MS + 300);

            SnapshotExpiredException read = assertThrows(SnapshotExpiredException.class, () -> get(t, reader, "k"));
            assertTrue(read.getMessage().contains("transaction.max.age.ms"), read.getMessage());
            SnapshotExpiredException write = assertThrows(SnapshotExpiredException.class, () -> {
                put(t, slow, "other", "late");
                TestSupport.internals(slow).flush();
            });
            assertTrue(write.getMessage().contains("transaction.max.age.ms"), write.getMessage());
            tm.rollback(reader);
            RollbackException commit = assertThrows(RollbackException.class, () -> tm.commit(slow));
            assertTrue(commit.getMessage().contains("transaction.max.age.ms"), commit.getMessage());

            Transaction after = tm.begin();
            assertEquals("committed", get(t, after, "k"), "the expired transaction's write never became visible");
            assertNull(get(t, after, "other"));
            tm.commit(after);
        }
    }

    @Test
    void runRetriesWorkThatOutlivedTheMaxAgeInAFreshTransaction() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("max_age_run", "cf");
        try (OracleServer oracle = oracleWithMaxAge(); TransactionManager tm = manager(oracle);
             TTable t = new TTable(c.connection(), name)) {
            AtomicInteger attempts = new AtomicInteger();
            String value = tm.run(tx -> {
                try {
                    put(t, tx, "k", "v" + attempts.incrementAndGet());
                    if (attempts.get() == 1) {
                        Thread.sleep(MAX_AGE_MS + 300); // the first attempt is too slow
                    }
                    return get(t, tx, "k");
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                } catch (InterruptedException e) {
                    throw new IllegalStateException(e);
                }
            });
            assertEquals(2, attempts.get());
            assertEquals("v2", value);
            Transaction check = tm.begin();
            assertEquals("v2", get(t, check, "k"));
            assertTrue(t.get(check, new Get(b("k"))).size() == 1);
            tm.commit(check);
        }
    }

    /**
     * A transaction the application never finishes is aborted by the oracle at its max age and can no longer read,
     * so the client's replica must stop keeping every later commit for it: otherwise one leaked transaction makes the
     * replica hold every commit of the whole system until the manager closes.
     */
    @Test
    void aLeakedTransactionPastTheMaxAgeNoLongerPinsCommitsInTheReplica() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("max_age_leak", "cf");
        // A window of 8 commits: T_max stays close behind the newest commit, so an unpinned replica holds few.
        try (OracleServer oracle = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(1 << 10, 8, 1 << 12).withTransactionMaxAge(MAX_AGE_MS));
             TransactionManager tm = manager(oracle);
             TTable t = new TTable(c.connection(), name);
             OracleClient others = OracleClient.connect("127.0.0.1", oracle.port())) {
            Transaction leaked = tm.begin();
            put(t, leaked, "k", "never committed");
            commitElsewhere(others, 0, 100);
            Thread.sleep(MAX_AGE_MS + 300);
            assertThrows(SnapshotExpiredException.class, () -> get(t, leaked, "k"));
            commitElsewhere(others, 100, 300);
            CommitReplica replica = tm.oracle().replica();
            long deadline = System.nanoTime() + 30_000_000_000L;
            while (replica.tMax() < oracle.tMax() && System.nanoTime() < deadline) {
                Thread.sleep(5); // the oracle pushes the newest blocks to the idle connection
            }
            assertEquals(oracle.tMax(), replica.tMax(), "the replica caught up");
            assertTrue(replica.commitCount() < 50, "the replica holds " + replica.commitCount() + " commits for a"
                    + " transaction that can no longer read (300 were made after it began)");
            Transaction after = tm.begin();
            assertNull(get(t, after, "k"), "the expired transaction's write stays invisible");
            tm.commit(after);
        }
    }

    /** Commits write transactions on another connection to the oracle (one made-up row each, no HBase writes). */
    private static void commitElsewhere(OracleClient client, int from, int to) {
        for (int i = from; i < to; i++) {
            long ts = client.begin().join();
            client.commit(ts, new long[] {1_000_000L + i}).join();
        }
    }
}
