package io.sibyl.bench;

import org.HdrHistogram.Histogram;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.OutputStreamWriter;
import java.io.PrintStream;
import java.io.Writer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * so-bench-clients: the oracle under many client connections (issue 18). For every point of the sweep (a number of
 * connections, a total rate) it starts a fresh oracle process, spreads the connections over a few
 * {@link ClientsDriver} processes, opens them all, runs a warmup, measures the oracle's CPU and memory over one
 * window that every driver measures too, then adds the drivers' figures up and prints them.
 */
public final class ClientsBench {
    /** How long a driver may take to open its connections, or to print its result after STOP. */
    private static final long DRIVER_TIMEOUT_SECONDS = 180;
    private static final long RSS_SAMPLE_MILLIS = 500;

    private final ClientsOptions options;
    private final PrintStream out;

    private ClientsBench(ClientsOptions options, PrintStream out) {
        this.options = options;
        this.out = out;
    }

    public static void main(String[] args) {
        ClientsOptions options;
        try {
            options = ClientsOptions.parse(args);
        } catch (UsageException e) {
            System.err.println("so-bench-clients: " + e.getMessage());
            System.err.println("so-bench-clients: see 'bin/so-bench-clients --help'");
            System.exit(2);
            return;
        }
        if (options.help) {
            System.out.println(ClientsOptions.usage());
            System.exit(0);
        }
        String home = System.getProperty("sibyl.home");
        if (options.oracleHost == null && home == null) {
            System.err.println("so-bench-clients: run it as bin/so-bench-clients (which says where bin/so-server is),"
                    + " or pass --oracle HOST:PORT");
            System.exit(2);
        }
        int failures = 0;
        try {
            failures = new ClientsBench(options, System.out).sweep(home == null ? null : Path.of(home));
        } catch (Throwable t) {
            System.err.println("so-bench-clients: failed: " + t);
            t.printStackTrace();
            System.exit(1);
        }
        System.out.flush();
        System.exit(failures == 0 ? 0 : 1);
    }

    /** Runs every point; returns how many failed. */
    private int sweep(Path home) throws InterruptedException {
        List<String> results = new ArrayList<>();
        int failures = 0;
        for (int n : options.connections) {
            for (double rate : options.rates) {
                String result;
                try {
                    result = point(home, n, rate);
                } catch (IOException e) {
                    failures++;
                    result = String.format(Locale.ROOT, "RESULT conns=%d rate=%s FAILED %s", n, rateName(rate),
                            e.getMessage().replace('\n', ' '));
                    out.println("  FAILED: " + e.getMessage());
                }
                results.add(result);
            }
        }
        out.println();
        results.forEach(out::println);
        return failures;
    }

    private static String rateName(double rate) {
        return rate > 0 ? String.format(Locale.ROOT, "%.0f", rate) : "max";
    }

