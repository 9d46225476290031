package io.sibyl.client.oracle;

import io.netty.handler.ssl.SslContext;
import io.sibyl.protocol.Arguments;
import io.sibyl.protocol.TlsSettings;

import java.security.SecureRandom;

/**
 * Who a client is to the oracle and how its connections are secured: an identity token its connections share (so
 * that after reconnecting it may still abort, and report the clean-up of, transactions it began on a lost
 * connection), optionally the admin secret, which the sweeper needs to report the clean-up of other clients'
 * transactions and of aborted ranges, and optionally TLS (with a client certificate for mutual TLS).
 */
public final class OracleCredentials {
    private static final SecureRandom RANDOM = new SecureRandom();

    private final long identityToken;
    private final byte[] adminSecret;
    private final byte[] clientSecret;
    private final TlsSettings tlsSettings;
    /** Built once from {@link #tlsSettings}: every connection of this client shares it. */
    private final SslContext tls;

    private OracleCredentials(long identityToken, byte[] adminSecret, byte[] clientSecret, TlsSettings tlsSettings) {
        this.identityToken = identityToken;
        this.adminSecret = adminSecret;
        this.clientSecret = clientSecret;
        this.tlsSettings = tlsSettings;
        this.tls = tlsSettings.enabled() ? tlsSettings.clientContext() : null;
    }

    /** A new client identity (random, unguessable) without the admin role. */
    public static OracleCredentials newClient() {
        return new OracleCredentials(randomToken(), null, null, TlsSettings.disabled("sibyl.client.tls."));
    }

    /** A new client identity that proves {@code adminSecret} (the oracle's {@code admin.secret.file}) on connecting. */
    public static OracleCredentials newAdmin(byte[] adminSecret) {
        Arguments.required(adminSecret, "admin secret", "pass the oracle's admin secret, e.g."
                + " SecretProof.readSecret(path, \"sibyl.client.admin.secret.file\")");
        if (adminSecret.length == 0) {
            throw new IllegalArgumentException("an admin secret is required");
        }
        return new OracleCredentials(randomToken(), adminSecret.clone(), null,
                TlsSettings.disabled("sibyl.client.tls."));
    }

    /**
     * The same identity (and admin secret), connecting with {@code settings}' TLS.
     *
     * @throws IllegalArgumentException naming the setting when a store cannot be read
     */
    public OracleCredentials withTls(TlsSettings settings) {
        Arguments.required(settings, "TLS settings", "pass TlsSettings.disabled(\"sibyl.client.tls.\") for"
                + " plaintext");
        return new OracleCredentials(identityToken, adminSecret, clientSecret, settings);
    }

    /** The same client, proving {@code secret} (the oracle's {@code client.secret.file}) on every connection. */
    public OracleCredentials withClientSecret(byte[] secret) {
        Arguments.required(secret, "client secret", "pass the oracle's client secret, e.g."
                + " SecretProof.readSecret(path, \"sibyl.client.secret.file\")");
        return new OracleCredentials(identityToken, adminSecret, secret.clone(), tlsSettings);
    }

    byte[] clientSecret() {
        return clientSecret;
    }

    /** The TLS context of this client's connections, or null for plaintext. */
    SslContext tls() {
        return tls;
    }

    /** The TLS settings (for messages, and for bin/sibyl's own connection to the oracle). */
    public TlsSettings tlsSettings() {
        return tlsSettings;
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
