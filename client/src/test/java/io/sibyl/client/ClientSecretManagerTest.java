package io.sibyl.client;

import io.sibyl.client.oracle.OracleException;
import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import org.apache.hadoop.hbase.TableName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;

import static io.sibyl.client.TestSupport.get;
import static io.sibyl.client.TestSupport.put;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A TransactionManager against an oracle that requires the client secret: with {@code sibyl.client.secret.file} it
 * commits and reads; without it, it fails at once naming the setting (not after the failover timeout).
 */
@ExtendWith(MiniCluster.class)
class ClientSecretManagerTest {

    @Test
    void withTheSecretAClientCommitsAndWithoutItItIsToldWhatToSet() throws Exception {
        MiniCluster c = MiniCluster.get();
        Path secret = Files.createTempFile("sibyl-client", ".secret");
        Files.writeString(secret, "client-secret-of-this-test-0123456789\n");
        TableName name = c.createTable("client_secret", "cf");
        try (OracleServer oracle = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(1 << 12, 1 << 10, 1 << 8).withClientSecretFile(secret.toString()))) {
            String address = "127.0.0.1:" + oracle.port();
            try (TransactionManager tm = c.manager(Map.of(TransactionManager.ORACLE_ADDRESS, address,
                    TransactionManager.CLIENT_SECRET_FILE, secret.toString()));
                 TTable t = new TTable(tm.getConnection(), name)) {
                Transaction tx = tm.begin();
                put(t, tx, "row", "authenticated");
                tm.commit(tx);
                Transaction reader = tm.begin();
                assertEquals("authenticated", get(t, reader, "row"));
                tm.commit(reader);
            }
            long t0 = System.nanoTime();
            OracleException e = assertThrows(OracleException.class,
                    () -> c.manager(Map.of(TransactionManager.ORACLE_ADDRESS, address)).close());
            assertTrue(e.getMessage().contains("sibyl.client.secret.file"), e.getMessage());
            assertTrue(System.nanoTime() - t0 < 20_000_000_000L, "at once, not after the failover timeout");
        } finally {
            Files.deleteIfExists(secret);
        }
    }
}