    private String point(Path home, int n, double rate) throws IOException, InterruptedException {
        int processes = Math.min(options.processes, n);
        int window = options.windowFor(n);
        out.printf(Locale.ROOT, "%nso-bench-clients: %d connection(s), rate %s, %d driver process(es), window %d,"
                + " write set %d%n", n, rate > 0 ? rateName(rate) + " txn/s" : "max (saturation)", processes, window,
                options.writeSet);
        out.flush();
        OracleProcess oracle = null;
        String host = options.oracleHost;
        int port = options.oraclePort;
        long pid = options.serverPid;
        List<Driver> drivers = new ArrayList<>();
        boolean keepLog = false;
        try {
            if (host == null) {
                oracle = OracleProcess.start(home.resolve("bin/so-server"), options.oracleSettings);
                host = "127.0.0.1";
                port = oracle.port();
                pid = oracle.pid();
            }
            long rssIdleKb = pid > 0 ? OracleProcess.residentKb(pid)[0] : -1;
            for (int i = 0; i < processes; i++) {
                int share = n / processes + (i < n % processes ? 1 : 0);
                int shareWindow = Math.max(share, (int) ((long) window * share / n));
                drivers.add(Driver.start(new DriverLoad.Settings(host, port, share, shareWindow, rate * share / n,
                        options.writeSet, options.keys, options.decodeDeltas)));
            }
            long connectStart = System.nanoTime();
            for (Driver d : drivers) {
                d.awaitLine("CONNECTED");
            }
            double connectSeconds = (System.nanoTime() - connectStart) / 1e9;
            long rssConnectedKb = pid > 0 ? OracleProcess.residentKb(pid)[0] : -1;
            drivers.forEach(d -> d.send("GO"));
            long maxRssKb = sampleRss(pid, options.warmupSeconds, rssConnectedKb);
            drivers.forEach(d -> d.send("MEASURE"));
            long cpu0 = pid > 0 ? CpuMeter.process(pid) : -1;
            long t0 = System.nanoTime();
            maxRssKb = sampleRss(pid, options.durationSeconds, maxRssKb);
            drivers.forEach(d -> d.send("STOP"));
            long cpu1 = pid > 0 ? CpuMeter.process(pid) : -1;
            long elapsed = System.nanoTime() - t0;
            long rssEndKb = pid > 0 ? OracleProcess.residentKb(pid)[0] : -1;
            DriverResult total = null;
            String failure = null;
            for (Driver d : drivers) {
                DriverResult r = DriverResult.decode(d.awaitLine(DriverResult.PREFIX.trim()));
                total = total == null ? r : total.plus(r);
                String f = d.pollLine("FAILURE");
                if (failure == null && f != null) {
                    failure = f.substring("FAILURE ".length());
                }
            }
            if (oracle != null && !oracle.isAlive()) {
                keepLog = true;
                failure = "the oracle process died; its output (" + oracle.log() + "):\n" + oracle.outputTail();
            }
            Figures f = new Figures(n, rate, processes, window, connectSeconds, elapsed / 1e9, total,
                    CpuMeter.Sample.percent(cpu0, cpu1, elapsed), rssIdleKb, rssConnectedKb, maxRssKb, rssEndKb,
                    failure);
            f.print(out);
            if (total.lostConnections() > 0 || failure != null && oracle != null && !oracle.isAlive()) {
                keepLog = oracle != null;
                throw new IOException(f.resultLine() + " but " + (total.lostConnections() > 0
                        ? total.lostConnections() + " connection(s) were lost: " + failure : failure));
            }
            return f.resultLine();
        } finally {
            for (Driver d : drivers) {
                d.destroy();
            }
            if (oracle != null) {
                oracle.stop(keepLog);
                if (keepLog) {
                    out.println("  the oracle's output is kept in " + oracle.log());
                }
            }
        }
    }

    /** Sleeps {@code seconds}, sampling the oracle's VmRSS; returns the largest sample (or {@code max} if larger). */
    private static long sampleRss(long pid, double seconds, long max) throws InterruptedException {
        long end = System.nanoTime() + (long) (seconds * 1e9);
        long left;
        while ((left = end - System.nanoTime()) > 0) {
            Thread.sleep(Math.max(1, Math.min(RSS_SAMPLE_MILLIS, left / 1_000_000)));
            if (pid > 0) {
                max = Math.max(max, OracleProcess.residentKb(pid)[0]);
            }
        }
        return max;
    }

