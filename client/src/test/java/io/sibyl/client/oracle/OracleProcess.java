package io.sibyl.client.oracle;

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

import static org.junit.jupiter.api.Assertions.fail;

/** A so-server process started by a test (its own JVM, this test's classpath) and its output. */
public final class OracleProcess implements AutoCloseable {
    public final Process process;
    private final LinkedBlockingQueue<String> lines = new LinkedBlockingQueue<>();
    public final List<String> seen = new java.util.concurrent.CopyOnWriteArrayList<>();
    private final File stderr;
    public int port = -1;

    public OracleProcess(String name, List<String> flags) throws IOException {
        String java = System.getProperty("java.home") + File.separator + "bin" + File.separator + "java";
        String cp = System.getProperty("surefire.test.class.path", System.getProperty("java.class.path"));
        List<String> cmd = new ArrayList<>(List.of(java, "-Xmx256m", "-XX:+UseSerialGC", "-cp", cp,
                "io.sibyl.oracle.OracleServerMain"));
        cmd.addAll(flags);
        stderr = File.createTempFile("so-server-" + name, ".log");
        ProcessBuilder pb = new ProcessBuilder(cmd).redirectError(stderr);
        process = pb.start();
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

    /** Waits for "READY port=N" (an HA standby prints it once it leads). */
    public int awaitReady() throws Exception {
        String line = awaitLine("READY port=", 60_000);
        port = Integer.parseInt(line.substring("READY port=".length()).trim());
        return port;
    }

    /** Waits for a line of standard output starting with {@code prefix} and returns it. */
    public String awaitLine(String prefix, long timeoutMillis) throws Exception {
        for (String l : seen) {
            if (l.startsWith(prefix)) {
                return l;
            }
        }
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        while (System.nanoTime() < deadline) {
            String line = lines.poll(20, TimeUnit.MILLISECONDS);
            if (line != null) {
                seen.add(line);
                if (line.startsWith(prefix)) {
                    return line;
                }
            } else if (!process.isAlive()) {
                break;
            }
        }
        fail("so-server printed no '" + prefix + "' line: " + seen + "\n" + tail());
        return null;
    }

    public String tail() throws IOException {
        List<String> all = Files.readAllLines(stderr.toPath());
        return String.join("\n", all.subList(Math.max(0, all.size() - 40), all.size()));
    }

    @Override
    public void close() {
        process.destroyForcibly();
        stderr.delete();
    }
}
