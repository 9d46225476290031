package io.sibyl.client;

import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import org.apache.hadoop.hbase.client.Scan;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;
import java.util.Map;

import static io.sibyl.client.TestSupport.get;
import static io.sibyl.client.TestSupport.put;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The corners of snapshot resolution that depend on the oracle's bounded memory: writers older than the client's
 * connection (resolved by commit queries), and long transactions that T_max passes while they run.
 */
@ExtendWith(MiniCluster.class)
class OldWritersAndLongReadersTest {

    @Test
    void clientConnectedAfterACommitAsksTheOracleAboutOlderWriters() throws Exception {
        MiniCluster c = MiniCluster.get();
        TTable t = new TTable(c.connection(), c.createTable("older", "cf"));
        try (TransactionManager first = c.manager(Map.of(TransactionManager.WRITE_BUFFER_BYTES, "0"))) {
            Transaction committed = first.begin();
            put(t, committed, "k1", "a");
            first.commit(committed);
            Transaction running = first.begin();
            put(t, running, "k2", "b"); // in HBase, uncommitted
            try (TransactionManager later = c.manager()) {
                Transaction reader = later.begin();
                assertEquals("a", get(t, reader, "k1"), "committed before this client connected");
                assertNull(get(t, reader, "k2"), "running when asked");
                first.commit(running);
                assertNull(get(t, reader, "k2"), "committed after the reader started");
                assertEquals(List.of("k1"), TestSupport.rows(t, reader, new Scan()));
                later.commit(reader);
                Transaction after = later.begin();
                assertEquals("b", get(t, after, "k2"));
                later.commit(after);
            }
        }
    }

    @Test
    void longTransactionsKeepTheirSnapshotWhileTmaxPassesThemAndWritersAreAbortedAsTooOld() throws Exception {
        MiniCluster c = MiniCluster.get();
        // A private oracle with a tiny commit window, so that T_max moves quickly; and a table only it writes to.
        try (OracleServer small = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(64, 8, 1024));
             TransactionManager tm = TransactionManager.create(c.connection(), "127.0.0.1", small.port())) {
            TTable t = new TTable(c.connection(), c.createTable("tmax", "cf"));
            Transaction base = tm.begin();
            put(t, base, "k", "v0");
            tm.commit(base);

            Transaction writerBefore = tm.begin();
            Transaction longReader = tm.begin();
            Transaction longWriter = tm.begin();
            put(t, writerBefore, "k", "v1");
            tm.commit(writerBefore); // committed after the long transactions started: not in their snapshots
            put(t, longWriter, "other", "x");
            long tMaxBefore = small.tMax();
            for (int i = 0; i < 50; i++) {
                final int n = i;
                tm.run(TestSupport.io(tx -> {
                    put(t, tx, "filler" + n, "f");
                    return null;
                }));
            }
            assertTrue(small.tMax() > longWriter.getStartTimestamp(),
                    "T_max passed the long transactions (" + tMaxBefore + " -> " + small.tMax() + ")");
            assertTrue(writerBefore.getStartTimestamp() < small.tMax());
            assertEquals("v0", get(t, longReader, "k"), "the snapshot does not shift when T_max passes it");
            assertEquals("v0", get(t, longWriter, "k"));
            assertEquals(List.of("k"), TestSupport.rows(t, longReader, new Scan().withStopRow(TestSupport.b("l"))));
            tm.commit(longReader); // read-only: commits locally
            RollbackException e = assertThrows(RollbackException.class, () -> tm.commit(longWriter));
            assertEquals(RollbackException.Reason.TOO_OLD, e.getReason());
            assertTrue(e.isRetryable());
            Transaction after = tm.begin();
            assertEquals("v1", get(t, after, "k"));
            assertNull(get(t, after, "other"), "the too-old writer's version was removed or is skipped");
            assertEquals("f", get(t, after, "filler49"));
            tm.commit(after);
        }
    }
}
