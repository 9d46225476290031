package io.sibyl.demo;

import io.sibyl.client.TTable;
import io.sibyl.client.TransactionManager;
import io.sibyl.embedded.EmbeddedHBase;
import io.sibyl.protocol.LeaderRecord;
import org.HdrHistogram.Histogram;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import picocli.CommandLine.ParameterException;

import java.io.IOException;
import java.io.PrintStream;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * The Java half of bin/sibyl-demo: the HBase minicluster (no HDFS), an accounts table, a transfer workload with
 * auditors through {@link TransactionManager} that finds the oracles through ZooKeeper, the SIGKILL of the leading
 * oracle halfway, and the report. The script starts ZooKeeper, the bookies and the two oracles, and passes their
 * ZooKeeper address and pids.
 */
public final class DemoMain {
    static final TableName TABLE = TableName.valueOf("accounts");
    private static final PrintStream OUT = System.out;

    private final DemoFlags f;

    private DemoMain(DemoFlags f) {
        this.f = f;
    }

    /**
     * Runs the demo; exit status 0 only if the final balance check passed, no audit saw a wrong total, no transfer
     * failed with an error, and (with a failover) transfers committed again after the kill.
     */
    public static void main(String[] args) {
        // The minicluster's INFO chatter would drown the report (unless set on the command line).
        EmbeddedHBase.quietLogging(Map.of("io.sibyl", "warn"));
        int code;
        try {
            DemoFlags flags = DemoFlags.parse(args);
            if (flags.help) {
                OUT.println(DemoFlags.usage());
                System.exit(0);
            }
            flags.requireWiring();
            code = new DemoMain(flags).run();
        } catch (ParameterException e) {
            System.err.println("sibyl-demo: " + e.getMessage());
            code = 2;
        } catch (Throwable t) {
            System.err.println("sibyl-demo: failed: " + t);
            t.printStackTrace();
            code = 1;
        }
        OUT.flush();
        System.err.flush();
        System.exit(code); // the minicluster's threads are not daemons
    }

    private int run() throws Exception {
        OUT.println("sibyl-demo: " + f.describe());
        OUT.println("machine: " + Runtime.getRuntime().availableProcessors() + " cores, load average "
                + loadAverage() + " at start");
        long t0 = System.nanoTime();
        // Not closed: it goes with the JVM at System.exit.
        EmbeddedHBase hbase = EmbeddedHBase.start(c -> {
            c.setInt("hbase.regionserver.handler.count", 16);
            c.setInt("hbase.master.handler.count", 8);
            c.setInt("hbase.client.retries.number", 10);
        });
        OUT.printf(Locale.ROOT, "HBase minicluster (no HDFS) up in %.1f s%n", (System.nanoTime() - t0) / 1e9);

        Configuration cc = hbase.configuration();
        cc.set(TransactionManager.ORACLE_ZK_CONNECT, f.zkConnect);
        cc.set(TransactionManager.ORACLE_LEADER_ZNODE, f.leaderZnode);
        // A failover aborts the transactions in flight; run() must outlast it rather than give up.
        cc.setInt(TransactionManager.RETRY_ATTEMPTS, 1000);
        cc.setInt(TransactionManager.RETRY_BACKOFF_MS, 1);
        cc.setInt(TransactionManager.RETRY_BACKOFF_MAX_MS, 50);
        cc.setInt(TransactionManager.FAILOVER_TIMEOUT_MS, 60_000);

        try (ZooKeeper zk = connect(f.zkConnect);
             Connection connection = ConnectionFactory.createConnection(cc)) {
            try (Admin admin = connection.getAdmin()) {
                admin.createTable(TableDescriptorBuilder.newBuilder(TABLE)
                        .setColumnFamily(TTable.familyDescriptor(DemoWorkload.CF)).build());
            }
            long t1 = System.nanoTime();
            try (TransactionManager tm = TransactionManager.create(connection);
                 TTable accounts = new TTable(connection, TABLE)) {
                LeaderRecord first = leader(zk).orElseThrow(() -> new IllegalStateException("no leader in "
                        + f.leaderZnode));
                OUT.printf(Locale.ROOT, "client connected to the leading oracle through ZooKeeper %s%s in %.1f s:"
                                + " epoch %d at %s (%s)%n", f.zkConnect, f.leaderZnode, (System.nanoTime() - t1) / 1e9,
                        first.epoch(), first.address(), first.owner());
                load(tm, accounts);
                return workload(zk, tm, accounts);
            }
        }
    }

