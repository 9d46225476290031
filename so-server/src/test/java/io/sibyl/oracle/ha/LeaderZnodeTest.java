package io.sibyl.oracle.ha;

import io.sibyl.oracle.journal.BookKeeperCluster;
import io.sibyl.oracle.journal.JournalClients;
import io.sibyl.oracle.journal.JournalSettings;
import io.sibyl.oracle.journal.ZnodeAcl;
import io.sibyl.protocol.LeaderRecord;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** The leader znode's rules on a real ZooKeeper: ephemeral, stale records of lower epochs replaced, never newer. */
@Timeout(value = 60, unit = TimeUnit.SECONDS)
class LeaderZnodeTest {
    @RegisterExtension
    static final BookKeeperCluster cluster = BookKeeperCluster.perTestClass(1);

    @Test
    void newLeaderReplacesTheRecordOfADeadLeadersLingeringSession() throws Exception {
        JournalSettings s = cluster.settings("replace");
        String path = "/sibyl/test/replace/leader";
        ZooKeeper dead = JournalClients.connectZooKeeper(s); // a killed leader's session lives until it expires
        ZooKeeper next = cluster.zooKeeper(s);
        LeaderZnode.publish(dead, path, new LeaderRecord(4, "h1", 1000, "old"));
        LeaderZnode.publish(next, path, new LeaderRecord(5, "h2", 2000, "new"));
        Stat stat = new Stat();
        LeaderRecord now = LeaderRecord.decode(next.getData(path, false, stat));
        assertEquals(new LeaderRecord(5, "h2", 2000, "new"), now);
        assertEquals(next.getSessionId(), stat.getEphemeralOwner(), "owned by the new leader's session");
        dead.close(); // the old session ending later must not take the new record with it
        assertEquals(now, LeaderZnode.read(next, path));
    }

    @Test
    void aLeaderOfAnOlderEpochIsDeposedAndCannotReplaceANewerRecord() throws Exception {
        JournalSettings s = cluster.settings("older");
        String path = "/sibyl/test/older/leader";
        ZooKeeper newer = cluster.zooKeeper(s);
        ZooKeeper older = cluster.zooKeeper(s);
        LeaderZnode.publish(newer, path, new LeaderRecord(9, "h2", 2000, "new"));
        assertThrows(LeaderZnode.DeposedException.class,
                () -> LeaderZnode.publish(older, path, new LeaderRecord(8, "h1", 1000, "old")));
        assertEquals(9, LeaderZnode.read(older, path).epoch());
    }

    @Test
    void theRecordGoesWithItsSession() throws Exception {
        JournalSettings s = cluster.settings("session");
        String path = "/sibyl/test/session/leader";
        ZooKeeper leader = JournalClients.connectZooKeeper(s);
        ZooKeeper reader = cluster.zooKeeper(s);
        LeaderZnode.publish(leader, path, new LeaderRecord(1, "h", 1, "me"));
        LeaderZnode.publish(leader, path, new LeaderRecord(1, "h", 1, "me")); // a retry of our own create is fine
        assertEquals(1, LeaderZnode.read(reader, path).epoch());
        leader.close();
        assertNull(LeaderZnode.read(reader, path));
    }

    @Test
    void garbageInTheLeaderZnodeIsReplaced() throws Exception {
        assertReplacedWhenFoundHolding("garbage", "not a record".getBytes());
    }

    @Test
    void aLeaderZnodeCreatedWithoutDataIsReplaced() throws Exception {
        // What "create /path" in zkCli leaves: a znode whose data ZooKeeper returns as null.
        assertReplacedWhenFoundHolding("nodata", null);
    }

    private static void assertReplacedWhenFoundHolding(String name, byte[] data) throws Exception {
        JournalSettings s = cluster.settings(name);
        String path = "/sibyl/test/" + name + "/leader";
        ZooKeeper zk = cluster.zooKeeper(s);
        ZnodeAcl.OPEN.createParents(zk, path);
        zk.create(path, data, org.apache.zookeeper.ZooDefs.Ids.OPEN_ACL_UNSAFE,
                org.apache.zookeeper.CreateMode.PERSISTENT);
        assertNull(LeaderZnode.read(zk, path));
        LeaderZnode.publish(zk, path, new LeaderRecord(1, "h", 1, "me"));
        assertEquals(1, LeaderZnode.read(zk, path).epoch());
    }
}
