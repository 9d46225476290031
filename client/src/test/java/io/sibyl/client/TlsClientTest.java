package io.sibyl.client;

import io.sibyl.client.oracle.OracleException;
import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import io.sibyl.oracle.tls.TestCertificates;
import io.sibyl.protocol.SelfSignedTls;
import io.sibyl.protocol.Wire;
import org.apache.hadoop.hbase.TableName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.HashMap;
import java.util.Map;

import static io.sibyl.client.TestSupport.get;
import static io.sibyl.client.TestSupport.put;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Transactions through an oracle that requires TLS and client certificates, set up with the client's
 * {@code sibyl.client.tls.*} settings; a misconfigured client fails at once with a message naming what to set,
 * instead of waiting out the failover timeout.
 */
@ExtendWith(MiniCluster.class)
class TlsClientTest {

    private static Map<String, String> tlsSettings(SelfSignedTls certs, int port, String keyStore) {
        Map<String, String> s = new HashMap<>();
        s.put(TransactionManager.ORACLE_ADDRESS, "127.0.0.1:" + port);
        s.put(TransactionManager.TLS, "true");
        s.put(TransactionManager.TLS + ".trust.store", certs.path("client-trusts.p12"));
        s.put(TransactionManager.TLS + ".trust.store.password.file", certs.path("password"));
        if (!keyStore.isEmpty()) {
            s.put(TransactionManager.TLS + ".key.store", certs.path(keyStore));
            s.put(TransactionManager.TLS + ".key.store.password.file", certs.path("password"));
        }
        return s;
    }

    @Test
    void aClientWithItsCertificateCommitsAndReadsThroughATlsOracle() throws Exception {
        MiniCluster c = MiniCluster.get();
        SelfSignedTls certs = TestCertificates.get();
        TableName name = c.createTable("tls", "cf");
        try (OracleServer oracle = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(1 << 12, 1 << 10, 1 << 8).withTls(certs.oracle()));
             TransactionManager tm = c.manager(tlsSettings(certs, oracle.port(), "client.p12"));
             TTable t = new TTable(tm.getConnection(), name)) {
            Transaction tx = tm.begin();
            put(t, tx, "row", "over tls");
            tm.commit(tx);
            Transaction reader = tm.begin();
            assertEquals("over tls", get(t, reader, "row"));
            tm.commit(reader);
        }
    }

    @Test
    void aPlaintextClientOrOneWithoutACertificateFailsAtOnceSayingWhatToSet() throws Exception {
        MiniCluster c = MiniCluster.get();
        SelfSignedTls certs = TestCertificates.get();
        try (OracleServer oracle = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(1 << 12, 1 << 10, 1 << 8).withTls(certs.oracle()))) {
            long t0 = System.nanoTime();
            OracleException plaintext = assertThrows(OracleException.class, () -> c.manager(Map.of(
                    TransactionManager.ORACLE_ADDRESS, "127.0.0.1:" + oracle.port())).close());
            assertEquals(Wire.ERR_FORBIDDEN, plaintext.code(), plaintext.getMessage());
            assertTrue(plaintext.getMessage().contains("sibyl.client.tls=true"), plaintext.getMessage());
            OracleException noCertificate = assertThrows(OracleException.class,
                    () -> c.manager(tlsSettings(certs, oracle.port(), "")).close());
            assertTrue(noCertificate.getMessage().contains("sibyl.client.tls.key.store"), noCertificate.getMessage());
            OracleException stranger = assertThrows(OracleException.class,
                    () -> c.manager(tlsSettings(certs, oracle.port(), "stranger.p12")).close());
            assertTrue(stranger.getMessage().contains("TLS"), stranger.getMessage());
            assertTrue(System.nanoTime() - t0 < 25_000_000_000L, "failed at once, not after the failover timeout");
        }
    }

    @Test
    void aTlsClientAgainstAPlaintextOracleIsToldSo() throws Exception {
        MiniCluster c = MiniCluster.get();
        SelfSignedTls certs = TestCertificates.get();
        try (OracleServer oracle = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(1 << 12, 1 << 10, 1 << 8))) {
            OracleException e = assertThrows(OracleException.class,
                    () -> c.manager(tlsSettings(certs, oracle.port(), "client.p12")).close());
            assertTrue(e.getMessage().contains("TLS"), e.getMessage());
        }
    }
}
