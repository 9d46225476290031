package io.sibyl.demo;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/** Command-line flags of bin/sibyl-demo: the workload's (user-facing) and the wiring the script passes in. */
public final class DemoFlags {
    /** Exit status of {@link #main} after printing the usage, so the script can tell it from a bad flag (2). */
    public static final int HELP_PRINTED = 10;

    /** A flag the demo cannot run with; the message names it. */
    public static final class UsageException extends Exception {
        UsageException(String message) {
            super(message);
        }
    }

    public int durationSeconds = 30;
    public int threads = 8;
    public int accounts = 1000;
    public int auditors = 2;
    public long opening = 1000;
    public int maxAmount = 100;
    public boolean failover = true;
    /** Seconds into the workload at which the leader is killed; negative means half the duration. */
    public double killAtSeconds = -1;
    public long seed = 42;
    public boolean help;

    // Wiring, set by bin/sibyl-demo rather than by hand.
    public String zkConnect;
    public String leaderZnode = "/sibyl/oracle/leader";
    public String electionZnode = "/sibyl/oracle/election";
    public List<Long> oraclePids = new ArrayList<>();

    /** The usage text (also what 'bin/sibyl-demo --help' prints). */
    public static String usage() {
        return String.join("\n",
                "usage: bin/sibyl-demo [flags]   (flags take '--flag value' or '--flag=value')",
                "Starts ZooKeeper + 3 bookies, two so-server oracles (HA leader + hot standby on the BookKeeper",
                "journal) and the HBase minicluster (no HDFS), loads an accounts table, runs transfers through",
                "TransactionManager (oracle found through ZooKeeper) with auditors scanning every account, kills the",
                "leading oracle with SIGKILL halfway, and checks that every balance is its opening value plus the",
                "committed transfers. Exit status 0 only if that holds.",
                "  --duration S     seconds of transfer workload (30)",
                "  --threads N      transfer threads (8)",
                "  --accounts N     accounts in the table (1000)",
                "  --auditors N     threads scanning all accounts in read-only transactions (2)",
                "  --opening V      opening balance of each account (1000)",
                "  --max-amount V   largest transfer (100)",
                "  --kill-at S      seconds into the workload at which the leader is killed (half the duration)",
                "  --no-failover    do not kill the leader",
                "  --seed N         seed of the transfer choices (42)",
                "  --help           this text",
                "Environment: SIBYL_DEMO_JAVA_OPTS (the demo JVM, default -Xms1g -Xmx1g -XX:+UseParallelGC),",
                "SIBYL_DEMO_ORACLE_OPTS (each oracle, default -Xms256m -Xmx256m -XX:+UseParallelGC),",
                "SIBYL_DEMO_BOOKIES_OPTS (ZooKeeper + bookies, default -Xms256m -Xmx512m -XX:+UseParallelGC),",
                "SIBYL_DEMO_LOGS (directory for the processes' logs, default bench-out/sibyl-demo).");
    }

    private static final Set<String> VALUED = Set.of("duration", "threads", "accounts", "auditors",
            "opening", "max-amount", "kill-at", "seed", "zk", "leader-znode", "election-znode", "oracle-pids");

