package io.sibyl.bench;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.sibyl.client.oracle.OracleClient;
import io.sibyl.client.oracle.OracleCredentials;
import io.sibyl.client.oracle.OracleException;
import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import io.sibyl.protocol.SelfSignedTls;

import java.nio.file.Path;
import java.util.Locale;
import java.util.Properties;

/**
 * so-bench: closed-loop load on the status oracle. Parses the flags ({@link BenchOptions}), starts an in-process
 * oracle if asked, opens the connections, runs the {@link LoadDriver} through warmup and measurement, prints the
 * {@link Report} and exits (always through {@link System#exit}, so no thread can keep the JVM alive).
 */
public final class SoBench {
    private SoBench() {
    }

    public static void main(String[] args) {
        BenchOptions options;
        try {
            options = BenchOptions.parse(args);
        } catch (UsageException e) {
            System.err.println("so-bench: " + e.getMessage());
            System.err.println(BenchOptions.usage());
            System.exit(2);
            return;
        }
        if (options.check) { // "--check FLAGS...": bin/so-bench checks the flags before it starts an oracle
            System.exit(0);
        }
        if (options.help) {
            System.out.println(BenchOptions.usage());
            System.exit(0);
        }
        int code;
        try {
            code = run(options);
        } catch (UsageException e) {
            System.err.println("so-bench: " + e.getMessage());
            System.err.println(BenchOptions.usage());
            code = 2;
        } catch (OracleException e) {
            System.err.println("so-bench: " + e.getMessage());
            code = 1;
        } catch (Throwable t) {
            System.err.println("so-bench: failed: " + t);
            t.printStackTrace();
            code = 1;
        }
        System.out.flush();
        System.exit(code);
    }

