package io.sibyl.bench;

import io.netty.buffer.Unpooled;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.sibyl.client.oracle.OracleClient;
import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import io.sibyl.oracle.journal.JournalBootstrap;
import io.sibyl.oracle.journal.JournalClients;
import io.sibyl.oracle.journal.JournalRecovery;
import io.sibyl.oracle.journal.JournalReplay;
import io.sibyl.oracle.journal.JournalSettings;
import io.sibyl.oracle.journal.LedgerRegistry;
import io.sibyl.oracle.journal.RecoveredState;
import io.sibyl.protocol.DecisionBlockReader;
import io.sibyl.protocol.DecisionVisitor;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.client.LedgerEntry;
import org.apache.bookkeeper.client.LedgerHandle;
import org.apache.zookeeper.ZooKeeper;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ScopeType;
import picocli.CommandLine.Spec;

import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.util.Enumeration;
import java.util.List;
import java.util.Locale;
import java.util.Properties;
import java.util.concurrent.Callable;

/**
 * The recovery benchmark's three steps, each meant to run in a process of its own (bin/so-recovery-bench):
 * <ul>
 *   <li>{@code write --oracle HOST:PORT --transactions N [--window W] [--write-set K]}: drives a running oracle (on the
 *       BookKeeper journal) with so-bench's closed loop until N transactions have an outcome, so the journal holds
 *       what a real oracle writes under load;</li>
 *   <li>{@code recover --zk HOST:PORT --znode PATH}: times {@link JournalRecovery#recover} (fencing the registry and
 *       the ledgers, replay to a {@link RecoveredState}), then counts the journal's transactions in an untimed
 *       second read;</li>
 *   <li>{@code serve --zk HOST:PORT --znode PATH}: times recovery to a serving oracle (recover, open the journal,
 *       start the server with its first block durable) and to the first commit a client gets from it.</li>
 * </ul>
 * and {@code breakdown --zk HOST:PORT --znode PATH [--read sync|pipelined]}, which does recovery's steps one at a
 * time with the same public pieces (fence the registry, open each ledger with recovery, read, replay with
 * {@link JournalReplay}, build the state, build an oracle state) and times each, then replays again in the now warm
 * JVM. {@code --read pipelined} keeps several small reads in flight and replays while they arrive (a proposal measured
 * against recovery's synchronous read).
 * Every step ends with {@link System#exit}: bookie and ZooKeeper clients leave non-daemon threads.
 */
@Command(name = "so-recovery-bench", subcommands = {RecoveryBench.Write.class, RecoveryBench.Recover.class,
        RecoveryBench.Serve.class, RecoveryBench.Breakdown.class}, usageHelpWidth = 110,
        description = "The recovery benchmark's steps, each in a JVM of its own (bin/so-recovery-bench runs them).")
public final class RecoveryBench implements Callable<Integer> {
    /** Entries per read and reads in flight of {@code breakdown --read pipelined}. */
    private static final int PIPELINE_BATCH = 64;
    private static final int PIPELINE_DEPTH = 8;

    @Spec
    private CommandSpec spec; // for the error when no step is given

    @Option(names = {"-h", "--help"}, usageHelp = true, scope = ScopeType.INHERIT, description = "this text")
    boolean help;

    private RecoveryBench() {
    }

    public static void main(String[] args) {
        int code = steps().execute(args);
        System.out.flush();
        System.exit(code);
    }

    /**
     * The steps as picocli runs them: a step's exit status, 2 with the error and the step's usage for bad arguments
     * (on stderr), 1 with the stack trace if it fails.
     */
    static CommandLine steps() {
        return BenchCommandLine.commandLine(new RecoveryBench())
                .setCaseInsensitiveEnumValuesAllowed(true)
                .setParameterExceptionHandler((e, a) -> {
                    System.err.println("so-recovery-bench: " + e.getMessage());
                    System.err.println(e.getCommandLine().getUsageMessage());
                    return 2;
                })
                .setExecutionExceptionHandler((e, step, parsed) -> {
                    System.err.println("so-recovery-bench: failed: " + e);
                    e.printStackTrace();
                    return 1;
                });
    }

