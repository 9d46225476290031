package io.sibyl.client.oracle;

import java.security.SecureRandom;

/**
 * Who a client is to the oracle: an identity token its connections share (so that after reconnecting it may still
 * abort, and report the clean-up of, transactions it began on a lost connection), and optionally the admin secret,
 * which the sweeper needs to report the clean-up of other clients' transactions and of aborted ranges.
 */
public final class OracleCredentials {
    private static final SecureRandom RANDOM = new SecureRandom();

    private final long identityToken;
    private final byte[] adminSecret;

    private OracleCredentials(long identityToken, byte[] adminSecret) {
        this.identityToken = identityToken;
        this.adminSecret = adminSecret;
    }

    /** A new client identity (random, unguessable) without the admin role. */
    public static OracleCredentials newClient() {
        return new OracleCredentials(randomToken(), null);
    }

    /** A new client identity that proves {@code adminSecret} (the oracle's {@code admin.secret.file}) on connecting. */
    public static OracleCredentials newAdmin(byte[] adminSecret) {
        if (adminSecret == null || adminSecret.length == 0) {
            throw new IllegalArgumentException("an admin secret is required");
        }
        return new OracleCredentials(randomToken(), adminSecret.clone());
    }

    /** The token sent in every handshake of this client. */
    public long identityToken() {
        return identityToken;
    }

    /** True if connections authenticate as admin. */
    public boolean isAdmin() {
        return adminSecret != null;
    }

    byte[] adminSecret() {
        return adminSecret;
    }

    private static long randomToken() {
        long v;
        do {
            v = RANDOM.nextLong();
        } while (v == 0 || v == Long.MIN_VALUE); // reserved by the oracle: no client, and its maps' empty value
        return v;
    }
}
