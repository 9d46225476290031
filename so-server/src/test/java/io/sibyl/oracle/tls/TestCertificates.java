package io.sibyl.oracle.tls;

import io.sibyl.protocol.SelfSignedTls;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** The self-signed TLS stores of tests ({@link SelfSignedTls}), made once per JVM in a temporary directory. */
public final class TestCertificates {
    private static SelfSignedTls made;

    private TestCertificates() {
    }

    /** The stores, made on first use. */
    public static synchronized SelfSignedTls get() {
        if (made == null) {
            try {
                Path dir = Files.createTempDirectory("sibyl-tls");
                made = SelfSignedTls.create(dir);
                dir.toFile().deleteOnExit();
                for (File f : dir.toFile().listFiles()) {
                    f.deleteOnExit();
                }
            } catch (IOException | InterruptedException e) {
                throw new IllegalStateException("cannot make test certificates with keytool", e);
            }
        }
        return made;
    }
}