    private void load(TransactionManager tm, TTable accounts) throws Exception {
        long t0 = System.nanoTime();
        int batch = 500;
        for (int lo = 0; lo < f.accounts; lo += batch) {
            int from = lo;
            int to = Math.min(f.accounts, lo + batch);
            tm.run(tx -> {
                List<Put> puts = new ArrayList<>();
                for (int i = from; i < to; i++) {
                    puts.add(new Put(DemoWorkload.key(i)).addColumn(DemoWorkload.CF, DemoWorkload.BALANCE,
                            Bytes.toBytes(f.opening)));
                }
                try {
                    accounts.put(tx, puts);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                return null;
            });
        }
        OUT.printf(Locale.ROOT, "loaded %d accounts of %d in %.1f s%n", f.accounts, f.opening,
                (System.nanoTime() - t0) / 1e9);
    }

    private int workload(ZooKeeper zk, TransactionManager tm, TTable accounts) throws Exception {
        Ledger ledger = new Ledger(f.accounts, f.opening);
        FailoverClock clock = new FailoverClock();
        long start = System.nanoTime();
        DemoWorkload w = new DemoWorkload(tm, accounts, f, ledger, clock, start);
        List<Thread> threads = new ArrayList<>();
        for (int i = 0; i < f.threads; i++) {
            int n = i;
            threads.add(new Thread(() -> w.transfers(n), "transfer-" + i));
        }
        for (int i = 0; i < f.auditors; i++) {
            threads.add(new Thread(w::audits, "audit-" + i));
        }
        OUT.printf(Locale.ROOT, "running %d transfer threads and %d auditors for %d s%n", f.threads, f.auditors,
                f.durationSeconds);
        threads.forEach(Thread::start);
        Thread progress = new Thread(() -> progress(w, start), "progress");
        progress.setDaemon(true);
        progress.start();

        String killed = null;
        if (f.failover()) {
            sleepUntil(start + (long) (f.killAt() * 1e9));
            killed = killLeader(zk, clock, start);
        }
        sleepUntil(start + f.durationSeconds * 1_000_000_000L);
        long stopAt = System.nanoTime();
        w.stop();
        progress.interrupt(); // its next line would land inside the report
        for (Thread t : threads) {
            t.join(120_000);
            if (t.isAlive()) {
                OUT.println("warning: " + t.getName() + " did not stop within 120 s");
            }
        }
        double elapsed = (stopAt - start) / 1e9;

        Ledger.Check check = ledger.check(DemoWorkload.readAll(tm, accounts, f.accounts));
        report(w, clock, killed, elapsed, check);
        boolean recovered = !clock.wasKilled() || clock.killToFirstNewCommitMs() >= 0;
        if (!recovered) {
            OUT.println("FAIL: no transfer begun after the leader was killed committed");
        }
        if (w.errors.get() > 0) {
            OUT.println("FAIL: " + w.errors.get() + " transfers failed with an error");
        }
        return check.pass() && w.auditViolations.get() == 0 && w.errors.get() == 0 && recovered ? 0 : 1;
    }

    private void progress(DemoWorkload w, long start) {
        long lastCommitted = 0;
        long lastAborted = 0;
        long interval = 5;
        for (long s = interval; ; s += interval) {
            sleepUntil(start + s * 1_000_000_000L);
            if (Thread.currentThread().isInterrupted()) {
                return;
            }
            long c = w.committed.get();
            long a = w.aborted.get();
            OUT.printf(Locale.ROOT, "  %3d s: %6d committed (%5.0f/s), %4d aborted (%4.0f/s), %4d audits%n", s, c,
                    (c - lastCommitted) / (double) interval, a, (a - lastAborted) / (double) interval,
                    w.audits.get());
            lastCommitted = c;
            lastAborted = a;
        }
    }

    /**
     * Kills the oracle named in the leader znode with SIGKILL, provided it is one of the processes the script
     * started and a standby has joined the election; then reports when the standby announces itself.
     */
    private String killLeader(ZooKeeper zk, FailoverClock clock, long start) throws Exception {
        long deadline = System.nanoTime() + 60_000_000_000L;
        while (candidates(zk) < 2) {
            if (System.nanoTime() > deadline) {
                OUT.println("no standby joined the election within 60 s: not killing the leader");
                return null;
            }
            Thread.sleep(200);
        }
        LeaderRecord old = leader(zk).orElse(null);
        if (old == null) {
            OUT.println("no leader in " + f.leaderZnode + ": nothing to kill");
            return null;
        }
        long pid = ownerPid(old.owner());
        if (pid < 0 || (!f.oraclePids.isEmpty() && !f.oraclePids.contains(pid))) {
            OUT.println("the leader's owner '" + old.owner() + "' is not a process this demo started"
                    + f.oraclePids + ": not killing it");
            return null;
        }
        Optional<ProcessHandle> p = ProcessHandle.of(pid);
        if (p.isEmpty()) {
            OUT.println("leader pid " + pid + " is not running: nothing to kill");
            return null;
        }
        long killAt = System.nanoTime();
        clock.killed(killAt);
        p.get().destroyForcibly(); // SIGKILL: no clean shutdown, the standby must notice on its own
        OUT.printf(Locale.ROOT, "  %5.1f s: SIGKILL to the leading oracle, pid %d (epoch %d at %s)%n",
                (killAt - start) / 1e9, pid, old.epoch(), old.address());
        long takeover = -1;
        LeaderRecord now = null;
        while (System.nanoTime() - killAt < 60_000_000_000L) {
            now = leader(zk).orElse(null);
            if (now != null && now.epoch() > old.epoch()) {
                takeover = System.nanoTime();
                break;
            }
            Thread.sleep(5);
        }
        if (now == null || takeover < 0) {
            OUT.println("no new leader announced itself within 60 s of the kill");
            return "pid " + pid + " killed; no new leader within 60 s";
        }
        String msg = String.format(Locale.ROOT, "new leader epoch %d at %s (pid %d) announced %.0f ms after the kill",
                now.epoch(), now.address(), ownerPid(now.owner()), (takeover - killAt) / 1e6);
        OUT.printf(Locale.ROOT, "  %5.1f s: %s%n", (takeover - start) / 1e9, msg);
        return "oracle pid " + pid + " (epoch " + old.epoch() + ") killed; " + msg;
    }

    /** The pid in a LeaderRecord owner ("host/pid/random"), or -1 if it has none. */
    static long ownerPid(String owner) {
        String[] parts = owner.split("/");
        if (parts.length < 3) {
            return -1;
        }
        try {
            return Long.parseLong(parts[parts.length - 2]);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    private Optional<LeaderRecord> leader(ZooKeeper zk) throws InterruptedException, KeeperException {
        try {
            return Optional.of(LeaderRecord.decode(zk.getData(f.leaderZnode, false, null)));
        } catch (KeeperException.NoNodeException e) {
            return Optional.empty();
        }
    }

    private int candidates(ZooKeeper zk) throws InterruptedException, KeeperException {
        try {
            return zk.getChildren(f.electionZnode, false).size();
        } catch (KeeperException.NoNodeException e) {
            return 0;
        }
    }

    private static ZooKeeper connect(String connect) throws IOException, InterruptedException {
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(connect, 10_000, e -> {
            if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                connected.countDown();
            }
        });
        if (!connected.await(30, TimeUnit.SECONDS)) {
            zk.close();
            throw new IOException("could not connect to ZooKeeper at " + connect + " within 30 s");
        }
        return zk;
    }

    private void report(DemoWorkload w, FailoverClock clock, String killed, double elapsed, Ledger.Check check) {
        OUT.println();
        OUT.println("=== sibyl-demo result ===");
        OUT.printf(Locale.ROOT, "transfers: %d committed (%.0f/s), %d aborted attempts (%.1f/s: conflicts and"
                        + " failover, all retried), %d given up, %d errors, over %.1f s%n", w.committed.get(),
                w.committed.get() / elapsed, w.aborted.get(), w.aborted.get() / elapsed, w.gaveUp.get(),
                w.errors.get(), elapsed);
        OUT.println("transfer latency (begin to commit, retries included): " + latency(w.transferLatencyUs));
        OUT.printf(Locale.ROOT, "audits: %d scans of all %d accounts in read-only transactions, %d saw a wrong total,"
                        + " %d failed; scan latency %s%n", w.audits.get(), f.accounts, w.auditViolations.get(),
                w.auditErrors.get(), latency(w.auditLatencyUs));
        if (f.failover()) {
            OUT.println("failover: " + (killed == null ? "the leader was not killed" : killed));
            if (clock.wasKilled()) {
                OUT.printf(Locale.ROOT, "commit gap: kill -> first commit %s; kill -> first commit of a transaction"
                                + " begun after the kill %s; longest stretch without commits around it %s%n",
                        ms(clock.killToFirstCommitMs()), ms(clock.killToFirstNewCommitMs()), ms(clock.commitGapMs()));
            }
        }
        OUT.println("commits per second: " + perSecond(w.commitsPerSecond, elapsed));
        if (!w.problems.isEmpty()) {
            OUT.println("first problems seen:");
            w.problems.forEach(p -> OUT.println("  " + p));
        }
        OUT.println("machine load average at the end: " + loadAverage());
        OUT.println("final check: " + check.describe());
        if (w.auditViolations.get() > 0) {
            OUT.println("FAIL: " + w.auditViolations.get() + " audits saw a wrong total");
        }
    }

    private static String latency(Histogram h) {
        if (h.getTotalCount() == 0) {
            return "(none)";
        }
        return String.format(Locale.ROOT, "p50 %.1f ms, p99 %.1f ms, max %.1f ms", h.getValueAtPercentile(50) / 1e3,
                h.getValueAtPercentile(99) / 1e3, h.getMaxValue() / 1e3);
    }

    private static String ms(double v) {
        return v < 0 ? "(none)" : String.format(Locale.ROOT, "%.0f ms", v);
    }

    private static String perSecond(java.util.concurrent.atomic.AtomicLongArray a, double elapsed) {
        StringBuilder sb = new StringBuilder();
        int n = Math.min(a.length(), (int) Math.ceil(elapsed));
        for (int i = 0; i < n; i++) {
            sb.append(i == 0 ? "" : " ").append(a.get(i));
        }
        return sb.toString();
    }

    private static String loadAverage() {
        try {
            String[] l = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
            return l[0] + " " + l[1] + " " + l[2];
        } catch (IOException | RuntimeException e) {
            return "unknown";
        }
    }

    private static void sleepUntil(long nanos) {
        long left;
        while ((left = nanos - System.nanoTime()) > 0) {
            try {
                TimeUnit.NANOSECONDS.sleep(left);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return;
            }
        }
    }
}