    /** Parses {@code args}; {@link #help} set means only the usage was asked for. */
    public static DemoFlags parse(String... args) throws UsageException {
        DemoFlags f = new DemoFlags();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--help") || a.equals("-h")) {
                f.help = true;
                continue;
            }
            if (!a.startsWith("--")) {
                throw new UsageException("unexpected argument '" + a + "'");
            }
            String name = a.substring(2);
            String value = null;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            }
            if (name.equals("no-failover")) {
                if (value != null) {
                    throw new UsageException("--no-failover takes no value");
                }
                f.failover = false;
                continue;
            }
            if (!VALUED.contains(name)) { // before taking the next argument as its value
                throw new UsageException("unknown flag --" + name);
            }
            if (value == null) {
                if (i + 1 >= args.length) {
                    throw new UsageException("--" + name + " needs a value");
                }
                value = args[++i];
            }
            switch (name) {
                case "duration" -> f.durationSeconds = (int) positive(name, value);
                case "threads" -> f.threads = (int) positive(name, value);
                case "accounts" -> f.accounts = (int) positive(name, value);
                case "auditors" -> f.auditors = (int) atLeast(name, value, 0);
                case "opening" -> f.opening = atLeast(name, value, 0);
                case "max-amount" -> f.maxAmount = (int) positive(name, value);
                case "kill-at" -> f.killAtSeconds = seconds(name, value);
                case "seed" -> f.seed = number(name, value);
                case "zk" -> f.zkConnect = value;
                case "leader-znode" -> f.leaderZnode = value;
                case "election-znode" -> f.electionZnode = value;
                case "oracle-pids" -> f.oraclePids = pids(value);
                default -> throw new UsageException("unknown flag --" + name);
            }
        }
        if (f.help) {
            return f;
        }
        if (f.accounts < 2) {
            throw new UsageException("--accounts must be at least 2 (a transfer needs two), got " + f.accounts);
        }
        if (f.killAtSeconds >= f.durationSeconds) {
            throw new UsageException("--kill-at must be below --duration (" + f.durationSeconds + "), got "
                    + f.killAtSeconds);
        }
        return f;
    }

    /** When the leader is killed, in seconds into the workload. */
    public double killAt() {
        return killAtSeconds >= 0 ? killAtSeconds : durationSeconds / 2.0;
    }

    /** One line for the report. */
    public String describe() {
        return String.format(Locale.ROOT, "%d accounts x %d, %d transfer threads, %d auditors, %d s, %s",
                accounts, opening, threads, auditors, durationSeconds,
                failover ? String.format(Locale.ROOT, "leader killed at %.1f s", killAt()) : "no failover");
    }

    private static long number(String name, String value) throws UsageException {
        try {
            return Long.parseLong(value.trim());
        } catch (NumberFormatException e) {
            throw new UsageException("--" + name + " must be a whole number, got '" + value + "'");
        }
    }

    private static long atLeast(String name, String value, long min) throws UsageException {
        long v = number(name, value);
        if (v < min) {
            throw new UsageException("--" + name + " must be at least " + min + ", got " + v);
        }
        if (v > Integer.MAX_VALUE && !name.equals("opening")) {
            throw new UsageException("--" + name + " is too large: " + v);
        }
        return v;
    }

    private static long positive(String name, String value) throws UsageException {
        return atLeast(name, value, 1);
    }

    private static double seconds(String name, String value) throws UsageException {
        try {
            double v = Double.parseDouble(value.trim());
            if (!(v >= 0) || Double.isInfinite(v)) {
                throw new UsageException("--" + name + " must be 0 or more seconds, got '" + value + "'");
            }
            return v;
        } catch (NumberFormatException e) {
            throw new UsageException("--" + name + " must be a number of seconds, got '" + value + "'");
        }
    }

    private static List<Long> pids(String value) throws UsageException {
        List<Long> out = new ArrayList<>();
        for (String p : value.split(",")) {
            if (!p.isBlank()) {
                out.add(atLeast("oracle-pids", p, 1));
            }
        }
        return out;
    }

    /**
     * Checks the flags without running anything: bin/sibyl-demo calls this before it starts a single process.
     * Exit status 0 if they are fine, 2 with a message if not, {@link #HELP_PRINTED} after printing the usage.
     */
    public static void main(String[] args) {
        try {
            DemoFlags f = parse(args);
            if (f.help) {
                System.out.println(usage());
                System.exit(HELP_PRINTED);
            }
            System.exit(0);
        } catch (UsageException e) {
            System.err.println("sibyl-demo: " + e.getMessage());
            System.err.println(usage());
            System.exit(2);
        }
    }
}
