package io.sibyl.admin;

import io.sibyl.oracle.journal.LedgerRegistry;
import org.apache.zookeeper.ZooKeeper;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Spec;

import java.io.IOException;
import java.io.PrintWriter;
import java.util.concurrent.Callable;

/** {@code bin/sibyl ledgers}: the journal's ledger registry in ZooKeeper, as the leading oracle wrote it. */
@Command(name = "ledgers", mixinStandardHelpOptions = true,
        header = "The journal's ledger registry in ZooKeeper.",
        description = {"Shows the BookKeeper journal's ledger registry (journal.ledgers.znode): the epoch of the"
                + " oracle that writes it (one more per takeover), its owner, the ledgers recovery would read,"
                + " oldest first (the first holds a checkpoint once ledgers were dropped), and how many ledgers"
                + " were dropped after checkpoints.",
                "Exit status: 0 shown, 1 no registry (no oracle ever ran on the BookKeeper journal here)."})
final class LedgersCommand implements Callable<Integer> {
    @Mixin
    ClusterOptions cluster;
    @Spec
    CommandSpec spec;

    @Override
    public Integer call() throws Exception {
        cluster.requireZooKeeper("ledgers");
        PrintWriter out = spec.commandLine().getOut();
        try (ZooKeeper zk = cluster.zooKeeper()) {
            LedgerRegistry.Snapshot s;
            try {
                s = new LedgerRegistry(zk, cluster.ledgersZnode).read();
            } catch (IOException e) {
                throw new CliException("cannot read the ledger registry " + cluster.ledgersZnode + ": "
                        + e.getMessage() + " (under an ACL, give --zk-auth-file with an identity the oracles'"
                        + " journal.zk.acl.readers lists)");
            }
            if (s.version() < 0) {
                throw new CliException("no ledger registry at " + cluster.ledgersZnode + " in ZooKeeper "
                        + cluster.zkConnect + ": no oracle ran on the BookKeeper journal here, or its"
                        + " journal.ledgers.znode differs (--ledgers-znode)");
            }
            out.println("ledger registry " + cluster.ledgersZnode + " (znode version " + s.version() + ")");
            out.println("  epoch:    " + s.epoch());
            out.println("  owner:    " + s.owner());
            out.println("  ledgers:  " + s.ledgers().size() + " " + s.ledgers()
                    + (s.ledgers().isEmpty() ? "" : " (the last is being written)"));
            out.println("  dropped:  " + s.deleted() + " after checkpoints"
                    + (s.deleted() > 0 ? "; the first listed ledger starts with a checkpoint" : ""));
        }
        return 0;
    }
}
