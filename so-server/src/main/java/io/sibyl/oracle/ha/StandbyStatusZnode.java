package io.sibyl.oracle.ha;

import io.sibyl.oracle.journal.ZnodeAcl;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * A standby's state in ZooKeeper, for {@code bin/sibyl status}: the ephemeral znode {@code status-CANDIDATE} beside
 * its candidate znode in the election (ignored by {@link ElectionOrder}), rewritten every second with
 * {@code key=value} lines ({@code lag.ms}, {@code entries.replayed}). In ZooKeeper because a standby has no port a
 * CLI could ask, and the election is where the CLI already looks; the znode goes with the standby's session.
 */
final class StandbyStatusZnode implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(StandbyStatusZnode.class);
    /** Name prefix of a standby's status znode; the candidate znode's name follows. */
    static final String PREFIX = "status-";
    private static final long EVERY_MS = 1000;

    private final ZooKeeper zk;
    private final String path;
    private final ZnodeAcl acl;
    private final Supplier<String> state;
    private final ScheduledExecutorService timer = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "sibyl-standby-status");
        t.setDaemon(true);
        return t;
    });

    StandbyStatusZnode(ZooKeeper zk, String electionZnode, String candidateName, ZnodeAcl acl, Supplier<String> state) {
        this.zk = zk;
        this.path = electionZnode + "/" + PREFIX + candidateName;
        this.acl = acl;
        this.state = state;
        timer.scheduleWithFixedDelay(this::publish, 0, EVERY_MS, TimeUnit.MILLISECONDS);
    }

    private void publish() {
        byte[] data = state.get().getBytes(StandardCharsets.UTF_8);
        try {
            try {
                zk.setData(path, data, -1);
            } catch (KeeperException.NoNodeException e) {
                zk.create(path, data, acl.list(), CreateMode.EPHEMERAL);
            }
        } catch (KeeperException e) {
            LOG.debug("standby: publishing its state in {}: {}", path, e.toString()); // shown again in a second
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** Stops publishing and deletes the znode (a leader has no standby state). */
    @Override
    public void close() {
        timer.shutdownNow();
        try {
            timer.awaitTermination(5, TimeUnit.SECONDS);
            zk.delete(path, -1);
        } catch (KeeperException e) {
            LOG.debug("standby: deleting {}: {}", path, e.toString());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
