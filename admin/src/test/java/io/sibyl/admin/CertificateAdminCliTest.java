package io.sibyl.admin;

import io.sibyl.oracle.IdentitySettings;
import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import io.sibyl.oracle.tls.TestCertificates;
import io.sibyl.protocol.SelfSignedTls;
import org.junit.jupiter.api.Test;

import java.util.Map;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The CLI's admin connection takes the admin role from a client certificate the oracle's admin.identities names, with
 * no admin secret; a certificate it does not name is told what to configure.
 */
class CertificateAdminCliTest {

    @Test
    void aCertificateInAdminIdentitiesGetsTheFiguresWithoutTheSecret() throws Exception {
        SelfSignedTls certs = TestCertificates.get();
        OracleConfig config = OracleConfig.defaults().withPort(0).withCapacities(1 << 12, 1 << 10, 1 << 8)
                .withTls(certs.oracle())
                .withIdentities(IdentitySettings.defaults().withAdminIdentities(Set.of("sibyl-other-client")));
        try (OracleServer oracle = OracleServer.startInMemory(config)) {
            // "localhost": the test certificates name it, and the client checks that the oracle's names its host.
            try (AdminConnection admin = AdminConnection.open("localhost", oracle.port(),
                    certs.client("other-client.p12"), null, 10_000)) {
                Map<String, Long> figures = admin.status();
                assertTrue(figures.containsKey("last.timestamp"), figures.toString());
            }
            CliException refused = assertThrows(CliException.class, () -> AdminConnection.open("localhost",
                    oracle.port(), certs.client("client.p12"), null, 10_000));
            assertTrue(refused.getMessage().contains("admin.identities"), refused.getMessage());
        }
    }
}
