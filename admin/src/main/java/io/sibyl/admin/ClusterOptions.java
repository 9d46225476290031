package io.sibyl.admin;

import io.sibyl.client.TransactionManager;
import io.sibyl.protocol.DigestCredentials;
import io.sibyl.protocol.LeaderRecord;
import io.sibyl.protocol.SecretProof;
import io.sibyl.protocol.TlsSettings;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import picocli.CommandLine.Option;

import java.io.IOException;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/**
 * Where the oracle group and HBase are, and how to prove the admin role: the options every {@code bin/sibyl} command
 * shares (a picocli mixin, so they may come before or after the command's own).
 */
final class ClusterOptions {
    /** Default of the oracles' {@code journal.election.znode}. */
    static final String DEFAULT_ELECTION_ZNODE = "/sibyl/oracle/election";
    /** Default of the oracles' {@code journal.ledgers.znode}. */
    static final String DEFAULT_LEDGERS_ZNODE = "/sibyl/oracle/ledgers";

    @Option(names = "--zk", paramLabel = "HOST:PORT,...", defaultValue = "${env:SIBYL_ZK}",
            description = "ZooKeeper of the oracle group (the oracles' journal.zk.connect; clients'"
                    + " sibyl.oracle.zk.connect). Default: $SIBYL_ZK")
    String zkConnect;

    @Option(names = "--oracle", paramLabel = "HOST:PORT", defaultValue = "${env:SIBYL_ORACLE}",
            description = "a single oracle's address instead of the leader in ZooKeeper (sibyl.oracle.address)."
                    + " Default: $SIBYL_ORACLE")
    String oracleAddress;

    @Option(names = "--leader-znode", paramLabel = "PATH", defaultValue = TransactionManager.DEFAULT_LEADER_ZNODE,
            description = "the oracles' journal.leader.znode (default ${DEFAULT-VALUE})")
    String leaderZnode;

    @Option(names = "--election-znode", paramLabel = "PATH", defaultValue = DEFAULT_ELECTION_ZNODE,
            description = "the oracles' journal.election.znode (default ${DEFAULT-VALUE})")
    String electionZnode;

    @Option(names = "--ledgers-znode", paramLabel = "PATH", defaultValue = DEFAULT_LEDGERS_ZNODE,
            description = "the oracles' journal.ledgers.znode (default ${DEFAULT-VALUE})")
    String ledgersZnode;

    @Option(names = "--admin-secret-file", paramLabel = "FILE", defaultValue = "${env:SIBYL_ADMIN_SECRET_FILE}",
            description = "the oracle's admin.secret.file (same secret): needed for the oracle's figures,"
                    + " transactions, abort and sweep. Default: $SIBYL_ADMIN_SECRET_FILE")
    Path adminSecretFile;

    @Option(names = "--zk-auth-file", paramLabel = "FILE",
            description = "user:password of a ZooKeeper digest identity that may read the oracles' znodes under"
                    + " ACLs (sibyl.oracle.zk.auth.file)")
    Path zkAuthFile;

    @Option(names = "--timeout-ms", paramLabel = "MS", defaultValue = "10000",
            description = "how long to wait for ZooKeeper or the oracle (default ${DEFAULT-VALUE})")
    int timeoutMillis;

    @Option(names = {"-D", "--set"}, paramLabel = "KEY=VALUE",
            description = "an HBase or Sibyl client setting (hbase.zookeeper.quorum, sibyl.client.tls=true,"
                    + " sibyl.client.tls.trust.store, ...), on top of the hbase-site.xml in $HBASE_CONF_DIR")
    Map<String, String> settings = new LinkedHashMap<>();

    /** HBase's configuration from the classpath, with {@link #explicitSettings}. */
    Configuration hbaseConfiguration() {
        Configuration conf = HBaseConfiguration.create();
        explicitSettings().forEach(conf::set);
        return conf;
    }

    /** The {@code -D} settings, and the client settings these options stand for ({@code --zk}: sibyl.oracle.zk.connect, ...). */
    Map<String, String> explicitSettings() {
        Map<String, String> all = new LinkedHashMap<>(settings);
        if (hasText(zkConnect)) {
            all.put(TransactionManager.ORACLE_ZK_CONNECT, zkConnect);
            all.put(TransactionManager.ORACLE_LEADER_ZNODE, leaderZnode);
        }
        if (hasText(oracleAddress)) {
            all.put(TransactionManager.ORACLE_ADDRESS, oracleAddress);
        }
        if (adminSecretFile != null) {
            all.put(TransactionManager.ADMIN_SECRET_FILE, adminSecretFile.toString());
        }
        if (zkAuthFile != null) {
            all.put(TransactionManager.ORACLE_ZK_AUTH_FILE, zkAuthFile.toString());
        }
        return all;
    }

    /** The admin secret, or null when no file was given. */
    byte[] adminSecretOrNull() {
        return adminSecretFile == null ? null : SecretProof.readSecret(adminSecretFile, "--admin-secret-file");
    }

    /**
     * True when the CLI connects with a client certificate (mutual TLS), which the oracle may give the admin role
     * (its {@code admin.identities}) without the admin secret.
     */
    boolean hasClientCertificate() {
        TlsSettings tls = tls();
        return tls.enabled() && !tls.keyStore().isEmpty();
    }

