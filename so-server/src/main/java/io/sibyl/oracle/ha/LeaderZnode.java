package io.sibyl.oracle.ha;

import io.sibyl.protocol.LeaderRecord;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Op;
import io.sibyl.oracle.journal.ZnodeAcl;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

import java.io.IOException;
import java.util.List;

/**
 * Reads and writes the leader znode ({@code journal.leader.znode}): an EPHEMERAL znode holding the serving
 * oracle's {@link LeaderRecord}, so it disappears with the leader's ZooKeeper session.
 *
 * <p><b>Replacing a stale record.</b> After a kill -9 the dead leader's znode lives until its session expires (the
 * session timeout), and the new leader must not wait for that. It deletes a record of a <em>lower</em> epoch (a
 * versioned delete, so it removes exactly the record it judged) and creates its own. It never updates the old znode
 * in place: the znode would still belong to the dead session and vanish when that expires. A record of a higher (or
 * the same, another owner's) epoch means this oracle was already superseded: {@link DeposedException}. Delete and
 * create are one ZooKeeper transaction ({@code multi}), so a watching client sees the record change, not vanish.
 */
public final class LeaderZnode {
    private static final int ATTEMPTS = 50;

    /** A leader of a newer epoch is already announced. */
    public static final class DeposedException extends IOException {
        DeposedException(String message) {
            super(message);
        }
    }

    private LeaderZnode() {
    }

    /** As {@link #publish(ZooKeeper, String, LeaderRecord, ZnodeAcl)}, open to anyone. */
    public static void publish(ZooKeeper zk, String path, LeaderRecord me) throws IOException, InterruptedException {
        publish(zk, path, me, ZnodeAcl.OPEN);
    }

    /**
     * Announces {@code me} at {@code path} with {@code zk}'s session, replacing a record of a lower epoch; the
     * znode, and the parents this creates, get {@code acl}.
     *
     * @throws DeposedException if a record of an epoch at or above {@code me.epoch()} from another owner is there
     */
    public static void publish(ZooKeeper zk, String path, LeaderRecord me, ZnodeAcl acl)
            throws IOException, InterruptedException {
        for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
            try {
                acl.createParents(zk, path);
                zk.create(path, me.encode(), acl.list(), CreateMode.EPHEMERAL);
                return;
            } catch (KeeperException.NodeExistsException e) {
                Stat stat = new Stat();
                byte[] data;
                try {
                    data = zk.getData(path, false, stat);
                } catch (KeeperException.NoNodeException gone) {
                    continue;
                } catch (KeeperException ke) {
                    throw acl.refused("reading the leader znode", path, ke);
                }
                LeaderRecord there = decodeOrNull(data);
                if (there != null && there.owner().equals(me.owner()) && there.epoch() == me.epoch()) {
                    return; // ours: a create whose reply a connection loss hid
                }
                if (there != null && there.epoch() >= me.epoch()) {
                    throw new DeposedException("leader znode " + path + " already announces epoch " + there.epoch()
                            + " (" + there.owner() + " at " + there.address() + "), not below ours, " + me.epoch()
                            + " (if that is another journal's leader: each journal needs its own journal.leader.znode)");
                }
                try {
                    // One transaction: clients never see the znode missing between the two, and it costs one write.
                    zk.multi(List.of(Op.delete(path, stat.getVersion()),
                            Op.create(path, me.encode(), acl.list(), CreateMode.EPHEMERAL)));
                    return;
                } catch (KeeperException.NoNodeException | KeeperException.BadVersionException
                         | KeeperException.NodeExistsException changed) {
                    // someone else moved first: judge again
                } catch (KeeperException.ConnectionLossException lost) {
                    Thread.sleep(50); // the next round finds our record if the transaction went through
                } catch (KeeperException ke) {
                    throw acl.refused("replacing the stale leader znode", path, ke);
                }
            } catch (KeeperException.ConnectionLossException e) {
                Thread.sleep(50);
            } catch (KeeperException e) {
                throw acl.refused("creating the leader znode", path, e);
            }
        }
        throw new IOException("could not announce the leader at " + path + " in " + ATTEMPTS + " attempts");
    }

    /** The announced leader, or null if there is none (or the znode is not a leader record). */
    public static LeaderRecord read(ZooKeeper zk, String path) throws KeeperException, InterruptedException {
        try {
            return decodeOrNull(zk.getData(path, false, null));
        } catch (KeeperException.NoNodeException e) {
            return null;
        }
    }

    static LeaderRecord decodeOrNull(byte[] data) {
        try {
            return LeaderRecord.decode(data);
        } catch (IllegalArgumentException e) {
            return null; // garbage in the leader znode is replaced like a stale record
        }
    }
}
