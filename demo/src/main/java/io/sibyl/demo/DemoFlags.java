package io.sibyl.demo;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** Command-line flags of bin/sibyl-demo: the workload's (user-facing) and the wiring the script passes in. */
@Command(name = "bin/sibyl-demo", sortOptions = false, abbreviateSynopsis = true, usageHelpWidth = 110,
        description = {"Starts ZooKeeper + 3 bookies, two so-server oracles (HA leader + hot standby on the BookKeeper"
                + " journal) and the HBase minicluster (no HDFS), loads an accounts table, runs transfers through"
                + " TransactionManager (oracle found through ZooKeeper) with auditors scanning every account, kills"
                + " the leading oracle with SIGKILL halfway, and checks that every balance is its opening value plus"
                + " the committed transfers. Exit status 0 only if that holds.",
                "Flags take '--flag value' or '--flag=value'."},
        footer = {"Environment: SIBYL_DEMO_JAVA_OPTS (the demo JVM, default -Xms1g -Xmx1g -XX:+UseParallelGC),"
                + " SIBYL_DEMO_ORACLE_OPTS (each oracle, default -Xms256m -Xmx256m -XX:+UseParallelGC),"
                + " SIBYL_DEMO_BOOKIES_OPTS (ZooKeeper + bookies, default -Xms256m -Xmx512m -XX:+UseParallelGC),"
                + " SIBYL_DEMO_LOGS (directory for the processes' logs, default bench-out/sibyl-demo)."})
public final class DemoFlags {
    /** Exit status of {@link #main} after printing the usage, so the script can tell it from a bad flag (2). */
    public static final int HELP_PRINTED = 10;

    @Option(names = "--duration", paramLabel = "S", description = "seconds of transfer workload (${DEFAULT-VALUE})")
    public int durationSeconds = 30;

    @Option(names = "--threads", paramLabel = "N", description = "transfer threads (${DEFAULT-VALUE})")
    public int threads = 8;

    @Option(names = "--accounts", paramLabel = "N", description = "accounts in the table (${DEFAULT-VALUE})")
    public int accounts = 1000;

    @Option(names = "--auditors", paramLabel = "N",
            description = "threads scanning all accounts in read-only transactions (${DEFAULT-VALUE})")
    public int auditors = 2;

    @Option(names = "--opening", paramLabel = "V", description = "opening balance of each account (${DEFAULT-VALUE})")
    public long opening = 1000;

    @Option(names = "--max-amount", paramLabel = "V", description = "largest transfer (${DEFAULT-VALUE})")
    public int maxAmount = 100;

    @Option(names = "--kill-at", paramLabel = "S",
            description = "seconds into the workload at which the leader is killed (half the duration)")
    private Double killAtSeconds; // null: half the duration, which depends on --duration

    @Option(names = "--no-failover", description = "do not kill the leader")
    public boolean noFailover;

    @Option(names = "--seed", paramLabel = "N", description = "seed of the transfer choices (${DEFAULT-VALUE})")
    public long seed = 42;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "this text")
    public boolean help;

    // Wiring, set by bin/sibyl-demo rather than by hand: hidden from the usage.
    @Option(names = "--zk", hidden = true)
    public String zkConnect;

    @Option(names = "--leader-znode", hidden = true)
    public String leaderZnode = "/sibyl/oracle/leader";

    @Option(names = "--election-znode", hidden = true)
    public String electionZnode = "/sibyl/oracle/election";

    @Option(names = "--oracle-pids", hidden = true, split = ",", paramLabel = "PID,PID")
    public List<Long> oraclePids = new ArrayList<>();

    @Spec
    private CommandSpec spec; // the parser, for errors raised by the checks after parsing

    /** The usage text (also what 'bin/sibyl-demo --help' prints). */
    public static String usage() {
        return new CommandLine(new DemoFlags()).getUsageMessage();
    }

    /**
     * Parses {@code args}; {@link #help} set means only the usage was asked for. A bad flag throws a
     * {@link ParameterException} whose message names the flag.
     */
    public static DemoFlags parse(String... args) {
        DemoFlags f = new DemoFlags();
        new CommandLine(f).parseArgs(args);
        if (!f.help) {
            f.check();
        }
        return f;
    }

    /** The ranges picocli's types do not express. */
    private void check() {
        atLeast("--duration", durationSeconds, 1);
        atLeast("--threads", threads, 1);
        atLeast("--accounts", accounts, 2, " (a transfer needs two)");
        atLeast("--auditors", auditors, 0);
        atLeast("--opening", opening, 0);
        atLeast("--max-amount", maxAmount, 1);
        for (long pid : oraclePids) {
            atLeast("--oracle-pids", pid, 1);
        }
        if (killAtSeconds != null) {
            if (!(killAtSeconds >= 0) || killAtSeconds.isInfinite()) {
                throw usageError("--kill-at must be 0 or more seconds, got '" + killAtSeconds + "'");
            }
            if (killAtSeconds >= durationSeconds) {
                throw usageError("--kill-at must be below --duration (" + durationSeconds + "), got "
                        + killAtSeconds);
            }
        }
    }

    /** DemoMain runs only with the wiring bin/sibyl-demo passes; the flags check runs without it. */
    void requireWiring() {
        if (zkConnect == null) {
            throw usageError("--zk HOST:PORT is required (bin/sibyl-demo passes it)");
        }
    }

    private void atLeast(String flag, long value, long min) {
        atLeast(flag, value, min, "");
    }

    private void atLeast(String flag, long value, long min, String why) {
        if (value < min) {
            throw usageError(flag + " must be at least " + min + why + ", got " + value);
        }
    }

    private ParameterException usageError(String message) {
        return new ParameterException(spec.commandLine(), message);
    }

    /** Whether the leader is killed halfway (no {@code --no-failover}). */
    public boolean failover() {
        return !noFailover;
    }

    /** When the leader is killed, in seconds into the workload. */
    public double killAt() {
        return killAtSeconds != null ? killAtSeconds : durationSeconds / 2.0;
    }

    /** One line for the report. */
    public String describe() {
        return String.format(Locale.ROOT, "%d accounts x %d, %d transfer threads, %d auditors, %d s, %s",
                accounts, opening, threads, auditors, durationSeconds,
                failover() ? String.format(Locale.ROOT, "leader killed at %.1f s", killAt()) : "no failover");
    }

    /**
     * Checks the flags without running anything: bin/sibyl-demo calls this before it starts a single process.
     * Exit status 0 if they are fine, 2 with a message if not, {@link #HELP_PRINTED} after printing the usage.
     */
    public static void main(String[] args) {
        try {
            if (parse(args).help) {
                System.out.println(usage());
                System.exit(HELP_PRINTED);
            }
            System.exit(0);
        } catch (ParameterException e) {
            System.err.println("sibyl-demo: " + e.getMessage());
            System.err.println(usage());
            System.exit(2);
        }
    }
}
