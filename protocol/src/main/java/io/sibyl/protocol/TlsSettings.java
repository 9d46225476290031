package io.sibyl.protocol;

import io.netty.handler.ssl.ClientAuth;
import io.netty.handler.ssl.OpenSsl;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslContextBuilder;
import io.netty.handler.ssl.SslProvider;

import javax.net.ssl.KeyManagerFactory;
import javax.net.ssl.SSLContext;
import javax.net.ssl.TrustManagerFactory;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.KeyStore;
import java.util.List;

/**
 * TLS on the oracle's port, as one side sets it up: its key store (its certificate and private key, PKCS12 or JKS),
 * the trust store that decides which peers it accepts, the protocols, and the prefix of the settings that gave them
 * (so errors name the setting to fix). Passwords are read from files, never from the command line. The same shape
 * serves the oracle ({@code tls.*}) and its clients ({@code sibyl.client.tls.*}).
 *
 * @param enabled                whether connections use TLS at all
 * @param keyStore               this side's certificate and key (required on the oracle; on a client, for mutual TLS)
 * @param keyStorePasswordFile   a file holding the key store's password (empty: no password)
 * @param trustStore             certificates of the peers (or their CAs) this side accepts; empty: on the oracle, no
 *                               client certificate is asked for; on a client, the JDK's default CAs
 * @param trustStorePasswordFile a file holding the trust store's password (empty: no password)
 * @param protocols              TLS versions allowed, e.g. TLSv1.3
 * @param prefix                 the settings' prefix, e.g. {@code tls.} or {@code sibyl.client.tls.}
 */