    @Override
    public Integer call() {
        throw new ParameterException(spec.commandLine(), "no step given: write, recover, serve or breakdown");
    }

    /** The journal a step reads: the ZooKeeper ensemble and the ledger registry's znode. */
    static final class JournalFlags {
        @Option(names = "--zk", required = true, paramLabel = "HOST:PORT", description = "the journal's ZooKeeper")
        String zk;

        @Option(names = "--znode", required = true, paramLabel = "PATH",
                description = "the journal's ledger registry (journal.ledgers.znode)")
        String znode;

        JournalSettings settings() {
            Properties p = new Properties();
            p.setProperty("journal.zk.connect", zk);
            p.setProperty("journal.ledgers.znode", znode);
            return JournalSettings.fromProperties(p);
        }
    }

    /** The {@code write} step. */
    @Command(name = "write", description = "drives a running oracle (on the BookKeeper journal) with so-bench's closed"
            + " loop until N transactions have an outcome")
    static final class Write implements Callable<Integer> {
        @Option(names = "--oracle", required = true, paramLabel = "HOST:PORT", description = "the oracle")
        String oracle;

        @Option(names = "--transactions", required = true, paramLabel = "N",
                description = "transactions to decide (1e6 allowed)")
        double transactions;

        @Option(names = "--window", paramLabel = "W", description = "outstanding transactions (${DEFAULT-VALUE})")
        String window = "1024";

        @Option(names = "--write-set", paramLabel = "K", description = "rows written per transaction (${DEFAULT-VALUE})")
        String writeSet = "8";

        @Override
        public Integer call() throws Exception {
            return write(this);
        }
    }

    /** The {@code recover} step. */
    @Command(name = "recover", description = "times the journal's recovery, then counts its transactions")
    static final class Recover implements Callable<Integer> {
        @Mixin
        JournalFlags journal;

        @Override
        public Integer call() throws Exception {
            return recover(journal.settings());
        }
    }

    /** The {@code serve} step. */
    @Command(name = "serve", description = "times recovery to a serving oracle and to its first commit")
    static final class Serve implements Callable<Integer> {
        @Mixin
        JournalFlags journal;

        @Override
        public Integer call() throws Exception {
            return serve(journal.settings());
        }
    }

    /** How {@code breakdown} reads the ledgers. */
    enum Read { SYNC, PIPELINED }

    /** The {@code breakdown} step. */
    @Command(name = "breakdown", description = "does recovery's steps one at a time, timing each")
    static final class Breakdown implements Callable<Integer> {
        @Mixin
        JournalFlags journal;

        @Option(names = "--read", paramLabel = "sync|pipelined",
                description = "one read at a time, or several in flight replayed as they arrive (sync)")
        Read read = Read.SYNC;

        @Override
        public Integer call() throws Exception {
            return breakdown(journal.settings(), read == Read.PIPELINED);
        }
    }

    private static int write(Write flags) throws Exception {
        long target = (long) flags.transactions;
        BenchOptions o = BenchOptions.parse("--oracle", flags.oracle, "--window", flags.window, "--write-set",
                flags.writeSet);
        DefaultThreadFactory threads = new DefaultThreadFactory("recovery-bench-io", true);
        EventLoopGroup group = Epoll.isAvailable() ? new EpollEventLoopGroup(1, threads)
                : new NioEventLoopGroup(1, threads);
        OracleClient client = OracleClient.connect(o.oracleHost, o.oraclePort, group);
        LoadDriver driver = new LoadDriver(o, new OracleClient[] {client}, new EventLoopGroup[] {group});
        long t0 = System.nanoTime();
        driver.start();
        Metrics.Counts c;
        long nextReport = t0 + 5_000_000_000L;
        while (true) {
            c = driver.metrics().snapshot();
            long done = c.committed() + c.aborted();
            if (done >= target || driver.lostConnections() > 0) {
                break;
            }
            if (System.nanoTime() > nextReport) {
                System.out.printf(Locale.ROOT, "  %d of %d transactions%n", done, target);
                nextReport += 5_000_000_000L;
            }
            Thread.sleep(2);
        }
        driver.stop();
        Thread.sleep(200); // let the replies in flight arrive, so the counts below include them
        c = driver.metrics().snapshot();
        double secs = (System.nanoTime() - t0) / 1e9;
        System.out.printf(Locale.ROOT, "WRITTEN transactions=%d committed=%d aborted=%d secs=%.1f txn_per_s=%.0f"
                        + " window=%d write_set=%d errors=%d%n", c.committed() + c.aborted(), c.committed(),
                c.aborted(), secs, (c.committed() + c.aborted()) / secs, o.window, o.writeSet, c.errors());
        return driver.lostConnections() > 0 ? 1 : 0;
    }

