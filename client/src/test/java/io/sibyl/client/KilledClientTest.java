package io.sibyl.client;

import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Scan;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static io.sibyl.client.TestSupport.get;
import static io.sibyl.client.TestSupport.put;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A client JVM is killed with SIGKILL in the middle of a transaction whose writes (puts, an overwrite and a delete)
 * are already in HBase: nothing of it is ever visible, and the oracle, seeing the connection drop, aborts it.
 */
@ExtendWith(MiniCluster.class)
class KilledClientTest {
    static final int ROWS = 50;

    @Test
    void clientKilledMidTransactionLeavesNothingVisible() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("killed", "cf");
        try (TransactionManager tm = c.manager(); TTable t = new TTable(c.connection(), name)) {
            Transaction init = tm.begin();
            put(t, init, "existing", "committed");
            put(t, init, "doomed", "still here");
            tm.commit(init);

            KilledClientProcess child = KilledClientProcess.start(c.configuration(),
                    c.configuration().get(TransactionManager.ORACLE_ADDRESS), name, ROWS, "killed-client");
            long writerTs;
            int exit;
            try {
                writerTs = child.awaitWritten();
                // Its versions are in HBase, uncommitted; a running reader does not see them
                assertEquals(ROWS + 2, TestSupport.versionsAt(name, writerTs));
                Transaction during = tm.begin();
                assertEquals("committed", get(t, during, "existing"));
                assertEquals(List.of("doomed", "existing"), TestSupport.rows(t, during, new Scan()));
                tm.commit(during);
            } finally {
                exit = child.kill();
            }
            assertEquals(137, exit, "killed by SIGKILL");

            // The oracle aborts the dead client's transaction; the abort reaches our replica with a later reply.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (!tm.oracle().replica().isAborted(writerTs)) {
                assertTrue(System.nanoTime() < deadline, "the oracle did not abort the killed client's transaction");
                tm.commit(tm.begin());
                Thread.sleep(50);
            }
            Transaction after = tm.begin();
            assertFalse(TestSupport.internals(after).snapshot().sees(writerTs));
            assertEquals("committed", get(t, after, "existing"));
            assertEquals("still here", get(t, after, "doomed"));
            assertEquals(List.of("doomed", "existing"), TestSupport.rows(t, after, new Scan()));
            // and it can be overwritten without conflict: the dead transaction holds nothing
            put(t, after, "existing", "later");
            tm.commit(after);
            assertEquals(ROWS + 2, TestSupport.versionsAt(name, writerTs), "left for the garbage collector, invisible");
        }
    }
}