    /** One point's figures, as the report and the RESULT line show them. */
    private record Figures(int connections, double rate, int processes, int window, double connectSeconds,
                           double seconds, DriverResult total, double oracleCpu, long rssIdleKb, long rssConnectedKb,
                           long rssMaxKb, long rssEndKb, String failure) {
        double committedPerSecond() {
            return total.counts().committed() / seconds;
        }

        double abortPercent() {
            long writers = total.counts().committed() + total.counts().aborted();
            return writers == 0 ? 0 : 100.0 * total.counts().aborted() / writers;
        }

        double driversCpu() {
            return 100.0 * total.cpuNanos() / (seconds * 1e9);
        }

        double bytesPerReply() {
            return ratio(total.received().bytes(), total.received().replies());
        }

        double bytesPerFrame() {
            return ratio(total.received().bytes(), total.received().frames());
        }

        double deltaBytesPerBeginReply() {
            return ratio(total.received().deltaBytes(), total.received().startReplies());
        }

        /** Bytes received per connection per second, every frame with its prefix. */
        double bytesPerConnectionSecond() {
            return total.received().bytes() / seconds / connections;
        }

        private static double ratio(long a, long b) {
            return b == 0 ? Double.NaN : (double) a / b;
        }

        void print(PrintStream out) {
            Metrics.Counts c = total.counts();
            ReceiveCounters.Snapshot r = total.received();
            out.printf(Locale.ROOT, "  connected  %d connections in %.1f s; measured %.1f s%n", connections,
                    connectSeconds, seconds);
            out.printf(Locale.ROOT, "  throughput %.0f txn/s committed (%d), %d begins sent, aborts %.3f%% (%d"
                            + " conflict, %d too old, %d already aborted), errors %d, connections lost %d%n",
                    committedPerSecond(), c.committed(), c.begins(), abortPercent(), c.conflicts(), c.tooOld(),
                    c.alreadyAborted(), c.errors(), total.lostConnections());
            out.println("  latency (ms)        p50      p90      p99    p99.9      max  count");
            out.println(latencyLine("begin", total.latencies().begin()));
            out.println(latencyLine("commit", total.latencies().commit()));
            out.println(latencyLine("transaction", total.latencies().txn()));
            out.printf(Locale.ROOT, "  oracle     cpu %s of one core; VmRSS %s MiB started, %s with the connections"
                            + " open, %s max under load, %s at the end%n", pct(oracleCpu), mib(rssIdleKb),
                    mib(rssConnectedKb), mib(rssMaxKb), mib(rssEndKb));
            out.printf(Locale.ROOT, "  drivers    cpu %s of one core over %d process(es)%n", pct(driversCpu()),
                    processes);
            out.printf(Locale.ROOT, "  received   %.1f bytes per reply message, %.1f per frame (%d frames, %d"
                            + " replies); %.1f bytes of replicated metadata per begin reply%s; %.1f KiB/s per"
                            + " connection, %.1f MiB/s in all%n", bytesPerReply(), bytesPerFrame(), r.frames(),
                    r.replies(), deltaBytesPerBeginReply(), r.deltaRecords() > 0
                            ? String.format(Locale.ROOT, " (%d records decoded)", r.deltaRecords()) : "",
                    bytesPerConnectionSecond() / 1024, r.bytes() / seconds / (1 << 20));
            if (failure != null) {
                out.println("  failure    " + failure);
            }
            out.flush();
        }

        String resultLine() {
            Histogram b = total.latencies().begin();
            Histogram cm = total.latencies().commit();
            return String.format(Locale.ROOT, "RESULT conns=%d rate=%s processes=%d window=%d txn_per_s=%.0f"
                            + " abort_pct=%.3f begin_p50=%.3f begin_p99=%.3f commit_p50=%.3f commit_p99=%.3f"
                            + " commit_p999=%.3f oracle_cpu=%s drivers_cpu=%s oracle_rss_mib=%s/%s/%s/%s"
                            + " bytes_per_reply=%.1f bytes_per_frame=%.1f delta_bytes_per_begin=%.1f"
                            + " bytes_per_conn_s=%.0f errors=%d lost=%d secs=%.1f",
                    connections, rateName(rate), processes, window, committedPerSecond(), abortPercent(),
                    ms(b, 50), ms(b, 99), ms(cm, 50), ms(cm, 99), ms(cm, 99.9), pct(oracleCpu), pct(driversCpu()),
                    mib(rssIdleKb), mib(rssConnectedKb), mib(rssMaxKb), mib(rssEndKb), bytesPerReply(),
                    bytesPerFrame(), deltaBytesPerBeginReply(), bytesPerConnectionSecond(), total.counts().errors(),
                    total.lostConnections(), seconds);
        }

        private static String latencyLine(String name, Histogram h) {
            if (h.getTotalCount() == 0) {
                return String.format(Locale.ROOT, "  %-14s %8s", name, "-");
            }
            return String.format(Locale.ROOT, "  %-14s%9.3f%9.3f%9.3f%9.3f%9.3f  %d", name, ms(h, 50), ms(h, 90),
                    ms(h, 99), ms(h, 99.9), h.getMaxValue() / 1e6, h.getTotalCount());
        }

        private static double ms(Histogram h, double percentile) {
            return h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(percentile) / 1e6;
        }

        private static String pct(double v) {
            return Double.isNaN(v) ? "n/a" : String.format(Locale.ROOT, "%.0f%%", v);
        }

        private static String mib(long kb) {
            return kb < 0 ? "n/a" : String.format(Locale.ROOT, "%.0f", kb / 1024.0);
        }
    }

