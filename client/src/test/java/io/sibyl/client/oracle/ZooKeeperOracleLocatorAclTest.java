package io.sibyl.client.oracle;

import io.sibyl.client.TransactionManager;
import io.sibyl.oracle.ha.LeaderZnode;
import io.sibyl.oracle.journal.BookKeeperCluster;
import io.sibyl.oracle.journal.DigestFiles;
import io.sibyl.oracle.journal.JournalClients;
import io.sibyl.oracle.journal.JournalSettings;
import io.sibyl.oracle.journal.ZnodeAcl;
import io.sibyl.protocol.DigestCredentials;
import io.sibyl.protocol.LeaderRecord;
import org.apache.hadoop.conf.Configuration;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The leader lookup under the oracles' ZooKeeper ACLs ({@code journal.zk.acl=secure}, real in-process ZooKeeper):
 * with the default readers any client finds the leader without an identity; with readers restricted to one digest
 * id, only a client configured with it ({@code sibyl.oracle.zk.auth.file}) does, and the others say what to set.
 */
class ZooKeeperOracleLocatorAclTest {
    @RegisterExtension
    static final BookKeeperCluster cluster = BookKeeperCluster.perTestClass(1);

    @TempDir
    Path dir;

    /** Publishes {@code record} as an oracle with {@code journal.zk.acl=secure} and {@code readers} would. */
    private ZooKeeper publishAsSecureOracle(String root, String readers, LeaderRecord record) throws Exception {
        JournalSettings s = cluster.settings("locator-acl").withLedgersZnode(root + "/ledgers")
                .withLeaderZnodes(root + "/leader", root + "/election")
                .withZooKeeperAcl(DigestFiles.write(dir, "oracle", "sibyl-oracle:oracle-pw").toString(),
                        JournalSettings.ACL_SECURE, readers);
        ZooKeeper oracle = JournalClients.connectZooKeeper(s);
        LeaderZnode.publish(oracle, s.leaderZnode(), record, ZnodeAcl.of(s));
        return oracle;
    }

    @Test
    void aClientWithoutAnIdentityFindsTheLeaderWhenAnyoneMayRead() throws Exception {
        LeaderRecord record = new LeaderRecord(3, "127.0.0.1", 4003, "secure-oracle");
        ZooKeeper oracle = publishAsSecureOracle("/acl-world", "world:anyone", record);
        try (ZooKeeperOracleLocator locator = new ZooKeeperOracleLocator(cluster.zkConnect(), "/acl-world/leader",
                30_000)) {
            assertEquals(record, locator.leader(20_000));
        } finally {
            oracle.close();
        }
    }

    @Test
    void withRestrictedReadersOnlyAClientWithAnAdmittedIdentityFindsTheLeader() throws Exception {
        DigestCredentials reader = DigestCredentials.read(DigestFiles.write(dir, "reader", "sibyl-client:reader-pw"),
                "test");
        LeaderRecord record = new LeaderRecord(4, "127.0.0.1", 4004, "secure-oracle");
        ZooKeeper oracle = publishAsSecureOracle("/acl-private", "digest:" + reader.aclId(), record);
        try {
            for (DigestCredentials stranger : new DigestCredentials[] {null,
                    new DigestCredentials("sibyl-client", "wrong-pw")}) {
                try (ZooKeeperOracleLocator locator = new ZooKeeperOracleLocator(cluster.zkConnect(),
                        "/acl-private/leader", 30_000, stranger)) {
                    assertNull(locator.leader(2_000), "a client the readers do not admit finds no leader");
                    assertTrue(locator.describe().contains("sibyl.oracle.zk.auth.file")
                            && locator.describe().contains("journal.zk.acl.readers"), locator.describe());
                }
            }

            Configuration conf = new Configuration(false);
            conf.set(TransactionManager.ORACLE_ZK_CONNECT, cluster.zkConnect());
            conf.set(TransactionManager.ORACLE_LEADER_ZNODE, "/acl-private/leader");
            conf.set(TransactionManager.ORACLE_ZK_AUTH_FILE, dir.resolve("reader").toString());
            try (OracleLocator locator = TransactionManager.oracleLocator(conf)) {
                assertEquals(record, locator.leader(20_000), "the admitted client finds the leader");
            }
        } finally {
            oracle.close();
        }
    }
}