    /** Milliseconds from JVM start (as the OS saw it) to now. */
    private static long sinceJvmStart() {
        return System.currentTimeMillis() - ManagementFactory.getRuntimeMXBean().getStartTime();
    }

    private static int recover(JournalSettings s) throws Exception {
        long jvmToMain = sinceJvmStart();
        long t0 = System.nanoTime();
        ZooKeeper zk = JournalClients.connectZooKeeper(s);
        BookKeeper bk = JournalClients.newBookKeeper(s);
        long t1 = System.nanoTime();
        RecoveredState r = JournalRecovery.recover(bk, new LedgerRegistry(zk, s.ledgersZnode()), s,
                JournalClients.ownerName());
        long t2 = System.nanoTime();
        Count count = count(bk, r.registry().ledgers(), s);
        RecoveredState.Stats st = r.stats();
        double connectMs = (t1 - t0) / 1e6;
        double recoverMs = (t2 - t1) / 1e6;
        long txns = count.commits + count.aborts;
        System.out.printf(Locale.ROOT, "recovered: epoch %d, last timestamp %d, T_max %d, %d commits above T_max,"
                        + " %d aborted, %d aborted ranges%n", r.epoch(), r.lastTimestamp(), r.tMax(), r.commitCount(),
                r.aborted().length, r.abortedRanges().size());
        System.out.printf(Locale.ROOT, "RECOVER ledgers=%d entries=%d blocks=%d records=%d bytes=%d transactions=%d"
                        + " commits=%d aborts=%d jvm_to_main_ms=%d connect_ms=%.0f recover_ms=%.0f"
                        + " ms_per_million_txn=%.0f bytes_per_txn=%.1f checkpoints=%d%n", st.ledgers(), st.entries(), st.blocks(),
                st.records(), st.bytes(), txns, count.commits, count.aborts, jvmToMain, connectMs, recoverMs,
                txns == 0 ? Double.NaN : recoverMs * 1e6 / txns, txns == 0 ? Double.NaN : (double) st.bytes() / txns,
                count.checkpoints);
        return 0;
    }

