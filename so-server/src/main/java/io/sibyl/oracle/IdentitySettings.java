package io.sibyl.oracle;

import java.util.Arrays;
import java.util.LinkedHashSet;
import java.util.Locale;
import java.util.Properties;
import java.util.Set;

import static io.sibyl.oracle.OracleSettings.ADMIN_IDENTITIES;
import static io.sibyl.oracle.OracleSettings.MAX_CONNECTIONS_PER_IDENTITY;
import static io.sibyl.oracle.OracleSettings.MAX_RUNNING_PER_IDENTITY;
import static io.sibyl.oracle.OracleSettings.TLS_IDENTITY;

/**
 * How the oracle names the client behind a connection and what one client may hold: the certificate field that names
 * a mutual-TLS client ({@code tls.identity}), the certificate identities given the admin role
 * ({@code admin.identities}), and the running transactions and connections one identity may hold
 * (docs/operations.md, Security).
 *
 * @param certificateField                  {@code tls.identity}: which part of a verified client certificate names it
 * @param adminIdentities                   {@code admin.identities}: certificate identities with the admin role
 * @param maxRunningTransactionsPerIdentity {@code max.running.transactions.per.identity}: 0 = half of
 *                                          max.running.transactions
 * @param maxConnectionsPerIdentity         {@code max.connections.per.identity}: 0 = half of max.connections
 */
public record IdentitySettings(CertificateField certificateField, Set<String> adminIdentities,
                               int maxRunningTransactionsPerIdentity, int maxConnectionsPerIdentity) {

    /** The part of a client certificate that names the client ({@code tls.identity}). */
    public enum CertificateField {
        /** The subject's common name (CN), as {@code sibyl-app1} in {@code CN=sibyl-app1,O=Example}. */
        CN("cn"),
        /** The whole subject distinguished name, as RFC 2253 writes it ({@code CN=sibyl-app1,O=Example}). */
        DN("dn"),
        /** The first DNS name among the subject alternative names. */
        SAN_DNS("san.dns"),
        /** The first URI among the subject alternative names (a SPIFFE id, say). */
        SAN_URI("san.uri");

        private final String key;

        CertificateField(String key) {
            this.key = key;
        }

        /** The setting's value that chooses this field. */
        public String key() {
            return key;
        }

        static CertificateField parse(String value) {
            String v = value.trim().toLowerCase(Locale.ROOT);
            for (CertificateField f : values()) {
                if (f.key.equals(v)) {
                    return f;
                }
            }
            throw new IllegalArgumentException("must be cn, dn, san.dns or san.uri");
        }
    }

    /**
     * Identities named by their certificates' common names; no admin identity; half the shared limits each
     * ({@link OracleSettings}' defaults).
     */
    public static IdentitySettings defaults() {
        return fromProperties(new Properties());
    }

    public IdentitySettings {
        if (certificateField == null || adminIdentities == null) {
            throw new IllegalArgumentException("tls.identity and admin.identities are required (empty: none)");
        }
        adminIdentities = Set.copyOf(adminIdentities);
        MAX_RUNNING_PER_IDENTITY.require(maxRunningTransactionsPerIdentity);
        MAX_CONNECTIONS_PER_IDENTITY.require(maxConnectionsPerIdentity);
    }

    /** The settings {@code p} gives, defaults for the keys it lacks. */
    static IdentitySettings fromProperties(Properties p) {
        CertificateField certificateField = TLS_IDENTITY.read(p);
        // A distinguished name holds commas: its list is separated by semicolons.
        String separator = certificateField == CertificateField.DN ? ";" : ",";
        return new IdentitySettings(certificateField, split(ADMIN_IDENTITIES.read(p), separator),
                MAX_RUNNING_PER_IDENTITY.read(p), MAX_CONNECTIONS_PER_IDENTITY.read(p));
    }

    /** Copy whose running transactions and connections per identity are capped at these (0: half the shared limit). */
    public IdentitySettings withLimits(int runningTransactions, int connections) {
        return new IdentitySettings(certificateField, adminIdentities, runningTransactions, connections);
    }

    /** Copy that gives the admin role to the clients whose certificates name them {@code identities}. */
    public IdentitySettings withAdminIdentities(Set<String> identities) {
        return new IdentitySettings(certificateField, identities, maxRunningTransactionsPerIdentity,
                maxConnectionsPerIdentity);
    }

    /**
     * Running transactions one identity may hold: the setting, or half of {@code maxRunning} when it is 0, so that one
     * client (all its connections together) leaves the other half to everyone else. Never more than
     * {@code maxRunning}.
     */
    int runningTransactionsPerIdentity(int maxRunning) {
        return maxRunningTransactionsPerIdentity == 0 ? Math.max(1, maxRunning / 2)
                : Math.min(maxRunningTransactionsPerIdentity, maxRunning);
    }

    /** Connections one identity may hold open: the setting, or half of {@code maxConnections} when it is 0. */
    int connectionsPerIdentity(int maxConnections) {
        return maxConnectionsPerIdentity == 0 ? Math.max(1, maxConnections / 2)
                : Math.min(maxConnectionsPerIdentity, maxConnections);
    }

    /** {@code admin.identities} as the setting writes it. */
    String adminIdentitiesSetting() {
        return String.join(certificateField == CertificateField.DN ? ";" : ",", adminIdentities);
    }

    private static Set<String> split(String list, String separator) {
        Set<String> s = new LinkedHashSet<>();
        Arrays.stream(list.split(separator)).map(String::trim).filter(x -> !x.isEmpty()).forEach(s::add);
        return s;
    }
}
