package io.sibyl.client;

import io.sibyl.client.oracle.FixedOracleAddress;
import io.sibyl.client.oracle.OracleLocator;
import io.sibyl.client.oracle.ZooKeeperOracleLocator;
import io.sibyl.protocol.DigestCredentials;
import org.apache.hadoop.conf.Configuration;

import java.io.IOException;
import java.nio.file.Path;

import static io.sibyl.client.TransactionManager.DEFAULT_LEADER_ZNODE;
import static io.sibyl.client.TransactionManager.ORACLE_ADDRESS;
import static io.sibyl.client.TransactionManager.ORACLE_LEADER_ZNODE;
import static io.sibyl.client.TransactionManager.ORACLE_ZK_CONNECT;

/** Reads from a configuration where the oracle is: a fixed address, or an HA group's leader znode in ZooKeeper. */
final class OracleLocators {
    private OracleLocators() {
    }

    /** See {@link TransactionManager#oracleLocator}. */
    static OracleLocator fromConfiguration(Configuration conf) throws IOException {
        String zk = conf.get(ORACLE_ZK_CONNECT);
        String a = conf.get(ORACLE_ADDRESS);
        boolean hasZk = zk != null && !zk.isBlank();
        boolean hasAddress = a != null && !a.isBlank();
        if (hasZk && hasAddress) {
            throw new IllegalArgumentException("both " + ORACLE_ZK_CONNECT + " and " + ORACLE_ADDRESS + " are set:"
                    + " set " + ORACLE_ZK_CONNECT + " for an HA group of oracles, or " + ORACLE_ADDRESS
                    + " for a single oracle, not both");
        }
        if (hasZk) {
            String znode = conf.get(ORACLE_LEADER_ZNODE, DEFAULT_LEADER_ZNODE);
            if (!znode.startsWith("/") || znode.endsWith("/")) {
                throw new IllegalArgumentException(ORACLE_LEADER_ZNODE + "=" + znode + " is not an absolute ZooKeeper"
                        + " path: give the oracles' journal.leader.znode (default " + DEFAULT_LEADER_ZNODE + ")");
            }
            int session = ClientSettings.ZK_SESSION_TIMEOUT.read(conf::getTrimmed);
            ClientSettings.ZK_SESSION_TIMEOUT.require(session);
            String authFile = conf.getTrimmed(TransactionManager.ORACLE_ZK_AUTH_FILE, "");
            DigestCredentials credentials = authFile.isEmpty() ? null
                    : DigestCredentials.read(Path.of(authFile), TransactionManager.ORACLE_ZK_AUTH_FILE);
            try {
                return new ZooKeeperOracleLocator(zk.trim(), znode, session, credentials);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(ORACLE_ZK_CONNECT + "=" + zk.trim() + ": " + e.getMessage(), e);
            }
        }
        if (!hasAddress) {
            throw new IllegalArgumentException(ORACLE_ADDRESS + " is not set: give the status oracle's host:port"
                    + " (so-server prints it as READY port=N), or " + ORACLE_ZK_CONNECT + " for an HA group of"
                    + " oracles, or pass the address to TransactionManager.create");
        }
        int colon = a.lastIndexOf(':');
        if (colon <= 0 || colon == a.length() - 1) {
            throw new IllegalArgumentException(ORACLE_ADDRESS + "=" + a + " is not host:port");
        }
        String port = a.substring(colon + 1).trim();
        int p;
        try {
            p = Integer.parseInt(port);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(ORACLE_ADDRESS + "=" + a + " is not host:port");
        }
        if (p < 1 || p > 65535) {
            throw new IllegalArgumentException(ORACLE_ADDRESS + "=" + a + ": the port must be 1 to 65535 (so-server"
                    + " prints its port as READY port=N)");
        }
        return new FixedOracleAddress(a.substring(0, colon).trim(), p);
    }
}