    /**
     * The admin secret, or null when a client certificate may stand in for it; the command that needs it says so when
     * neither is given.
     */
    byte[] adminSecret(String command) {
        byte[] secret = adminSecretOrNull();
        if (secret == null && !hasClientCertificate()) {
            throw new CliException("'" + command + "' needs the admin role: give --admin-secret-file=FILE (the same"
                    + " secret as the oracle's admin.secret.file) or set SIBYL_ADMIN_SECRET_FILE, or connect with a"
                    + " client certificate the oracle's admin.identities names (-D sibyl.client.tls.key.store=...)",
                    CliException.USAGE);
        }
        return secret;
    }

    /** TLS as the client's {@code sibyl.client.tls.*} settings ({@code -D}) say. */
    TlsSettings tls() {
        return TransactionManager.oracleCredentials(hbaseConfiguration()).tlsSettings();
    }

    boolean hasZooKeeper() {
        return hasText(zkConnect);
    }

    /** Requires {@code --zk} (or SIBYL_ZK). */
    void requireZooKeeper(String command) {
        if (!hasZooKeeper()) {
            throw new CliException("'" + command + "' reads the oracle group's znodes: give --zk=zk1:2181,zk2:2181"
                    + " (the oracles' journal.zk.connect) or set SIBYL_ZK", CliException.USAGE);
        }
    }

    /** Requires {@code --zk} or {@code --oracle}. */
    void requireOracle(String command) {
        if (!hasZooKeeper() && !hasText(oracleAddress)) {
            throw new CliException("'" + command + "' needs the oracle: give --zk=zk1:2181 (the ZooKeeper of an HA"
                    + " group, whose leader znode names the oracle) or --oracle=host:port (a single oracle)",
                    CliException.USAGE);
        }
    }

    /** Connects to ZooKeeper, waiting up to the timeout; authenticated with {@code --zk-auth-file} if given. */
    ZooKeeper zooKeeper() {
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper zk;
        try {
            zk = new ZooKeeper(zkConnect, Math.max(timeoutMillis, 4000), e -> {
                if (e.getState() == Watcher.Event.KeeperState.SyncConnected) {
                    connected.countDown();
                }
            });
        } catch (IOException | IllegalArgumentException e) {
            throw new CliException("cannot use ZooKeeper address '" + zkConnect + "' (--zk): " + e.getMessage(),
                    CliException.USAGE);
        }
        try {
            if (!connected.await(timeoutMillis, TimeUnit.MILLISECONDS)) {
                zk.close();
                throw new CliException("ZooKeeper at " + zkConnect + " did not answer within " + timeoutMillis
                        + " ms: check --zk (the oracles' journal.zk.connect) and that ZooKeeper runs");
            }
            if (zkAuthFile != null) {
                zk.addAuthInfo(DigestCredentials.SCHEME,
                        DigestCredentials.read(zkAuthFile, "--zk-auth-file").authBytes());
            }
            return zk;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CliException("interrupted while connecting to ZooKeeper");
        }
    }

    /** The leader znode's record, or null when there is none (no oracle leads). */
    LeaderRecord leader(ZooKeeper zk) throws InterruptedException {
        try {
            return LeaderRecord.decode(zk.getData(leaderZnode, false, null));
        } catch (KeeperException.NoNodeException e) {
            return null;
        } catch (KeeperException.NoAuthException e) {
            throw new CliException("ZooKeeper refuses to let this CLI read " + leaderZnode + " (an ACL): give"
                    + " --zk-auth-file=FILE with a digest identity the oracles' journal.zk.acl.readers lists");
        } catch (KeeperException e) {
            throw new CliException("cannot read the leader znode " + leaderZnode + " in ZooKeeper " + zkConnect + ": "
                    + e.getMessage());
        } catch (IllegalArgumentException e) {
            throw new CliException("the znode " + leaderZnode + " is not an oracle's leader znode (" + e.getMessage()
                    + "): check --leader-znode");
        }
    }

    /**
     * The oracle to talk to: {@code --oracle}, or the leader in ZooKeeper.
     *
     * @throws CliException when no oracle leads
     */
    String[] oracleHostAndPort() {
        if (hasText(oracleAddress)) {
            return splitAddress(oracleAddress);
        }
        try (ZooKeeper zk = zooKeeper()) {
            LeaderRecord leader = leader(zk);
            if (leader == null) {
                throw new CliException(noLeader());
            }
            return new String[] {leader.host(), Integer.toString(leader.port())};
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new CliException("interrupted while reading the leader znode");
        }
    }

    /** Why no leader was found, and what to check. */
    String noLeader() {
        return "no oracle leads: the leader znode " + leaderZnode + " does not exist in ZooKeeper " + zkConnect
                + " (no oracle of this group serves: start one with bin/so-server, or check --leader-znode against"
                + " the oracles' journal.leader.znode)";
    }

    /** Opens an admin connection to the oracle (the leader, or {@code --oracle}). */
    AdminConnection adminConnection(String command) {
        byte[] secret = adminSecret(command);
        requireOracle(command);
        String[] hostPort = oracleHostAndPort();
        return AdminConnection.open(hostPort[0], Integer.parseInt(hostPort[1]), tls(), secret, timeoutMillis);
    }

    static String[] splitAddress(String address) {
        int colon = address.lastIndexOf(':');
        if (colon <= 0 || colon == address.length() - 1) {
            throw new CliException("'" + address + "' is not host:port (--oracle)", CliException.USAGE);
        }
        try {
            Integer.parseInt(address.substring(colon + 1).trim());
        } catch (NumberFormatException e) {
            throw new CliException("'" + address + "' has no port number (--oracle=host:port)", CliException.USAGE);
        }
        return new String[] {address.substring(0, colon).trim(), address.substring(colon + 1).trim()};
    }

    private static boolean hasText(String s) {
        return s != null && !s.isBlank();
    }
}