    private static int serve(JournalSettings s) throws Exception {
        long jvmToMain = sinceJvmStart();
        Properties p = new Properties();
        p.setProperty("host", "127.0.0.1");
        p.setProperty("port", "0");
        p.setProperty("journal", "bookkeeper");
        p.setProperty("journal.zk.connect", s.zkConnect());
        p.setProperty("journal.ledgers.znode", s.ledgersZnode());
        OracleConfig config = OracleConfig.fromProperties(p);
        long t0 = System.nanoTime();
        JournalBootstrap.Started started = JournalBootstrap.recoverAndOpen(config.journalSettings(),
                JournalClients.ownerName(), (reason, cause) -> {
                    System.err.println("so-recovery-bench: journal failed: " + reason);
                    System.exit(1);
                });
        long t1 = System.nanoTime();
        RecoveredState r = started.recovered();
        OracleServer server = OracleServer.start(config, started.journal(), r.newOracleState(config));
        long t2 = System.nanoTime();
        OracleClient client = OracleClient.connect("127.0.0.1", server.port());
        long start = client.begin().get();
        long commit = client.commit(start, new long[] {1, 2, 3, 4, 5, 6, 7, 8}).get();
        long t3 = System.nanoTime();
        RecoveredState.Stats st = r.stats();
        System.out.printf(Locale.ROOT, "first transaction on the recovered oracle: start %d, commit %d (last timestamp"
                + " of the journal %d)%n", start, commit, r.lastTimestamp());
        System.out.printf(Locale.ROOT, "SERVE entries=%d records=%d bytes=%d commits_above_tmax=%d"
                        + " jvm_to_main_ms=%d recover_and_open_ms=%.0f recovery_stats_ms=%d start_server_ms=%.0f"
                        + " first_commit_ms=%.0f total_ms=%.0f jvm_start_to_first_commit_ms=%.0f%n", st.entries(),
                st.records(), st.bytes(), r.commitCount(), jvmToMain, (t1 - t0) / 1e6, st.millis(),
                (t2 - t1) / 1e6, (t3 - t2) / 1e6, (t3 - t0) / 1e6, jvmToMain + (t3 - t0) / 1e6);
        if (start <= r.lastTimestamp()) {
            System.err.println("so-recovery-bench: the recovered oracle handed out a timestamp at or below the"
                    + " journal's last one");
            return 1;
        }
        // Exit without closing: the next step finds the journal as a crash leaves it (last ledger not closed).
        return 0;
    }

    private static int breakdown(JournalSettings s, boolean pipelined) throws Exception {
        long jvmToMain = sinceJvmStart();
        long t0 = System.nanoTime();
        ZooKeeper zk = JournalClients.connectZooKeeper(s);
        BookKeeper bk = JournalClients.newBookKeeper(s);
        long t1 = System.nanoTime();
        LedgerRegistry.Snapshot fenced = new LedgerRegistry(zk, s.ledgersZnode()).fence(JournalClients.ownerName());
        long t2 = System.nanoTime();
        byte[] password = s.password().getBytes(StandardCharsets.UTF_8);
        List<byte[]> entries = new java.util.ArrayList<>();
        JournalReplay replay = new JournalReplay();
        long openNanos = 0;
        long readNanos = 0;
        long replayNanos = 0;
        long bytes = 0;
        for (long id : fenced.ledgers()) {
            long a = System.nanoTime();
            LedgerHandle lh = bk.openLedger(id, BookKeeper.DigestType.CRC32C, password);
            long b = System.nanoTime();
            openNanos += b - a;
            long last = lh.getLastAddConfirmed();
            if (pipelined) {
                // Several small reads in flight; each batch is replayed as soon as it and those before it are in.
                java.util.ArrayDeque<java.util.concurrent.CompletableFuture<org.apache.bookkeeper.client.api.LedgerEntries>>
                        inFlight = new java.util.ArrayDeque<>();
                long next = 0;
                while (next <= last || !inFlight.isEmpty()) {
                    while (next <= last && inFlight.size() < PIPELINE_DEPTH) {
                        long to = Math.min(last, next + PIPELINE_BATCH - 1);
                        inFlight.add(lh.readAsync(next, to));
                        next = to + 1;
                    }
                    try (org.apache.bookkeeper.client.api.LedgerEntries batch = inFlight.poll().get()) {
                        for (org.apache.bookkeeper.client.api.LedgerEntry e : batch) {
                            byte[] data = e.getEntryBytes();
                            bytes += data.length;
                            entries.add(data);
                            replay.entry(data);
                        }
                    }
                }
                readNanos += System.nanoTime() - b;
            } else {
                for (long first = 0; first <= last; first += 1024) {
                    Enumeration<LedgerEntry> e = lh.readEntries(first, Math.min(last, first + 1023));
                    long c = System.nanoTime();
                    List<byte[]> batch = new java.util.ArrayList<>();
                    while (e.hasMoreElements()) {
                        byte[] data = e.nextElement().getEntry();
                        bytes += data.length;
                        batch.add(data);
                    }
                    for (byte[] data : batch) {
                        replay.entry(data);
                    }
                    entries.addAll(batch);
                    long d = System.nanoTime();
                    readNanos += c - b;
                    replayNanos += d - c;
                    b = d;
                }
            }
            lh.close();
        }
        long t3 = System.nanoTime();
        RecoveredState.Stats stats = new RecoveredState.Stats(fenced.ledgers().size(), entries.size(), 0,
                replay.records(), bytes, 0);
        RecoveredState r = replay.result(fenced, stats);
        long t4 = System.nanoTime();
        Object inDoubt = r.inDoubtRange();
        long t5 = System.nanoTime();
        Properties p = new Properties();
        p.setProperty("port", "0");
        io.sibyl.oracle.OracleState state = r.newOracleState(OracleConfig.fromProperties(p));
        long t6 = System.nanoTime();
        System.out.printf(Locale.ROOT, "BREAKDOWN read=%s entries=%d bytes=%d records=%d"
                        + " commits_above_tmax=%d jvm_to_main_ms=%d connect_ms=%.0f fence_registry_ms=%.0f"
                        + " open_ledgers_ms=%.0f read_ms=%.0f replay_ms=%.0f result_ms=%.0f fence_to_state_ms=%.0f"
                        + " in_doubt_range_ms=%.0f new_oracle_state_ms=%.0f%n", pipelined ? "pipelined" : "sync",
                entries.size(), bytes, stats.records(), r.commitCount(),
                jvmToMain, (t1 - t0) / 1e6, (t2 - t1) / 1e6, openNanos / 1e6,
                pipelined ? (t3 - t2 - openNanos) / 1e6 : readNanos / 1e6,
                pipelined ? Double.NaN : replayNanos / 1e6, (t4 - t3) / 1e6, (t4 - t1) / 1e6, (t5 - t4) / 1e6,
                (t6 - t5) / 1e6);
        System.out.flush();
        // Now warm: the replay again from memory, best of three.
        long warm = Long.MAX_VALUE;
        for (int i = 0; i < 3; i++) {
            long x = System.nanoTime();
            JournalReplay again = new JournalReplay();
            for (byte[] e : entries) {
                again.entry(e);
            }
            RecoveredState a = again.result(fenced, stats);
            warm = Math.min(warm, System.nanoTime() - x);
            if (a.commitCount() != r.commitCount()) {
                throw new IllegalStateException("a second replay of the same entries found " + a.commitCount()
                        + " commits above T_max instead of " + r.commitCount());
            }
        }
        System.out.printf(Locale.ROOT, "WARM replay_and_result_ms=%.0f%n", warm / 1e6);
        return inDoubt == null && state == null ? 1 : 0; // keeps both computations observable
    }

