package io.sibyl.client;

import io.sibyl.client.oracle.OracleClient;
import io.sibyl.client.oracle.OracleCredentials;
import io.sibyl.client.oracle.ZooKeeperOracleLocator;
import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import io.sibyl.protocol.TlsSettings;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.client.Connection;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.function.Executable;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Null arguments to the public client API outside TTable (the manager's factories, credentials, the oracle locator and
 * client, TLS settings) are refused at once with a message that names the argument and what to pass, like the rest of
 * the API, rather than the JDK's bare NullPointerException from somewhere inside.
 */
class NullArgumentsTest {

    @Test
    void theManagersFactoriesNameTheNullArgument() {
        Configuration conf = new Configuration(false);
        refused("configuration is null: pass the HBase Configuration", () -> TransactionManager.create((Configuration) null));
        refused("configuration is null", () -> TransactionManager.create((Configuration) null, "localhost", 1));
        refused("oracle host is null: pass the oracle's host name", () -> TransactionManager.create(conf, null, 1));
        refused("connection is null: pass an open HBase Connection", () -> TransactionManager.create((Connection) null));
        refused("connection is null", () -> TransactionManager.create((Connection) null, "localhost", 1));
        refused("configuration is null", () -> TransactionManager.oracleCredentials(null));
        refused("configuration is null", () -> TransactionManager.oracleLocator(null));
    }

    @Test
    void credentialsLocatorsAndTlsSettingsNameTheNullArgument() {
        refused("admin secret is null: pass the oracle's admin secret", () -> OracleCredentials.newAdmin(null));
        refused("TLS settings is null: pass TlsSettings.disabled", () -> OracleCredentials.newClient().withTls(null));
        refused("client secret is null", () -> OracleCredentials.newClient().withClientSecret(null));
        refused("ZooKeeper connect string is null", () -> new ZooKeeperOracleLocator(null, "/sibyl/oracle/leader", 1000));
        refused("leader znode is null", () -> new ZooKeeperOracleLocator("localhost:2181", null, 1000));
        refused("sibyl.client.tls.trust.store is null: pass \"\" for none", () -> new TlsSettings(true, "", "", null,
                "", TlsSettings.DEFAULT_PROTOCOLS, "sibyl.client.tls."));
        refused("oracle host is null", () -> OracleClient.connect(null, 1));
        refused("credentials is null: pass OracleCredentials.newClient()",
                () -> OracleClient.connect("localhost", 1, 1000, null));
    }

    @Test
    void theOracleClientsRequestsNameTheNullArgument() throws Exception {
        try (OracleServer oracle = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(1 << 12, 1 << 10, 1 << 8));
             OracleClient client = OracleClient.connect("127.0.0.1", oracle.port())) {
            long start = client.begin().get();
            refused("row ids is null: pass the transaction's row ids", () -> client.commit(start, null));
            refused("reads is null", () -> client.commit(start, new long[] {1}, null, new long[0]));
            refused("granules written is null", () -> client.commit(start, new long[] {1}, new long[0], null));
            refused("granules is null", () -> client.ticket(new long[] {1}, null));
            refused("aborted range is null", () -> client.rangeCleanedUp(null));
            assertTrue(client.commit(start, new long[] {1}).get() > start, "the refusals left the transaction as it was");
        }
    }

    private static void refused(String message, Executable call) {
        NullPointerException e = assertThrows(NullPointerException.class, call);
        assertTrue(e.getMessage() != null && e.getMessage().startsWith(message), e.getMessage());
    }
}
