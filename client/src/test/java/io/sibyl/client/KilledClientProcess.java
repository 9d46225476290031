package io.sibyl.client;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.TableName;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** A {@link KilledClientMain} in a JVM of its own: started, awaited until its writes are in HBase, killed. */
final class KilledClientProcess {
    private final Process process;
    private final File log;

    private KilledClientProcess(Process process, File log) {
        this.process = process;
        this.log = log;
    }

    /** Starts a client that writes {@code rows} rows (and more, see KilledClientMain) to {@code table}. */
    static KilledClientProcess start(Configuration conf, String oracleAddress, TableName table, int rows,
                                     String logName) throws IOException {
        String javaBin = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        ProcessBuilder pb = new ProcessBuilder(javaBin, "-Xmx256m", "--add-opens", "java.base/java.nio=ALL-UNNAMED",
                "-cp", cp, "-Dorg.slf4j.simpleLogger.defaultLogLevel=warn", KilledClientMain.class.getName(),
                conf.get("hbase.zookeeper.quorum"), conf.get("hbase.zookeeper.property.clientPort"),
                oracleAddress, table.getNameAsString(), Integer.toString(rows));
        File log = new File("target", logName + ".stderr");
        pb.redirectError(log);
        Process child = pb.start();
        // A child stuck before printing would block the reader forever: kill it after two minutes in any case.
        CompletableFuture.delayedExecutor(120, TimeUnit.SECONDS).execute(child::destroyForcibly);
        return new KilledClientProcess(child, log);
    }

    /**
     * Leaves a killed client's transaction in doubt across an oracle takeover: a client JVM writes {@code rows} rows
     * to {@code table} through the oracle at {@code oraclePort}; while its transaction runs, {@code takeOver} starts
     * the oracle that fences that one (and may commit more first); then the client is killed with SIGKILL. Returns the
     * in-doubt transaction's start timestamp.
     */
    static long inDoubtAcrossTakeover(Configuration conf, int oraclePort, TableName table, int rows, String logName,
                                      java.util.concurrent.Callable<?> takeOver) throws Exception {
        KilledClientProcess child = start(conf, "127.0.0.1:" + oraclePort, table, rows, logName);
        try {
            long inDoubt = child.awaitWritten();
            takeOver.call();
            return inDoubt;
        } finally {
            child.kill();
        }
    }

    /** Waits until the child's writes are in HBase, uncommitted; returns its transaction's start timestamp. */
    long awaitWritten() throws IOException {
        BufferedReader out = new BufferedReader(new InputStreamReader(process.getInputStream(),
                StandardCharsets.UTF_8));
        String line;
        do {
            line = out.readLine();
        } while (line != null && !line.startsWith("WRITTEN "));
        assertNotNull(line, "the child client exited or hung before writing; see " + log);
        return Long.parseLong(line.substring("WRITTEN ".length()).trim());
    }

    /** SIGKILL; returns the exit status once the process is gone. */
    int kill() throws InterruptedException {
        process.destroyForcibly();
        assertTrue(process.waitFor(30, TimeUnit.SECONDS), "the killed client did not exit");
        return process.exitValue();
    }
}
