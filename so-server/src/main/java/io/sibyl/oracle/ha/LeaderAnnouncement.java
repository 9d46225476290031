package io.sibyl.oracle.ha;

import io.sibyl.oracle.OracleServer;
import io.sibyl.oracle.journal.ZnodeAcl;
import io.sibyl.protocol.LeaderRecord;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A serving oracle's entry in the leader znode, kept for as long as it serves. The znode is ephemeral to the
 * announcing session, so it goes when the oracle stops: on a fatal error the session is closed at once (clients stop
 * being sent to a dead address), on a clean shutdown with the rest. Losing the znode while serving (session
 * expired, or a newer leader replaced it) is a fatal error: clients can no longer find this oracle, and a newer one
 * has taken or is taking the journal over.
 */
public final class LeaderAnnouncement implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(LeaderAnnouncement.class);

    private final ZooKeeper zk;
    private final String path;
    private final LeaderRecord record;
    private final OracleServer server;
    private final Watcher watcher = this::onEvent; // one instance: ZooKeeper keeps a set of watchers per path
    private volatile boolean closed;

    private LeaderAnnouncement(ZooKeeper zk, String path, LeaderRecord record, OracleServer server) {
        this.zk = zk;
        this.path = path;
        this.record = record;
        this.server = server;
    }

    /**
     * Publishes {@code record} at {@code path} with {@code zk}'s session and {@code acl} (replacing the record of an
     * older epoch; see {@link LeaderZnode}) and watches it on behalf of {@code server}. If a newer leader is already announced, the
     * server is stopped through {@link OracleServer#fatalError} and the exception is thrown.
     */
    public static LeaderAnnouncement publish(ZooKeeper zk, String path, LeaderRecord record, OracleServer server,
                                             ZnodeAcl acl) throws java.io.IOException, InterruptedException {
        LeaderAnnouncement a = new LeaderAnnouncement(zk, path, record, server);
        server.onFatalError((reason, cause) -> a.endSession());
        try {
            LeaderZnode.publish(zk, path, record, acl);
        } catch (java.io.IOException e) {
            server.fatalError("cannot announce this oracle as leader: " + e.getMessage(), e);
            throw e;
        }
        LOG.info("announced as leader in {}: epoch {}, address {}, owner {}", path, record.epoch(), record.address(),
                record.owner());
        a.check();
        return a;
    }

    public LeaderRecord record() {
        return record;
    }

    /** Re-arms the watch and fails the server if the znode is no longer this session's. */
    private void check() {
        if (closed) {
            return;
        }
        try {
            Stat stat = new Stat();
            byte[] data = zk.getData(path, watcher, stat);
            if (stat.getEphemeralOwner() != zk.getSessionId()) {
                LeaderRecord other = LeaderZnode.decodeOrNull(data);
                server.fatalError("deposed: the leader znode " + path + " now announces "
                        + (other == null ? "something else" : "epoch " + other.epoch() + " (" + other.owner()
                        + " at " + other.address() + ")"), null);
            }
        } catch (KeeperException.NoNodeException e) {
            server.fatalError("the leader znode " + path + " was deleted (a newer leader is taking over, or the"
                    + " ZooKeeper session was lost)", null);
        } catch (KeeperException.SessionExpiredException e) {
            server.fatalError("the ZooKeeper session holding the leader znode expired", e);
        } catch (KeeperException e) {
            // Connection loss: the watch is gone with it; look again once the session reconnects.
            LOG.warn("checking the leader znode {}: {}", path, e.getMessage());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    private void onEvent(WatchedEvent e) {
        if (closed) {
            return;
        }
        if (e.getType() == Watcher.Event.EventType.None) {
            switch (e.getState()) {
                case Expired, Closed, AuthFailed ->
                        server.fatalError("the ZooKeeper session holding the leader znode ended: " + e.getState(),
                                null);
                case SyncConnected -> check();
                default -> {
                    // disconnected: ZooKeeper keeps the watch and tells us when it reconnects or expires
                }
            }
            return;
        }
        check();
    }

    /** Ends the session, so the ephemeral znode goes at once (on a thread of its own: callers may be ZooKeeper's). */
    private void endSession() {
        closed = true;
        Thread t = new Thread(() -> {
            try {
                zk.close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }, "sibyl-leader-znode-close");
        t.setDaemon(true);
        t.start();
    }

    /**
     * Stops watching; call it before closing the server, so that the session closing afterwards is not taken for a
     * fatal error. The znode itself goes with the session, which its owner closes after the server.
     */
    @Override
    public void close() {
        closed = true;
    }
}
