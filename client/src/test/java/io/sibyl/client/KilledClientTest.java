package io.sibyl.client;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.BufferedReader;
import java.io.File;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static io.sibyl.client.TestSupport.get;
import static io.sibyl.client.TestSupport.put;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
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

            Configuration conf = c.configuration();
            String javaBin = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
            String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
            ProcessBuilder pb = new ProcessBuilder(javaBin, "-Xmx256m", "--add-opens", "java.base/java.nio=ALL-UNNAMED",
                    "-cp", cp, "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", KilledClientMain.class.getName(),
                    conf.get("hbase.zookeeper.quorum"), conf.get("hbase.zookeeper.property.clientPort"),
                    conf.get(TransactionManager.ORACLE_ADDRESS), name.getNameAsString(), Integer.toString(ROWS));
            File childLog = new File("target", "killed-client.stderr");
            pb.redirectError(childLog);
            Process child = pb.start();
            // A child stuck before printing would block readLine forever: kill it after two minutes in any case.
            CompletableFuture.delayedExecutor(120, TimeUnit.SECONDS).execute(child::destroyForcibly);
            long writerTs;
            try {
                BufferedReader out = new BufferedReader(new InputStreamReader(child.getInputStream(),
                        StandardCharsets.UTF_8));
                String line;
                do {
                    line = out.readLine();
                } while (line != null && !line.startsWith("WRITTEN "));
                assertNotNull(line, "the child client exited or hung before writing; see " + childLog);
                writerTs = Long.parseLong(line.substring("WRITTEN ".length()).trim());
                // Its versions are in HBase, uncommitted; a running reader does not see them
                assertEquals(ROWS + 2, versionsAt(name, writerTs));
                Transaction during = tm.begin();
                assertEquals("committed", get(t, during, "existing"));
                assertEquals(List.of("doomed", "existing"), TestSupport.rows(t, during, new Scan()));
                tm.commit(during);
            } finally {
                child.destroyForcibly(); // SIGKILL
                assertTrue(child.waitFor(30, TimeUnit.SECONDS));
            }
            assertEquals(137, child.exitValue(), "killed by SIGKILL");

            // The oracle aborts the dead client's transaction; the abort reaches our replica with a later reply.
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(20);
            while (!tm.oracle().replica().isAborted(writerTs)) {
                assertTrue(System.nanoTime() < deadline, "the oracle did not abort the killed client's transaction");
                tm.commit(tm.begin());
                Thread.sleep(50);
            }
            Transaction after = tm.begin();
            assertFalse(after.sees(writerTs));
            assertEquals("committed", get(t, after, "existing"));
            assertEquals("still here", get(t, after, "doomed"));
            assertEquals(List.of("doomed", "existing"), TestSupport.rows(t, after, new Scan()));
            // and it can be overwritten without conflict: the dead transaction holds nothing
            put(t, after, "existing", "later");
            tm.commit(after);
            assertEquals(ROWS + 2, versionsAt(name, writerTs), "left for the garbage collector, invisible");
        }
    }

    private static int versionsAt(TableName name, long ts) throws Exception {
        int n = 0;
        try (Table raw = MiniCluster.get().raw(name); ResultScanner s = raw.getScanner(new Scan().readAllVersions())) {
            for (Result r : s) {
                for (Cell cell : r.rawCells()) {
                    if (cell.getTimestamp() == ts) {
                        n++;
                    }
                }
            }
        }
        return n;
    }
}
