package io.sibyl.admin;

import io.sibyl.client.AbortSweeperMain;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParentCommand;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Callable;

/**
 * {@code bin/sibyl sweep}: one run of the abort sweeper ({@link AbortSweeperMain}, also {@code bin/sibyl-sweep}),
 * with the CLI's options for the oracle and HBase.
 */
@Command(name = "sweep", mixinStandardHelpOptions = true,
        header = "Runs the abort sweep (bin/sibyl-sweep).",
        description = {"Deletes the versions that aborted transactions of dead clients and the aborted ranges of"
                + " oracle failovers left in HBase, and reports them cleaned up so the oracle forgets them"
                + " (docs/gc.md). Waits --settle-ms first (10 minutes by default). Needs the admin secret (not"
                + " for --dry-run) and HBase's settings (hbase-site.xml in $HBASE_CONF_DIR, or -D"
                + " hbase.zookeeper.quorum=...).",
                "Exit status: 0 swept, 1 the sweep failed, 2 wrong options."})
final class SweepCommand implements Callable<Integer> {
    @Mixin
    ClusterOptions cluster;
    /** The CLI, whose streams the sweeper writes to (it takes PrintStreams). */
    @ParentCommand
    SibylCli cli;

    @Option(names = "--tables", split = ",", paramLabel = "T1,T2",
            description = "every table this oracle's transactions write to")
    List<String> tables = new ArrayList<>();
    @Option(names = "--all-tables",
            description = "every user table that can hold transactional data, less --exclude (only when no other"
                    + " Sibyl deployment keeps tables in this HBase cluster)")
    boolean allTables;
    @Option(names = "--exclude", split = ",", paramLabel = "T1,T2", description = "with --all-tables: tables to skip")
    List<String> excluded = new ArrayList<>();
    @Option(names = "--settle-ms", paramLabel = "MS",
            description = "sweep only what was a candidate this long ago (the sweeper's default: 10 minutes)")
    Long settleMillis;
    @Option(names = "--dry-run", description = "count only")
    boolean dryRun;

    @Override
    public Integer call() throws Exception {
        cluster.requireOracle("sweep");
        if (!dryRun) {
            cluster.adminSecret("sweep"); // said here, in the CLI's words, rather than by the sweeper
        }
        List<String> args = new ArrayList<>();
        if (!tables.isEmpty()) {
            args.add("--tables=" + String.join(",", tables));
        }
        if (allTables) {
            args.add("--all-tables");
        }
        if (!excluded.isEmpty()) {
            args.add("--exclude=" + String.join(",", excluded));
        }
        if (settleMillis != null) {
            args.add("--settle-ms=" + settleMillis);
        }
        if (dryRun) {
            args.add("--dry-run");
        }
        cluster.explicitSettings().forEach((key, value) -> args.add("--" + key + "=" + value));
        int status = AbortSweeperMain.run(args.toArray(new String[0]), cli.out, cli.err);
        cli.out.flush();
        return status;
    }
}
