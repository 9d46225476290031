package io.sibyl.oracle.ha;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A so-server in its own JVM (tests here and in the client module, the failover benchmark): its stdout lines, stderr in a file, signals. */
public final class OracleProcess implements AutoCloseable {
    final String name;
    public final Process process;
    private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
    final List<String> seen = new ArrayList<>();
    final File stderr;

    /** JVM options of a test oracle: small heap, quick start (the tests size the oracle's tables down). */
    static final List<String> TEST_JVM = List.of("-Xmx256m", "-XX:+UseSerialGC", "-XX:TieredStopAtLevel=1");

    public OracleProcess(String name, List<String> flags) throws IOException {
        this(name, TEST_JVM, flags);
    }

    OracleProcess(String name, List<String> jvmOptions, List<String> flags) throws IOException {
        this.name = name;
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> cmd = new ArrayList<>(List.of(java));
        cmd.addAll(jvmOptions);
        cmd.addAll(List.of("-Dorg.slf4j.simpleLogger.log.org.apache.bookkeeper=warn",
                "-Dorg.slf4j.simpleLogger.log.org.apache.zookeeper=warn",
                "-Dorg.slf4j.simpleLogger.showDateTime=true",
                "-Dorg.slf4j.simpleLogger.dateTimeFormat=HH:mm:ss.SSS",
                "-cp", cp, "io.sibyl.oracle.OracleServerMain"));
        cmd.addAll(flags);
        stderr = File.createTempFile("so-server-" + name, ".log");
        process = new ProcessBuilder(cmd).redirectError(stderr).start();
        Thread reader = new Thread(() -> {
            try (BufferedReader r = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = r.readLine()) != null) {
                    lines.add(line);
                }
            } catch (IOException e) {
                // the process died
            }
        }, "so-server-" + name + "-stdout");
        reader.setDaemon(true);
        reader.start();
    }

    /**
     * Flags of an HA candidate on the BookKeeper journal at ZooKeeper {@code zkConnect}, with a group of its own
     * (ledger registry, leader znode and election under {@code root}), tables sized for tests, on a free port.
     */
    public static List<String> haCandidateFlags(String zkConnect, String root) {
        return List.of("--port=0", "--host=127.0.0.1", "--journal=bookkeeper", "--journal.zk.connect=" + zkConnect,
                "--journal.bk.metadata.uri=zk+null://" + zkConnect + "/ledgers", "--journal.ledgers.znode=" + root
                        + "/ledgers", "--journal.leader.znode=" + root + "/leader", "--journal.election.znode="
                        + root + "/election", "--ha=true", "--conflict.table.rows=65536",
                "--max.running.transactions=4096");
    }

    /** Waits for a stdout line starting with {@code prefix} and returns it. */
    public String awaitLine(String prefix, long timeoutMs) throws Exception {
        synchronized (seen) {
            for (String l : seen) {
                if (l.startsWith(prefix)) {
                    return l;
                }
            }
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMs);
        while (System.nanoTime() < deadline) {
            String line = lines.poll(10, TimeUnit.MILLISECONDS);
            if (line != null) {
                synchronized (seen) {
                    seen.add(line);
                }
                if (line.startsWith(prefix)) {
                    return line;
                }
            } else if (!process.isAlive() && lines.isEmpty()) {
                break;
            }
        }
        throw new AssertionError("so-server " + name + " printed no '" + prefix + "' line within " + timeoutMs
                + " ms (alive: " + process.isAlive() + "); stdout: " + seen + "\nstderr tail:\n" + tail());
    }

    /** Waits for READY and returns the port. */
    public int awaitReady(long timeoutMs) throws Exception {
        return Integer.parseInt(awaitLine("READY port=", timeoutMs).substring("READY port=".length()).trim());
    }

    /** The owner name of an HA candidate (from its STANDBY line). */
    public String owner(long timeoutMs) throws Exception {
        return awaitLine("STANDBY owner=", timeoutMs).substring("STANDBY owner=".length()).trim();
    }

    public void signal(String sig) throws Exception {
        Process kill = new ProcessBuilder("kill", "-" + sig, Long.toString(process.pid())).inheritIO().start();
        if (!kill.waitFor(10, TimeUnit.SECONDS) || kill.exitValue() != 0) {
            throw new IOException("kill -" + sig + " " + process.pid() + " failed");
        }
    }

    public String tail() {
        try {
            List<String> all = Files.readAllLines(stderr.toPath());
            return String.join("\n", all.subList(Math.max(0, all.size() - 60), all.size()));
        } catch (IOException e) {
            return "(no stderr: " + e + ")";
        }
    }

    /** Every stderr line containing {@code text}. */
    public List<String> stderrLines(String text) throws IOException {
        List<String> out = new ArrayList<>();
        for (String l : Files.readAllLines(stderr.toPath())) {
            if (l.contains(text)) {
                out.add(l);
            }
        }
        return out;
    }

    @Override
    public void close() {
        process.destroyForcibly();
        try {
            process.waitFor(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
        stderr.delete();
    }
}
