package io.sibyl.admin;

import io.sibyl.protocol.AdminReplies;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.concurrent.Callable;

/** {@code bin/sibyl transactions}: the oracle's running transactions, oldest first (admin role). */
@Command(name = "transactions", mixinStandardHelpOptions = true,
        header = "The running transactions, oldest first (admin).",
        description = {"Lists the transactions the leader counts as running, oldest first: start timestamp, state,"
                + " the connection that began it and its address. The oldest one holds the low watermark, so"
                + " garbage collection keeps every version it may read: a transaction that stays here for long is"
                + " a leak in its client (bin/sibyl abort stops it). Needs the admin secret."})
final class TransactionsCommand implements Callable<Integer> {
    @Mixin
    ClusterOptions cluster;
    @Spec
    CommandSpec spec;

    @Option(names = "--limit", paramLabel = "N", defaultValue = "100",
            description = "list at most N (default ${DEFAULT-VALUE}, at most 10000)")
    int limit;

    @Override
    public Integer call() throws Exception {
        if (limit < 0) {
            throw new CliException("--limit must be 0 or more, got " + limit, CliException.USAGE);
        }
        PrintWriter out = spec.commandLine().getOut();
        try (AdminConnection c = cluster.adminConnection("transactions")) {
            AdminReplies.RunningList list = c.running(limit);
            out.println(list.total() + " running" + (list.oldest().size() < list.total() ? ", the oldest "
                    + list.oldest().size() + " listed" : ""));
            if (!list.oldest().isEmpty()) {
                out.printf("  %-20s %-12s %-46s %s%n", "start timestamp", "connection", "state", "client");
            }
            for (AdminReplies.RunningTransaction t : list.oldest()) {
                out.printf("  %-20d %-12d %-46s %s%n", t.startTs(), t.connection(), t.stateName(),
                        t.clientAddress());
            }
        }
        return 0;
    }
}
