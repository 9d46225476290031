package io.sibyl.oracle;

import io.sibyl.oracle.OracleSurvivesRandomFramesTest.Msg;
import io.sibyl.oracle.OracleSurvivesRandomFramesTest.WireSocket;
import io.sibyl.oracle.tls.TestCertificates;
import io.sibyl.protocol.Wire;
import org.junit.jupiter.api.Test;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.KeyStore;
import java.security.cert.X509Certificate;
import java.util.Properties;
import java.util.Set;

import static io.sibyl.oracle.ConnectionDefencesTest.begin;
import static io.sibyl.oracle.ConnectionDefencesTest.reply;
import static io.sibyl.oracle.ForeignTransactionRequestsTest.request;
import static io.sibyl.oracle.IdentityLimitsTest.tlsSocket;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Identities from client certificates, on real sockets with mutual TLS: a client's token counts only together with
 * its certificate, so a client of another certificate that sends the same token is a stranger to its transactions;
 * admin.identities gives the admin role to a certificate without the admin secret, and to no other; the identity is
 * read from the field tls.identity names, and a setting that could not work is refused at start.
 */
class CertificateIdentityTest {
    private static final long TOKEN = 0x7e57_70c3_0000_0001L;

    @Test
    void aClientOfAnotherCertificateCannotActAsAClientByItsToken() throws Exception {
        try (OracleServer server = OracleServer.startInMemory(tlsConfig(IdentitySettings.defaults()));
             WireSocket owner = handshaken(server, "client.p12", TOKEN);
             WireSocket sameClient = handshaken(server, "client.p12", TOKEN);
             WireSocket impostor = handshaken(server, "other-client.p12", TOKEN)) {
            long start = begin(owner, 1).value();
            impostor.send(request(Wire.ABORT, 2, start));
            Msg refused = reply(impostor, 2);
            assertEquals(Wire.ERR_FORBIDDEN, refused.code(), "the same token under another certificate: " + refused);
            assertTrue(refused.text().contains("another client"), refused.text());
            owner.send(request(Wire.QUERY, 3, start));
            assertEquals(Wire.STATUS_RUNNING, reply(owner, 3).value(), "the impostor changed nothing");
            sameClient.send(request(Wire.ABORT, 4, start));
            assertEquals(Wire.ACK, reply(sameClient, 4).type(), "the same certificate and token are one client");
        }
    }

    @Test
    void anAdminIdentityHasTheAdminRoleWithoutTheSecretAndOthersDoNot() throws Exception {
        IdentitySettings admins = IdentitySettings.defaults().withAdminIdentities(Set.of("sibyl-other-client"));
        try (OracleServer server = OracleServer.startInMemory(tlsConfig(admins));
             WireSocket client = handshaken(server, "client.p12", TOKEN);
             WireSocket admin = handshaken(server, "other-client.p12", TOKEN + 1)) {
            long start = begin(client, 1).value();
            client.send(request(Wire.ORACLE_STATUS_QUERY, 2));
            assertEquals(Wire.ERR_FORBIDDEN, reply(client, 2).code(), "not an admin identity");
            admin.send(request(Wire.ORACLE_STATUS_QUERY, 3));
            assertEquals(Wire.ORACLE_STATUS, reply(admin, 3).type());
            admin.send(request(Wire.ABORT, 4, start));
            assertEquals(Wire.ACK, reply(admin, 4).type(), "the admin aborts any client's transaction");
        }
    }

    @Test
    void theIdentityIsReadFromTheFieldTlsIdentityNames() throws Exception {
        X509Certificate client = certificate("client.p12", "client"); // CN=sibyl-client, SAN=ip:127.0.0.1,dns:localhost
        assertEquals("sibyl-client", new CertificateIdentity(IdentitySettings.CertificateField.CN).of(client));
        assertEquals("CN=sibyl-client", new CertificateIdentity(IdentitySettings.CertificateField.DN).of(client));
        assertEquals("localhost", new CertificateIdentity(IdentitySettings.CertificateField.SAN_DNS).of(client));
        IllegalArgumentException none = assertThrows(IllegalArgumentException.class,
                () -> new CertificateIdentity(IdentitySettings.CertificateField.SAN_URI).of(client));
        assertTrue(none.getMessage().contains("tls.identity=san.uri"), none.getMessage());
    }

    @Test
    void identitySettingsThatCannotWorkAreRefusedNamingTheKey() {
        for (String[] bad : new String[][] {
                {"admin.identities", "sibyl-sweeper", "needs tls=true and tls.trust.store"},
                {"tls.identity", "email", "must be cn, dn, san.dns or san.uri"},
                {"max.running.transactions.per.identity", "-1", "max.running.transactions.per.identity"},
                {"max.connections.per.identity", "2000000", "max.connections.per.identity: must be 0"}}) {
            Properties p = new Properties();
            p.setProperty(bad[0], bad[1]);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> OracleConfig.fromProperties(p), bad[0]);
            assertTrue(e.getMessage().contains(bad[2]), e.getMessage());
        }
        Properties dn = new Properties();
        dn.setProperty("tls.identity", "dn");
        dn.setProperty("admin.identities", "CN=sweeper,O=Example; CN=ops,O=Example");
        dn.setProperty("tls", "true");
        dn.setProperty("tls.key.store", "k.p12");
        dn.setProperty("tls.trust.store", "t.p12");
        assertEquals(Set.of("CN=sweeper,O=Example", "CN=ops,O=Example"),
                OracleConfig.fromProperties(dn).identities().adminIdentities(), "a DN list is split at semicolons");
        OracleConfig d = OracleConfig.defaults();
        assertEquals(d.maxRunningTransactions() / 2, d.runningTransactionsPerIdentity(), "0: half the shared limit");
        assertEquals(d.maxConnections() / 2, d.connectionsPerIdentity());
    }

    private static OracleConfig tlsConfig(IdentitySettings identities) {
        return OracleConfig.defaults().withPort(0).withCapacities(1 << 12, 1 << 10, 1 << 8)
                .withTls(TestCertificates.get().oracle()).withIdentities(identities);
    }

    private static WireSocket handshaken(OracleServer server, String keyStore, long token) throws Exception {
        WireSocket s = tlsSocket(server, keyStore);
        s.handshakeAs(token);
        return s;
    }

    private static X509Certificate certificate(String store, String alias) throws Exception {
        Path dir = TestCertificates.get().dir;
        KeyStore ks = KeyStore.getInstance("PKCS12");
        char[] password = Files.readString(dir.resolve("password")).trim().toCharArray();
        try (InputStream in = Files.newInputStream(dir.resolve(store))) {
            ks.load(in, password);
        }
        return (X509Certificate) ks.getCertificate(alias);
    }
}