    /** A driver process: its command input and the lines it prints, read by a thread of their own. */
    private static final class Driver {
        private final Process process;
        private final Writer commands;
        private final BlockingQueue<String> lines = new LinkedBlockingQueue<>();

        private Driver(Process process) {
            this.process = process;
            this.commands = new OutputStreamWriter(process.getOutputStream(), StandardCharsets.UTF_8);
            Thread reader = new Thread(this::readLines, "driver-" + process.pid() + "-output");
            reader.setDaemon(true);
            reader.start();
        }

        static Driver start(DriverLoad.Settings settings) throws IOException {
            List<String> command = new ArrayList<>();
            command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
            String opts = System.getenv().getOrDefault("SO_BENCH_CLIENTS_DRIVER_OPTS",
                    "-Xmx512m -XX:+UseParallelGC");
            for (String o : opts.trim().split("\\s+")) {
                if (!o.isEmpty()) {
                    command.add(o);
                }
            }
            command.addAll(List.of("-cp", System.getProperty("java.class.path"), ClientsDriver.class.getName()));
            command.addAll(ClientsOptions.driverArguments(settings));
            return new Driver(new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.INHERIT).start());
        }

        private void readLines() {
            try (BufferedReader in = new BufferedReader(new InputStreamReader(process.getInputStream(),
                    StandardCharsets.UTF_8))) {
                String line;
                while ((line = in.readLine()) != null) {
                    lines.add(line);
                }
            } catch (IOException e) {
                // the driver is gone; awaitLine reports it
            }
            lines.add("EXITED");
        }

        void send(String command) {
            try {
                commands.write(command + "\n");
                commands.flush();
            } catch (IOException e) {
                // the driver is gone; awaitLine reports it
            }
        }

        /** The next line that starts with {@code word}; a FAILED line or the driver's exit is an error. */
        String awaitLine(String word) throws IOException, InterruptedException {
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(DRIVER_TIMEOUT_SECONDS);
            while (true) {
                String line = lines.poll(Math.max(1, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                if (line == null) {
                    throw new IOException("driver process " + process.pid() + " printed no " + word + " within "
                            + DRIVER_TIMEOUT_SECONDS + " s");
                }
                if (line.startsWith(word)) {
                    return line;
                }
                if (line.startsWith("FAILED")) {
                    throw new IOException("driver process " + process.pid() + ": " + line.substring(6).trim());
                }
                if (line.equals("EXITED")) {
                    throw new IOException("driver process " + process.pid() + " exited before it printed " + word);
                }
            }
        }

        /** A line already printed that starts with {@code word}, or null. */
        String pollLine(String word) {
            for (String line : lines) {
                if (line.startsWith(word)) {
                    return line;
                }
            }
            return null;
        }

        void destroy() throws InterruptedException {
            if (!process.waitFor(5, TimeUnit.SECONDS)) {
                process.destroyForcibly();
                process.waitFor(5, TimeUnit.SECONDS);
            }
        }
    }
}
