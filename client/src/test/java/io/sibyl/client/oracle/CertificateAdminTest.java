package io.sibyl.client.oracle;

import io.sibyl.oracle.IdentitySettings;
import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import io.sibyl.oracle.tls.TestCertificates;
import io.sibyl.protocol.SelfSignedTls;
import org.junit.jupiter.api.Test;

import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A client whose certificate the oracle's admin.identities names learns from the HELLO that it has the admin role,
 * without an admin secret (so the sweeper starts with a certificate alone); a client of another certificate does not.
 */
class CertificateAdminTest {

    @Test
    void theHelloTellsACertificateAdminItsRole() throws Exception {
        SelfSignedTls certs = TestCertificates.get();
        OracleConfig config = OracleConfig.defaults().withPort(0).withCapacities(1 << 12, 1 << 10, 1 << 8)
                .withTls(certs.oracle())
                .withIdentities(IdentitySettings.defaults().withAdminIdentities(Set.of("sibyl-other-client")));
        try (OracleServer oracle = OracleServer.startInMemory(config);
             OracleClient admin = connect(oracle, certs, "other-client.p12");
             OracleClient client = connect(oracle, certs, "client.p12")) {
            assertTrue(admin.isAdmin(), "sibyl-other-client is in admin.identities");
            assertFalse(client.isAdmin(), "sibyl-client is not");
            long start = client.begin().get();
            admin.abort(start).get(); // the admin role's: another client's transaction
        }
    }

    private static OracleClient connect(OracleServer oracle, SelfSignedTls certs, String keyStore) throws Exception {
        // "localhost": the test certificates name it, and the client checks that the oracle's names its host.
        return OracleClient.connect("localhost", oracle.port(), 10_000,
                OracleCredentials.newClient().withTls(certs.client(keyStore)));
    }
}
