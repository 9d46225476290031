package io.sibyl.admin;

import io.sibyl.oracle.ha.ElectionOrder;
import io.sibyl.protocol.HostedRangeSweep;
import io.sibyl.protocol.LeaderRecord;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.Callable;

/** {@code bin/sibyl status}: the oracle group in ZooKeeper (leader, epoch, candidates) and the leader's figures. */
@Command(name = "status", mixinStandardHelpOptions = true,
        header = "The oracle group: leader, epoch, candidates, and the leader's figures.",
        description = {"Shows the oracle group: the leader (address, epoch, owner) from the leader znode, the"
                + " candidates in the election, and, with the admin secret, what the leader reports: last timestamp,"
                + " T_max, low watermark, running and aborted transactions, aborted ranges, connections.",
                "Exit status: 0 an oracle answered, 1 none leads or it did not answer, 2 wrong options."})
final class StatusCommand implements Callable<Integer> {
    @Mixin
    ClusterOptions cluster;
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        cluster.requireOracle("status");
        PrintWriter out = spec.commandLine().getOut();
        String host;
        int port;
        if (cluster.hasZooKeeper()) {
            try (ZooKeeper zk = cluster.zooKeeper()) {
                LeaderRecord leader = cluster.leader(zk);
                out.println("oracle group: ZooKeeper " + cluster.zkConnect + ", leader znode " + cluster.leaderZnode);
                printCandidates(zk, out, leader);
                if (leader == null) {
                    out.flush();
                    throw new CliException(cluster.noLeader());
                }
                out.println("  leader:     " + leader.address() + " (epoch " + leader.epoch() + ", owner "
                        + leader.owner() + ")");
                host = leader.host();
                port = leader.port();
            }
        } else {
            String[] hostPort = ClusterOptions.splitAddress(cluster.oracleAddress);
            host = hostPort[0];
            port = Integer.parseInt(hostPort[1]);
        }
        byte[] secret = cluster.adminSecretOrNull();
        if (secret == null && !cluster.hasClientCertificate()) {
            out.println("oracle " + host + ":" + port + ": give --admin-secret-file=FILE (the oracle's"
                    + " admin.secret.file) to see T_max, the low watermark, set sizes and connections");
            return 0;
        }
        try (AdminConnection c = AdminConnection.open(host, port, cluster.tls(), secret, cluster.timeoutMillis)) {
            Map<String, Long> figures = c.status();
            out.println("oracle " + host + ":" + port + ":");
            for (Map.Entry<String, Long> f : figures.entrySet()) {
                out.printf("  %-28s %s%n", f.getKey(), show(f.getKey(), f.getValue()));
            }
        }
        return 0;
    }

    /**
     * What a standby publishes about itself beside its candidate znode ({@code status-CANDIDATE}: its lag and the
     * journal entries it replayed), as ": lag 3 ms, 5120 journal entries replayed"; empty when it publishes nothing
     * (an oracle older than this CLI).
     */
    private String standbyState(ZooKeeper zk, String candidate) throws InterruptedException {
        Map<String, String> state = new java.util.LinkedHashMap<>();
        try {
            byte[] data = zk.getData(cluster.electionZnode + "/status-" + candidate, false, null);
            for (String line : new String(data, StandardCharsets.UTF_8).split("\n")) {
                int eq = line.indexOf('=');
                if (eq > 0) {
                    state.put(line.substring(0, eq).trim(), line.substring(eq + 1).trim());
                }
            }
        } catch (KeeperException e) {
            return "";
        }
        String lag = state.getOrDefault("lag.ms", "?");
        return ": " + (lag.equals("-1") ? "catching up with the journal" : "lag " + lag + " ms") + ", "
                + state.getOrDefault("entries.replayed", "?") + " journal entries replayed";
    }

    /** A figure as people read it: the range sweep's phase by name, the rest as numbers. */
    static String show(String name, long value) {
        if (name.equals("range.sweep.phase")) {
            HostedRangeSweep.Phase[] phases = HostedRangeSweep.Phase.values();
            return value >= 0 && value < phases.length
                    ? phases[(int) value].name().toLowerCase(Locale.ROOT).replace('_', ' ')
                    : value == -1 ? "off (range.sweep.tables is empty: run sibyl sweep after failovers)"
                    : Long.toString(value);
        }
        return Long.toString(value);
    }

    /** The election's candidates in line, each with the owner name its znode holds; the first leads. */
    private void printCandidates(ZooKeeper zk, PrintWriter out, LeaderRecord leader) throws InterruptedException {
        List<String> candidates;
        try {
            candidates = ElectionOrder.of(zk.getChildren(cluster.electionZnode, false)).candidates();
        } catch (KeeperException.NoNodeException e) {
            out.println("  candidates: none (no " + cluster.electionZnode + "; oracles with ha=false do not join an"
                    + " election)");
            return;
        } catch (KeeperException e) {
            out.println("  candidates: cannot read " + cluster.electionZnode + " (" + e.getMessage() + ")");
            return;
        }
        out.println("  candidates: " + candidates.size() + " in line");
        for (int i = 0; i < candidates.size(); i++) {
            String owner;
            try {
                byte[] data = zk.getData(cluster.electionZnode + "/" + candidates.get(i), false, null);
                owner = data == null ? "?" : new String(data, StandardCharsets.UTF_8).trim();
            } catch (KeeperException e) {
                owner = "(gone)";
            }
            boolean leads = leader != null && owner.equals(leader.owner());
            out.println("    " + (i + 1) + ". " + owner + (leads ? "  (leader)" : i == 0 ? "  (taking over)"
                    : "  (standby" + standbyState(zk, candidates.get(i)) + ")"));
        }
    }
}
