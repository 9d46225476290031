package io.sibyl.ycsb;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Runs YCSB's real {@code site.ycsb.Client} with this binding in a child JVM (the test JVM's classpath, 256 MB heap)
 * against the test JVM's {@link EmbeddedStack}, as a user would run it, and captures its output and exit status.
 * C1 only: these runs last seconds, and the two cores are shared with the minicluster.
 */
final class YcsbProcess {
    private static final long TIMEOUT_SECONDS = 120;

    /** What one YCSB run printed and how it exited. */
    record Run(int exitStatus, String stdout, String stderr) {
        /** Both streams, for assertion messages. */
        String transcript() {
            return "exit status " + exitStatus + "\n--- stdout ---\n" + stdout + "\n--- stderr ---\n" + stderr;
        }
    }

    private YcsbProcess() {
    }

    /**
     * Runs {@code site.ycsb.Client -db io.sibyl.ycsb.SibylClient -P workloads/<workload> -s} with {@code phase}
     * ({@code -load} or {@code -t}), the stack's addresses and {@code extra} arguments.
     */
    static Run run(String phase, String workload, String... extra) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>(List.of(
                Path.of(System.getProperty("java.home"), "bin", "java").toString(),
                "-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1", "-Djava.net.preferIPv4Stack=true",
                "--add-opens", "java.base/java.nio=ALL-UNNAMED",
                "-Dorg.slf4j.simpleLogger.log.org.apache=warn",
                "-cp", System.getProperty("java.class.path"),
                "site.ycsb.Client", phase, "-db", SibylClient.class.getName(), "-P", "workloads/" + workload));
        for (String p : StackExtension.stack().ycsbProperties()) {
            cmd.add("-p");
            cmd.add(p);
        }
        cmd.addAll(List.of(extra));
        Path out = Files.createTempFile("ycsb", ".out");
        Path err = Files.createTempFile("ycsb", ".err");
        try {
            Process p = new ProcessBuilder(cmd).directory(new File(System.getProperty("user.dir")))
                    .redirectOutput(out.toFile()).redirectError(err.toFile()).start();
            if (!p.waitFor(TIMEOUT_SECONDS, TimeUnit.SECONDS)) {
                p.destroyForcibly().waitFor();
                throw new AssertionError("YCSB did not finish within " + TIMEOUT_SECONDS + " s:\n"
                        + Files.readString(out) + "\n" + Files.readString(err));
            }
            return new Run(p.exitValue(), Files.readString(out), Files.readString(err));
        } finally {
            Files.deleteIfExists(out);
            Files.deleteIfExists(err);
        }
    }
}