    private static int run(BenchOptions o) throws Exception {
        String host = o.oracleHost;
        int port = o.oraclePort;
        String oracleName;
        SelfSignedTls tls = o.tlsDir == null ? null : SelfSignedTls.existing(Path.of(o.tlsDir));
        OracleCredentials credentials = tls == null ? OracleCredentials.newClient()
                : OracleCredentials.newClient().withTls(tls.client("client.p12"));
        if (o.inProcess()) {
            OracleConfig config = inProcessConfig(o);
            if (tls != null) {
                config = config.withTls(tls.oracle());
            }
            OracleServer server = OracleServer.startInMemory(config); // stopped by System.exit
            System.gc(); // promote the oracle's preallocated tables now, not in a pause during the run
            host = "127.0.0.1";
            port = server.port();
            oracleName = "in-process on port " + port + " (conflict.table.rows=" + config.conflictTableRows()
                    + ", io.threads=" + config.ioThreads() + ")";
        } else {
            oracleName = host + ":" + port + (o.serverPid > 0 ? " (pid " + o.serverPid + ")" : "");
        }

        EventLoopGroup[] groups = new EventLoopGroup[o.ioThreads];
        DefaultThreadFactory threads = new DefaultThreadFactory("so-bench-io", true);
        for (int i = 0; i < groups.length; i++) {
            groups[i] = Epoll.isAvailable() ? new EpollEventLoopGroup(1, threads) : new NioEventLoopGroup(1, threads);
        }
        OracleClient[] clients = new OracleClient[o.connections];
        EventLoopGroup[] loopOf = new EventLoopGroup[o.connections];
        for (int i = 0; i < clients.length; i++) {
            loopOf[i] = groups[i % groups.length];
            clients[i] = OracleClient.connect(host, port, loopOf[i], credentials);
        }

        long t = System.nanoTime();
        LoadDriver driver = new LoadDriver(o, clients, loopOf);
        if (o.keyDistribution == BenchOptions.KeyDistribution.ZIPFIAN) {
            System.out.printf(Locale.ROOT, "so-bench: zipfian constants for %d keys computed in %.1f s%n", o.keys,
                    (System.nanoTime() - t) / 1e9);
        }
        System.out.println("so-bench: " + o.connections + " connection(s) to " + oracleName + "; "
                + o.describeWorkload());
        System.out.printf(Locale.ROOT, "so-bench: warming up for %.0f s, then measuring for %.0f s%n",
                o.warmupSeconds, o.durationSeconds);
        System.out.flush();

        driver.start();
        Metrics metrics = driver.metrics();
        sleepUntil(System.nanoTime() + (long) (o.warmupSeconds * 1e9));

        driver.pacer().start(System.nanoTime());
        metrics.startInterval();
        Metrics.Counts c0 = metrics.snapshot();
        long delta0 = deltaBytes(clients);
        long starts0 = startReplies(clients);
        CpuMeter.Sample cpu0 = CpuMeter.Sample.take(o.serverPid, o.inProcess());
        long bookiesCpu0 = o.bookiesPid > 0 ? CpuMeter.process(o.bookiesPid) : -1;
        long t0 = System.nanoTime();
        long end = t0 + (long) (o.durationSeconds * 1e9);

        long every = (long) (o.progressSeconds * 1e9);
        Metrics.Latencies latencies = Metrics.Latencies.empty();
        long lastT = t0;
        Metrics.Counts last = c0;
        while (lastT + every < end) {
            sleepUntil(lastT + every);
            long now = System.nanoTime();
            Metrics.Counts c = metrics.snapshot();
            Metrics.Latencies interval = metrics.latencies();
            latencies.add(interval);
            Metrics.Counts d = c.minus(last);
            double secs = (now - lastT) / 1e9;
            long writers = d.committed() + d.aborted();
            System.out.printf(Locale.ROOT, "  t=%5.1fs %9.0f txn/s  aborts %.2f%%  errors %d  txn p50 %.3f p99 %.3f max %.3f ms%n",
                    (now - t0) / 1e9, (d.committed() + d.readOnly()) / secs,
                    writers == 0 ? 0.0 : 100.0 * d.aborted() / writers, d.errors(),
                    interval.txn().getValueAtPercentile(50) / 1e6, interval.txn().getValueAtPercentile(99) / 1e6,
                    interval.txn().getMaxValue() / 1e6);
            System.out.flush();
            last = c;
            lastT = now;
        }
        sleepUntil(end);

        long t1 = System.nanoTime();
        latencies.add(metrics.latencies());
        Metrics.Counts c1 = metrics.snapshot();
        long delta1 = deltaBytes(clients);
        long starts1 = startReplies(clients);
        CpuMeter.Sample cpu1 = CpuMeter.Sample.take(o.serverPid, o.inProcess());
        long bookiesCpu1 = o.bookiesPid > 0 ? CpuMeter.process(o.bookiesPid) : -1;
        driver.stop();

        long elapsed = t1 - t0;
        Report report = new Report(o, oracleName, elapsed / 1e9, c1.minus(c0), latencies, delta1 - delta0,
                starts1 - starts0, CpuMeter.Sample.percent(cpu0.bench(), cpu1.bench(), elapsed),
                CpuMeter.Sample.percent(cpu0.oracle(), cpu1.oracle(), elapsed),
                CpuMeter.Sample.percent(bookiesCpu0, bookiesCpu1, elapsed), driver.lostConnections(),
                metrics.firstError(), clients[0].replica().commitCount());
        report.print(System.out);

        Metrics.Counts measured = c1.minus(c0);
        boolean nothingDone = measured.committed() + measured.readOnly() + measured.aborted() == 0;
        return nothingDone || driver.lostConnections() > 0 ? 1 : 0;
    }

    private static OracleConfig inProcessConfig(BenchOptions o) throws UsageException {
        Properties p = new Properties();
        p.setProperty("host", "127.0.0.1");
        p.setProperty("port", "0");
        for (String s : o.oracleSettings) {
            int eq = s.indexOf('=');
            p.setProperty(s.substring(0, eq).trim(), s.substring(eq + 1).trim());
        }
        try {
            return OracleConfig.fromProperties(p);
        } catch (IllegalArgumentException e) {
            throw new UsageException("--oracle-setting: " + e.getMessage());
        }
    }

    private static long deltaBytes(OracleClient[] clients) {
        long sum = 0;
        for (OracleClient c : clients) {
            sum += c.deltaBytesReceived();
        }
        return sum;
    }

    private static long startReplies(OracleClient[] clients) {
        long sum = 0;
        for (OracleClient c : clients) {
            sum += c.startRepliesReceived();
        }
        return sum;
    }

    private static void sleepUntil(long deadline) throws InterruptedException {
        long left;
        while ((left = deadline - System.nanoTime()) > 0) {
            Thread.sleep(Math.max(1, Math.min(left / 1_000_000, 1000)));
        }
    }
}
