package io.sibyl.bench.fuzz;

import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Properties;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The so-fuzz engine for 20,000 frames against an oracle in this JVM (with an admin secret, so that the sweeper runs,
 * and a small write-set limit, so that oversized write sets are sent): every answer follows the protocol, the good
 * clients get no wrong answer, and the oracle's log, captured from stderr, shows no unexpected error.
 */
class FuzzRunTest {
    @TempDir
    Path dir;

    @Test
    void twentyThousandFramesLeaveTheOracleServingRightAnswers() throws Exception {
        Path secret = Files.writeString(dir.resolve("admin.secret"), "fuzz-run-test-admin-secret-0123456789");
        Path log = dir.resolve("oracle.log");
        Properties p = new Properties();
        for (String setting : new String[] {"host=127.0.0.1", "port=0", "conflict.table.rows=65536",
                "recent.commits.capacity=65536", "max.running.transactions=65536", "max.write.set.rows=64",
                "admin.secret.file=" + secret}) {
            p.setProperty(setting.substring(0, setting.indexOf('=')), setting.substring(setting.indexOf('=') + 1));
        }
        PrintStream stderr = System.err;
        FuzzReport report;
        // The oracle logs a WARN per refused connection to stderr: into the file the engine looks through at the end.
        try (PrintStream toLog = new PrintStream(Files.newOutputStream(log), true, StandardCharsets.UTF_8);
             OracleServer server = OracleServer.startInMemory(OracleConfig.fromProperties(p))) {
            System.setErr(toLog);
            report = FuzzRun.run(FuzzOptions.parse(new String[] {"--oracle", "127.0.0.1:" + server.port(),
                    "--frames", "20k", "--connections", "4", "--seed", "19", "--server-pid",
                    Long.toString(ProcessHandle.current().pid()), "--admin-secret-file", secret.toString(),
                    "--oracle-log", log.toString()}), null);
        } finally {
            System.setErr(stderr);
        }
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        report.print(new PrintStream(printed, true, StandardCharsets.UTF_8));
        String text = printed.toString(StandardCharsets.UTF_8);
        System.out.println(text);
        assertEquals(java.util.List.of(), report.failures(), text);
        assertTrue(Files.size(log) > 0, "nothing of the oracle's log was captured, so nothing was checked");
        assertTrue(report.counters.frames() >= 20_000, text);
        for (FrameKind k : FrameKind.values()) {
            assertTrue(report.counters.frames(k) > 0, "no " + k.label + " sent: " + text);
        }
        assertTrue(report.counters.requestErrors(io.sibyl.protocol.Wire.ERR_FORBIDDEN) > 0, text);
        assertTrue(report.good.commits.sum() > 0 && report.good.swept.sum() > 0, text);
    }
}
