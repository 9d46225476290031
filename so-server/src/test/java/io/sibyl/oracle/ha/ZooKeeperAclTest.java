package io.sibyl.oracle.ha;

import io.sibyl.oracle.journal.BookKeeperCluster;
import io.sibyl.oracle.journal.DigestFiles;
import io.sibyl.oracle.journal.JournalClients;
import io.sibyl.oracle.journal.JournalSettings;
import io.sibyl.oracle.journal.LedgerRegistry;
import io.sibyl.oracle.journal.ZnodeAcl;
import io.sibyl.protocol.DigestCredentials;
import io.sibyl.protocol.LeaderRecord;
import io.sibyl.protocol.Wire;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.Id;
import org.apache.zookeeper.server.auth.DigestAuthenticationProvider;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * ACLs on the oracle's znodes ({@code journal.zk.acl=secure}) on a real ZooKeeper: an HA pair authenticated with a
 * digest identity elects, serves and fails over; a stranger (no identity, or another digest user) can read the leader
 * znode but cannot delete or overwrite any of the oracle's znodes, so it can no longer depose the leader; znodes an
 * older oracle left open are taken over; an oracle without the right identity is refused naming the settings.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class ZooKeeperAclTest {
    @RegisterExtension
    static final BookKeeperCluster cluster = BookKeeperCluster.perTestClass(3);

    @TempDir
    Path dir;

    /** A ZooKeeper session as a stranger: no identity, or {@code digest} credentials if given. */
    private static ZooKeeper stranger(String digest) throws Exception {
        ZooKeeper zk = cluster.zooKeeper(cluster.settings("stranger"));
        if (digest != null) {
            zk.addAuthInfo(DigestCredentials.SCHEME, digest.getBytes(java.nio.charset.StandardCharsets.UTF_8));
        }
        return zk;
    }

    @Test
    void haPairWithAclsFailsOverAndStrangersCannotDeposeTheLeader() throws Exception {
        String base = "/sibyl/test/acl";
        String leaderZnode = base + "/leader";
        String election = base + "/election";
        String ledgers = base + "/ledgers";
        // An older oracle without ACLs left the registry and the election znode open to anyone.
        ZooKeeper legacy = cluster.zooKeeper(cluster.settings("acl-legacy"));
        new LedgerRegistry(legacy, ledgers).fence("older-oracle");
        legacy.create(election, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);

        Path oracleIdentity = DigestFiles.write(dir, "oracle.digest", "sibyl-oracle:s3cret-of-the-oracles");
        String[] acl = {"--journal.zk.auth.file=" + oracleIdentity, "--journal.zk.acl=secure"};
        try (OracleProcess first = new OracleProcess("acl-first", StandbyTakeoverTest.haFlags(cluster, "acl", acl))) {
            String firstOwner = first.owner(30_000);
            int firstPort = first.awaitReady(30_000);
            try (OracleProcess second = new OracleProcess("acl-second",
                    StandbyTakeoverTest.haFlags(cluster, "acl", acl))) {
                String secondOwner = second.owner(30_000);

                // Every znode of the oracle: its identity may do anything, anyone else only read.
                // (ZooKeeper shows a digest's hash only to who may administer the znode: "x" to strangers.)
                Id oracle = new Id("digest", DigestCredentials.read(oracleIdentity, "test").user() + ":x");
                List<ACL> expected = List.of(new ACL(ZooDefs.Perms.ALL, oracle),
                        new ACL(ZooDefs.Perms.READ, ZooDefs.Ids.ANYONE_ID_UNSAFE));
                ZooKeeper nobody = stranger(null);
                for (String znode : List.of(base, ledgers, election, leaderZnode)) {
                    assertEquals(expected, nobody.getACL(znode, null), "ACL of " + znode);
                }
                assertTrue(first.stderrLines("was open to anyone").size() >= 2,
                        "the open znodes were taken over, and said so: " + first.tail());

                // A client without an identity still finds the leader.
                LeaderRecord leader = LeaderZnode.read(nobody, leaderZnode);
                assertNotNull(leader);
                assertEquals(firstOwner, leader.owner());
                assertEquals(firstPort, leader.port());

                // Strangers, with no identity or another digest user, cannot depose or misdirect it.
                ZooKeeper mallory = stranger("mallory:guess");
                for (ZooKeeper attacker : List.of(nobody, mallory)) {
                    List<String> candidates = attacker.getChildren(election, false);
                    assertEquals(2, candidates.size(), "both candidates are listed: " + candidates);
                    for (String c : candidates) {
                        assertThrows(KeeperException.NoAuthException.class,
                                () -> attacker.delete(election + "/" + c, -1), "delete candidate " + c);
                        assertThrows(KeeperException.NoAuthException.class,
                                () -> attacker.setData(election + "/" + c, new byte[0], -1), "overwrite " + c);
                    }
                    assertThrows(KeeperException.NoAuthException.class, () -> attacker.delete(leaderZnode, -1));
                    assertThrows(KeeperException.NoAuthException.class, () -> attacker.setData(leaderZnode,
                            new LeaderRecord(99, "10.6.6.6", 6666, "mallory").encode(), -1));
                    assertThrows(KeeperException.NoAuthException.class,
                            () -> attacker.setData(ledgers, new byte[0], -1));
                    assertThrows(KeeperException.NoAuthException.class, () -> attacker.create(election + "/c-",
                            new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.EPHEMERAL_SEQUENTIAL));
                    assertThrows(KeeperException.NoAuthException.class,
                            () -> attacker.setACL(election, ZooDefs.Ids.OPEN_ACL_UNSAFE, -1));
                }

                // The leader keeps serving, and is still the one announced.
                try (RawOracleClient c = RawOracleClient.connect("127.0.0.1", firstPort, 5000)) {
                    long start = c.begin();
                    assertEquals(Wire.COMMITTED, c.commit(start, 42).type(), "the leader commits");
                }
                assertTrue(first.process.isAlive(), "the leader was not deposed: " + first.tail());
                assertEquals(leader, LeaderZnode.read(nobody, leaderZnode));

                // Failover with ACLs: the standby deletes the dead leader's candidate and takes over.
                first.process.destroyForcibly();
                assertTrue(first.process.waitFor(10, TimeUnit.SECONDS));
                int secondPort = second.awaitReady(60_000);
                LeaderRecord after = LeaderZnode.read(nobody, leaderZnode);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while ((after == null || !after.owner().equals(secondOwner)) && System.nanoTime() < deadline) {
                    Thread.sleep(20);
                    after = LeaderZnode.read(nobody, leaderZnode);
                }
                assertNotNull(after, "the standby announced itself");
                assertEquals(secondOwner, after.owner());
                assertEquals(secondPort, after.port());
                assertTrue(after.epoch() > leader.epoch(), "new epoch " + after.epoch() + " > " + leader.epoch());
                assertEquals(expected, nobody.getACL(leaderZnode, null), "the new leader znode has the ACL too");
                try (RawOracleClient c = RawOracleClient.connect("127.0.0.1", secondPort, 5000)) {
                    long start = c.begin();
                    assertEquals(Wire.COMMITTED, c.commit(start, 43).type(), "the new leader commits");
                }
                assertTrue(second.stderrLines("not authorized").isEmpty(), second.tail());
            }
        }
    }

    @Test
    void aCredentialsFileGivesTheIdZooKeeperPutsInAcls() throws Exception {
        DigestCredentials c = DigestCredentials.read(DigestFiles.write(dir, "id", "  reader:pa:ss  "), "key");
        assertEquals("reader", c.user());
        assertEquals("pa:ss", c.password());
        assertEquals(DigestAuthenticationProvider.generateDigest("reader:pa:ss"), c.aclId(),
                "the id to list in journal.zk.acl.readers");
        assertEquals("digest:reader", c.toString(), "the password is never shown");
        for (Path bad : List.of(DigestFiles.write(dir, "bad", "no-colon"), dir.resolve("missing"))) {
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> DigestCredentials.read(bad, "journal.zk.auth.file"));
            assertTrue(e.getMessage().contains("journal.zk.auth.file"), e.getMessage());
        }
    }

    @Test
    void anOracleWithoutTheOwningIdentityIsRefusedNamingTheSetting() throws Exception {
        Path owner = DigestFiles.write(dir, "owner.digest", "sibyl-oracle:the-right-one");
        // A root of its own: the parents an oracle creates get its ACL, and /sibyl/test is the other test's.
        JournalSettings secured = cluster.settings("acl-owned").withLedgersZnode("/acl-owned/ledgers")
                .withLeaderZnodes("/acl-owned/leader", "/acl-owned/election")
                .withZooKeeperAcl(owner.toString(), JournalSettings.ACL_SECURE, "world:anyone");
        ZooKeeper zk = JournalClients.connectZooKeeper(secured);
        try {
            new LedgerRegistry(zk, secured.ledgersZnode(), ZnodeAcl.of(secured)).fence("owner");
        } finally {
            zk.close();
        }

        JournalSettings other = secured.withZooKeeperAcl(
                DigestFiles.write(dir, "other.digest", "someone-else:pw").toString(), JournalSettings.ACL_SECURE,
                "world:anyone");
        IOException refused = assertThrows(IOException.class, () -> JournalClients.connectZooKeeper(other));
        assertTrue(refused.getMessage().contains("journal.zk.auth.file")
                && refused.getMessage().contains(secured.ledgersZnode()), refused.getMessage());

        JournalSettings anonymous = secured.withZooKeeperAcl("", JournalSettings.ACL_SECURE, "world:anyone");
        IOException unauthenticated = assertThrows(IOException.class,
                () -> JournalClients.connectZooKeeper(anonymous));
        assertTrue(unauthenticated.getMessage().contains("not authenticated")
                && unauthenticated.getMessage().contains("journal.zk.auth.file"), unauthenticated.getMessage());

        // An open oracle (journal.zk.acl=open, no identity) reads the registry but cannot change it.
        ZooKeeper open = cluster.zooKeeper(cluster.settings("acl-open"));
        LedgerRegistry openRegistry = new LedgerRegistry(open, secured.ledgersZnode());
        assertEquals("owner", openRegistry.read().owner());
        IOException fence = assertThrows(IOException.class, () -> openRegistry.fence("intruder"));
        assertTrue(fence.getMessage().contains("journal.zk.auth.file"), fence.getMessage());
    }
}
