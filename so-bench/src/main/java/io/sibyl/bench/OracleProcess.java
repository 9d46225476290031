package io.sibyl.bench;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * A {@code bin/so-server} started for one point of so-bench-clients, on a free port, with its output in a file: a
 * fresh oracle per point, so that one point's connections and garbage do not weigh on the next one's memory figure.
 */
final class OracleProcess {
    private static final Pattern READY = Pattern.compile("(?m)^READY port=(\\d+)");
    private static final long READY_TIMEOUT_NANOS = TimeUnit.SECONDS.toNanos(60);

    private final Process process;
    private final Path log;
    private final int port;

    private OracleProcess(Process process, Path log, int port) {
        this.process = process;
        this.log = log;
        this.port = port;
    }

    /** Starts {@code soServer} with {@code settings} ({@code key=value}) and waits for its READY line. */
    static OracleProcess start(Path soServer, List<String> settings) throws IOException, InterruptedException {
        Path log = Files.createTempFile("so-bench-clients-oracle.", ".log");
        List<String> command = new ArrayList<>(List.of(soServer.toString(), "--host=127.0.0.1", "--port=0"));
        for (String s : settings) {
            command.add("--" + s);
        }
        Process p = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(log.toFile()).start();
        long deadline = System.nanoTime() + READY_TIMEOUT_NANOS;
        while (System.nanoTime() - deadline < 0) {
            Matcher m = READY.matcher(Files.readString(log));
            if (m.find()) {
                OracleProcess oracle = new OracleProcess(p, log, Integer.parseInt(m.group(1)));
                oracle.collectGarbage();
                return oracle;
            }
            if (!p.isAlive()) {
                throw new IOException("the oracle exited (status " + p.exitValue() + ") before it was ready: "
                        + tail(log));
            }
            Thread.sleep(100);
        }
        p.destroyForcibly();
        throw new IOException("the oracle did not print READY within 60 s: " + tail(log));
    }

    /**
     * The oracle allocates its tables at start, in the young generation: one collection now promotes them, instead of
     * a long pause in the middle of the first measurement (as bin/so-bench does).
     */
    private void collectGarbage() throws InterruptedException {
        try {
            Process jcmd = new ProcessBuilder("jcmd", Long.toString(pid()), "GC.run")
                    .redirectErrorStream(true).redirectOutput(ProcessBuilder.Redirect.DISCARD).start();
            jcmd.waitFor(30, TimeUnit.SECONDS);
        } catch (IOException e) {
            // no jcmd on this machine: the first point may show one pause more
        }
    }

    int port() {
        return port;
    }

    long pid() {
        return process.pid();
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** The last lines of the oracle's output, to explain a failure. */
    String outputTail() {
        return tail(log);
    }

    private static String tail(Path log) {
        try {
            List<String> lines = Files.readAllLines(log);
            return String.join("\n", lines.subList(Math.max(0, lines.size() - 15), lines.size()));
        } catch (IOException e) {
            return "(its output " + log + " cannot be read: " + e + ")";
        }
    }

    /** VmRSS and VmHWM (the peak) of process {@code pid} in KiB, {@code {-1, -1}} if it cannot be read. */
    static long[] residentKb(long pid) {
        long[] kb = {-1, -1};
        try {
            for (String line : Files.readAllLines(Path.of("/proc", Long.toString(pid), "status"))) {
                if (line.startsWith("VmRSS:")) {
                    kb[0] = Long.parseLong(line.replaceAll("[^0-9]", ""));
                } else if (line.startsWith("VmHWM:")) {
                    kb[1] = Long.parseLong(line.replaceAll("[^0-9]", ""));
                }
            }
        } catch (IOException | NumberFormatException e) {
            // gone, or no /proc: unknown
        }
        return kb;
    }

    /** Stops the oracle (SIGTERM, then SIGKILL after 10 s) and deletes its output unless {@code keepLog}. */
    void stop(boolean keepLog) throws InterruptedException {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
        if (!keepLog) {
            try {
                Files.deleteIfExists(log);
            } catch (IOException e) {
                // a stray temporary file
            }
        }
    }

    Path log() {
        return log;
    }
}