    /** Commit and abort records in the journal (a second, untimed read of the ledgers recovery closed). */
    private static Count count(BookKeeper bk, List<Long> ledgers, JournalSettings s) throws Exception {
        Count c = new Count();
        byte[] password = s.password().getBytes(StandardCharsets.UTF_8);
        for (long id : ledgers) {
            LedgerHandle lh = bk.openLedgerNoRecovery(id, BookKeeper.DigestType.CRC32C, password);
            long last = lh.getLastAddConfirmed();
            for (long first = 0; first <= last; first += 4096) {
                Enumeration<LedgerEntry> e = lh.readEntries(first, Math.min(last, first + 4095));
                while (e.hasMoreElements()) {
                    io.netty.buffer.ByteBuf data = Unpooled.wrappedBuffer(e.nextElement().getEntry());
                    if (io.sibyl.oracle.journal.Checkpoint.isCheckpoint(data)) {
                        c.checkpoints++;
                    } else {
                        DecisionBlockReader.readAll(data, c);
                    }
                }
            }
            lh.close();
        }
        return c;
    }

    /** Counts the transactions with an outcome in the journal. */
    private static final class Count implements DecisionVisitor {
        long checkpoints;
        long commits;
        long aborts;

        @Override
        public void onCommit(long startTs, long commitTs) {
            commits++;
        }

        @Override
        public void onAbort(long startTs) {
            aborts++;
        }

        @Override
        public void onForget(long startTs) {
        }

        @Override
        public void onTmax(long tMax) {
        }
    }

}
