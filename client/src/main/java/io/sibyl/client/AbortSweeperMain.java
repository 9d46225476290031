package io.sibyl.client;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.TableName;

import java.io.PrintStream;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * {@code bin/sibyl-sweep}: one {@link AbortSweeper} run from the command line, for cron or by hand.
 * {@code sibyl-sweep (--tables=t1,t2 | --all-tables [--exclude=t3]) [--settle-ms=N] [--dry-run] [--key=value ...]};
 * other keys go to the HBase configuration (on top of the hbase-site.xml on the classpath), e.g. {@code --hbase.zookeeper.quorum=zk1} and
 * {@code --sibyl.oracle.zk.connect=zk1:2181} or {@code --sibyl.oracle.address=host:port}.
 */
public final class AbortSweeperMain {
    /**
     * Default settle time, 10 minutes. A client's HBase client stops retrying its writes by the end of its read window
     * (each batch's operation timeout is capped to the time left in it), which comes half the reader grace before the
     * oracle lets a transaction of a lost connection fall below the watermark, so no write of a dead client is retried
     * once it is a candidate; what the settle time still covers is a write a region server took before that and
     * applies later (a call already executing: row lock and WAL sync waits, 5 minutes at most by HBase's defaults; a
     * region server that crashed with it in its WAL, replayed when the region reopens), and a client process stalled
     * between measuring the time left and handing the batch to HBase. Clients of releases before this one do not cap
     * their writes: sweep with 30 minutes (above HBase's 20-minute operation timeout) until all are upgraded.
     */
    static final long DEFAULT_SETTLE_MS = 10 * 60 * 1000L;

    private AbortSweeperMain() {
    }

    /** Runs one sweep and exits: 0 done, 1 the sweep failed, 2 the arguments were wrong. */
    public static void main(String[] args) throws Exception {
        System.exit(run(args, System.out, System.err));
    }

    /**
     * Runs one sweep with {@code args} as {@link #main} takes them, writing to {@code out} and {@code err}; returns
     * the exit status (public for {@code bin/sibyl sweep}, which runs it in its own process).
     */
    public static int run(String[] args, PrintStream out, PrintStream err) throws Exception {
        Configuration conf = HBaseConfiguration.create();
        Set<TableName> excluded = new HashSet<>();
        Set<TableName> only = new HashSet<>();
        boolean allTables = false;
        long settle = DEFAULT_SETTLE_MS;
        boolean dryRun = false;
        for (String a : args) {
            if (a.equals("--help") || a.equals("-h")) {
                usage(out);
                return 0;
            } else if (a.equals("--dry-run")) {
                dryRun = true;
            } else if (a.equals("--all-tables")) {
                allTables = true;
            } else if (a.startsWith("--tables=")) {
                only.addAll(tables(a.substring("--tables=".length())));
            } else if (a.startsWith("--exclude=")) {
                excluded.addAll(tables(a.substring("--exclude=".length())));
            } else if (a.startsWith("--settle-ms=")) {
                try {
                    settle = Long.parseLong(a.substring("--settle-ms=".length()).trim());
                } catch (NumberFormatException e) {
                    settle = -1;
                }
                if (settle < 0) {
                    err.println("sibyl-sweep: --settle-ms needs a whole number of milliseconds, 0 or more, got " + a);
                    return 2;
                }
            } else if (a.equals("--tables") || a.equals("--exclude") || a.equals("--settle-ms")) {
                err.println("sibyl-sweep: " + a + " needs a value after '=', e.g. " + a
                        + (a.equals("--settle-ms") ? "=" + DEFAULT_SETTLE_MS : "=t1,t2"));
                return 2;
            } else if (a.startsWith("--") && a.contains("=")) {
                int eq = a.indexOf('=');
                conf.set(a.substring(2, eq), a.substring(eq + 1));
            } else {
                err.println("sibyl-sweep: unknown argument " + a);
                usage(err);
                return 2;
            }
        }
        if (allTables == !only.isEmpty()) {
            err.println("sibyl-sweep: give either --tables=t1,t2 (every table this oracle's transactions write to) or"
                    + " --all-tables (every user table that can hold transactional data, when no other Sibyl"
                    + " deployment keeps tables in this HBase cluster)");
            return 2;
        }
        if (conf.get(TransactionManager.ORACLE_ZK_CONNECT) == null && conf.get(TransactionManager.ORACLE_ADDRESS) == null) {
            err.println("sibyl-sweep: name the status oracle with --" + TransactionManager.ORACLE_ZK_CONNECT
                    + "=zk1:2181,zk2:2181 (the ZooKeeper ensemble of an HA group of oracles) or --"
                    + TransactionManager.ORACLE_ADDRESS + "=host:port (a single oracle)");
            return 2;
        }
        try (TransactionManager tm = TransactionManager.create(conf)) {
            AbortSweeper.Report r = new AbortSweeper(tm, only, excluded, settle, dryRun).sweep();
            out.println((dryRun ? "dry run: " : "") + r.transactions() + " aborted transactions of dead clients and "
                    + r.abortedRanges() + " aborted ranges of oracle recoveries, "
                    + r.versionsFound() + " versions found, " + r.versionsDeleted() + " deleted, "
                    + r.reportedCleanedUp() + " reported cleaned up to the oracle");
            out.println("tables scanned: " + r.tablesScanned());
            for (Map.Entry<TableName, String> s : r.tablesSkipped().entrySet()) {
                out.println("table skipped: " + s.getKey() + " (" + s.getValue() + ")");
            }
            return 0;
        } catch (Exception e) {
            err.println("sibyl-sweep: " + e);
            return 1;
        }
    }

    private static Set<TableName> tables(String list) {
        Set<TableName> out = new HashSet<>();
        for (String t : list.split(",")) {
            if (!t.isBlank()) {
                out.add(TableName.valueOf(t.trim()));
            }
        }
        return out;
    }

    private static void usage(PrintStream out) {
        out.println("sibyl-sweep (--tables=t1,t2 | --all-tables [--exclude=t3]) [--settle-ms=N] [--dry-run]"
                + " [--key=value ...]");
        out.println("  Deletes the versions that aborted transactions of dead clients, and the aborted ranges of oracle");
        out.println("  recoveries, left in HBase and reports them cleaned up, so the status oracle forgets them");
        out.println("  (docs/gc.md).");
        out.println("  --tables      every table this oracle's transactions write to (a table left out would show");
        out.println("                the swept transactions' versions there as committed)");
        out.println("  --all-tables  every user table that can hold transactional data, less --exclude: only when no");
        out.println("                other Sibyl deployment (another oracle) keeps tables in this HBase cluster");
        out.println("  --settle-ms   a transaction is swept only if it was a candidate this long before (default "
                + DEFAULT_SETTLE_MS + ",");
        out.println("                so that no write a region server took from a dead client is still to be applied;");
        out.println("                clients stop HBase's retries by the end of their read window. Use 1800000 while");
        out.println("                clients of earlier releases, which retry for hbase.client.operation.timeout, run)");
        out.println("  --dry-run     count only");
        out.println("  --key=value   HBase and Sibyl client settings, e.g. --hbase.zookeeper.quorum=zk1");
        out.println("                --sibyl.oracle.zk.connect=zk1:2181 or --sibyl.oracle.address=host:port");
    }
}