public record TlsSettings(boolean enabled, String keyStore, String keyStorePasswordFile, String trustStore,
                          String trustStorePasswordFile, List<String> protocols, String prefix) {

    /** TLS versions allowed unless set: 1.3 only (what the JDK offers by default since 11, and Omid's newest). */
    public static final List<String> DEFAULT_PROTOCOLS = List.of("TLSv1.3");

    public TlsSettings {
        Arguments.required(prefix, "settings prefix", "pass \"tls.\" (the oracle's) or \"sibyl.client.tls.\" (a"
                + " client's)");
        Arguments.required(keyStore, prefix + "key.store", "pass \"\" for none");
        Arguments.required(keyStorePasswordFile, prefix + "key.store.password.file", "pass \"\" for none");
        Arguments.required(trustStore, prefix + "trust.store", "pass \"\" for none");
        Arguments.required(trustStorePasswordFile, prefix + "trust.store.password.file", "pass \"\" for none");
        Arguments.required(protocols, prefix + "protocols", "pass TlsSettings.DEFAULT_PROTOCOLS");
        protocols = List.copyOf(protocols);
        for (String p : protocols) {
            if (!p.equals("TLSv1.3") && !p.equals("TLSv1.2")) {
                throw new IllegalArgumentException("setting '" + prefix + "protocols' allows TLSv1.3 and TLSv1.2,"
                        + " got '" + p + "'");
            }
        }
        if (enabled && protocols.isEmpty()) {
            throw new IllegalArgumentException("setting '" + prefix + "protocols' names no TLS version");
        }
    }

    /** No TLS. */
    public static TlsSettings disabled(String prefix) {
        return new TlsSettings(false, "", "", "", "", DEFAULT_PROTOCOLS, prefix);
    }

    /**
     * The oracle's server context: its key store, and (with a trust store) client certificates required and checked
     * against it: mutual TLS.
     *
     * @throws IllegalArgumentException naming the setting when a store cannot be read
     */
    public SslContext serverContext() {
        if (keyStore.isEmpty()) {
            throw new IllegalArgumentException(prefix + "key.store is required with " + prefix.substring(0,
                    prefix.length() - 1) + "=true: the oracle's certificate and private key (PKCS12 or JKS)");
        }
        try {
            SslContextBuilder b = SslContextBuilder.forServer(keyManagers()).sslProvider(provider())
                    .protocols(protocols);
            if (!trustStore.isEmpty()) {
                b.trustManager(trustManagers()).clientAuth(ClientAuth.REQUIRE);
            }
            return b.build();
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot set up TLS from " + prefix + "*: " + e.getMessage(), e);
        }
    }

    /** A client's context: the trust store (or the JDK's CAs), and its own key store for mutual TLS if set. */
    public SslContext clientContext() {
        try {
            SslContextBuilder b = SslContextBuilder.forClient().sslProvider(provider()).protocols(protocols);
            if (!trustStore.isEmpty()) {
                b.trustManager(trustManagers());
            }
            if (!keyStore.isEmpty()) {
                b.keyManager(keyManagers());
            }
            return b.build();
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot set up TLS from " + prefix + "*: " + e.getMessage(), e);
        }
    }

    /**
     * OpenSSL (BoringSSL through netty-tcnative) when it is on the classpath: measured about 1.6x the throughput of
     * the JDK's engine under so-bench; the JDK's otherwise.
     */
    public static SslProvider provider() {
        return OpenSsl.isAvailable() ? SslProvider.OPENSSL : SslProvider.JDK;
    }

    /** The JDK context of a client on plain sockets (the hot standby's watch of its leader). */
    public SSLContext jdkClientContext() {
        try {
            SSLContext c = SSLContext.getInstance("TLS");
            c.init(keyStore.isEmpty() ? null : keyManagers().getKeyManagers(),
                    trustStore.isEmpty() ? null : trustManagers().getTrustManagers(), null);
            return c;
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot set up TLS from " + prefix + "*: " + e, e);
        }
    }

    /** Newest modification time of the stores and password files: a change means the context should be rebuilt. */
    public long filesModifiedMillis() {
        long newest = 0;
        for (String f : List.of(keyStore, keyStorePasswordFile, trustStore, trustStorePasswordFile)) {
            if (!f.isEmpty()) {
                try {
                    newest = Math.max(newest, Files.getLastModifiedTime(Path.of(f)).toMillis());
                } catch (IOException e) {
                    // Missing for a moment while an operator replaces it: the rebuild reports it if it stays so.
                }
            }
        }
        return newest;
    }

    private KeyManagerFactory keyManagers() {
        char[] password = password(keyStorePasswordFile, "key.store.password.file");
        try {
            KeyManagerFactory f = KeyManagerFactory.getInstance(KeyManagerFactory.getDefaultAlgorithm());
            f.init(load(keyStore, password, "key.store"), password);
            return f;
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("the key store " + keyStore + " (" + prefix + "key.store) cannot be"
                    + " used: " + e.getMessage() + "; check " + prefix + "key.store.password.file", e);
        }
    }

    private TrustManagerFactory trustManagers() {
        char[] password = password(trustStorePasswordFile, "trust.store.password.file");
        try {
            TrustManagerFactory f = TrustManagerFactory.getInstance(TrustManagerFactory.getDefaultAlgorithm());
            f.init(load(trustStore, password, "trust.store"));
            return f;
        } catch (GeneralSecurityException e) {
            throw new IllegalArgumentException("the trust store " + trustStore + " (" + prefix + "trust.store)"
                    + " cannot be used: " + e.getMessage(), e);
        }
    }

    private KeyStore load(String file, char[] password, String key) {
        try (InputStream in = Files.newInputStream(Path.of(file))) {
            KeyStore ks = KeyStore.getInstance("PKCS12"); // reads JKS too
            ks.load(in, password);
            return ks;
        } catch (IOException | GeneralSecurityException e) {
            throw new IllegalArgumentException("cannot read " + file + " (" + prefix + key + "): " + e.getMessage()
                    + "; it must be a PKCS12 or JKS store whose password is in " + prefix + key
                    + ".password.file", e);
        }
    }

    private char[] password(String file, String key) {
        if (file.isEmpty()) {
            return new char[0];
        }
        try {
            return new String(Files.readAllBytes(Path.of(file)), StandardCharsets.UTF_8).strip().toCharArray();
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read the password file " + file + " (" + prefix + key + "): "
                    + e, e);
        }
    }
}
