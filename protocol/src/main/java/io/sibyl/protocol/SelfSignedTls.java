package io.sibyl.protocol;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * Self-signed key and trust stores for a TLS set-up on one machine (tests, benchmarks, the demo), made with the
 * JDK's own keytool so that nothing else need be installed: certificates for the oracle (valid for 127.0.0.1 and
 * localhost), a client, another client (a second identity: {@code other-client.p12}), and a stranger nobody trusts;
 * the oracle trusts both clients' certificates and its own (a standby's watch), the clients the oracle's. Production uses its CA's certificates instead (docs/operations.md).
 * {@code java -cp ... io.sibyl.protocol.SelfSignedTls DIR} makes them in DIR.
 */
public final class SelfSignedTls {
    /** Directory holding the stores and the password file. */
    public final Path dir;

    private SelfSignedTls(Path dir) {
        this.dir = dir;
    }

    /** Makes the stores in {@code args[0]}. */
    public static void main(String[] args) throws Exception {
        if (args.length != 1) {
            System.err.println("usage: SelfSignedTls DIR");
            System.exit(2);
        }
        create(Path.of(args[0]));
        System.out.println("TLS stores in " + args[0]);
    }

    /** The stores {@link #create} made in {@code dir} earlier. */
    public static SelfSignedTls existing(Path dir) {
        if (!Files.isRegularFile(dir.resolve("client-trusts.p12"))) {
            throw new IllegalArgumentException(dir + " holds no stores made by SelfSignedTls");
        }
        return new SelfSignedTls(dir);
    }

    /** Makes the stores in {@code dir} (created if missing). */
    public static SelfSignedTls create(Path dir) throws IOException, InterruptedException {
        Files.createDirectories(dir);
        Files.writeString(dir.resolve("password"), "sibyl-store-password\n");
        for (String who : List.of("oracle", "client", "other-client", "stranger")) {
            keytool("-genkeypair", "-alias", who, "-keyalg", "EC", "-groupname", "secp256r1",
                    "-dname", "CN=sibyl-" + who, "-validity", "30",
                    "-ext", "SAN=ip:127.0.0.1,dns:localhost",
                    "-keystore", dir.resolve(who + ".p12").toString(), "-storetype", "PKCS12",
                    "-storepass", "sibyl-store-password");
            keytool("-exportcert", "-alias", who, "-rfc", "-file", dir.resolve(who + ".pem").toString(),
                    "-keystore", dir.resolve(who + ".p12").toString(), "-storepass", "sibyl-store-password");
        }
        trust(dir, "oracle-trusts.p12", "client");
        trust(dir, "oracle-trusts.p12", "other-client");
        trust(dir, "oracle-trusts.p12", "oracle"); // the oracles of an HA pair connect to each other
        trust(dir, "client-trusts.p12", "oracle");
        return new SelfSignedTls(dir);
    }

    /** The oracle's flags: TLS with its certificate, requiring client certificates signed as the client's. */
    public List<String> oracleFlags() {
        return List.of("--tls=true", "--tls.key.store=" + path("oracle.p12"),
                "--tls.key.store.password.file=" + path("password"), "--tls.trust.store=" + path("oracle-trusts.p12"),
                "--tls.trust.store.password.file=" + path("password"));
    }

    /** The oracle's settings as {@link #oracleFlags} gives them. */
    public TlsSettings oracle() {
        return new TlsSettings(true, path("oracle.p12"), path("password"), path("oracle-trusts.p12"),
                path("password"), TlsSettings.DEFAULT_PROTOCOLS, "tls.");
    }

    /**
     * A client with {@code keyStore} ({@code client.p12}, {@code other-client.p12}, {@code stranger.p12} or "" for
     * none) trusting the oracle.
     */
    public TlsSettings client(String keyStore) {
        return new TlsSettings(true, keyStore.isEmpty() ? "" : path(keyStore), keyStore.isEmpty() ? "" : path("password"),
                path("client-trusts.p12"), path("password"), TlsSettings.DEFAULT_PROTOCOLS, "sibyl.client.tls.");
    }

    /** Absolute path of a file in {@link #dir}. */
    public String path(String name) {
        return dir.resolve(name).toString();
    }

    private static void trust(Path dir, String store, String who) throws IOException, InterruptedException {
        keytool("-importcert", "-noprompt", "-alias", who, "-file", dir.resolve(who + ".pem").toString(),
                "-keystore", dir.resolve(store).toString(), "-storetype", "PKCS12",
                "-storepass", "sibyl-store-password");
    }

    private static void keytool(String... args) throws IOException, InterruptedException {
        List<String> cmd = new ArrayList<>();
        cmd.add(Path.of(System.getProperty("java.home"), "bin", "keytool").toString());
        cmd.addAll(List.of(args));
        Process p = new ProcessBuilder(cmd).redirectErrorStream(true).start();
        String out = new String(p.getInputStream().readAllBytes());
        if (!p.waitFor(60, TimeUnit.SECONDS) || p.exitValue() != 0) {
            throw new IOException("keytool " + String.join(" ", args) + " failed: " + out);
        }
    }
}
