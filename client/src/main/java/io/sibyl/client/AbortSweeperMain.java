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
    /** Default settle time: longer than the HBase client's default operation timeout (20 minutes). */
    static final long DEFAULT_SETTLE_MS = 30 * 60 * 1000L;

    private AbortSweeperMain() {
    }

    public static void main(String[] args) throws Exception {
        System.exit(run(args, System.out, System.err));
    }

    static int run(String[] args, PrintStream out, PrintStream err) throws Exception {
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
                    err.println("sibyl-sweep: --settle-ms needs a whole number of milliseconds, got " + a);
                    return 2;
                }
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
                    + "=host:port (HA) or --" + TransactionManager.ORACLE_ADDRESS + "=host:port");
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
        out.println("  Deletes the versions that aborted transactions of dead clients left in HBase and reports them");
        out.println("  cleaned up, so the status oracle forgets them (docs/gc.md).");
        out.println("  --tables      every table this oracle's transactions write to (a table left out would show");
        out.println("                the swept transactions' versions there as committed)");
        out.println("  --all-tables  every user table that can hold transactional data, less --exclude: only when no");
        out.println("                other Sibyl deployment (another oracle) keeps tables in this HBase cluster");
        out.println("  --settle-ms   a transaction is swept only if it was a candidate this long before (default "
                + DEFAULT_SETTLE_MS + ",");
        out.println("                above the HBase client's operation timeout, so no write of a dead client is in"
                + " flight)");
        out.println("  --dry-run     count only");
        out.println("  --key=value   HBase and Sibyl client settings, e.g. --hbase.zookeeper.quorum=zk1");
        out.println("                --sibyl.oracle.zk.connect=zk1:2181 or --sibyl.oracle.address=host:port");
    }
}
