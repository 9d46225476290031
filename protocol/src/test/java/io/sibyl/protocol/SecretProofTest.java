package io.sibyl.protocol;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The secret files and the per-connection, per-role proof of them. */
class SecretProofTest {
    @TempDir
    Path dir;

    @Test
    void aProofHoldsForItsOwnNonceAndSecretOnly() {
        byte[] secret = "0123456789abcdef0123".getBytes(StandardCharsets.UTF_8);
        byte[] nonce = new byte[Wire.NONCE_BYTES];
        nonce[3] = 7;
        byte[] proof = SecretProof.compute(secret, Wire.AUTH_ADMIN, nonce);
        assertEquals(Wire.PROOF_BYTES, proof.length);
        assertTrue(SecretProof.verify(secret, Wire.AUTH_ADMIN, nonce, proof));
        assertFalse(SecretProof.verify(secret, Wire.AUTH_CLIENT, nonce, proof), "a proof is for one role");
        byte[] otherNonce = nonce.clone();
        otherNonce[0] = 1;
        assertFalse(SecretProof.verify(secret, Wire.AUTH_ADMIN, otherNonce, proof),
                "a recorded proof opens no other connection");
        byte[] other = "0123456789abcdef0124".getBytes(StandardCharsets.UTF_8);
        assertFalse(SecretProof.verify(other, Wire.AUTH_ADMIN, nonce, proof));
        assertFalse(SecretProof.verify(secret, Wire.AUTH_ADMIN, nonce, new byte[5]));
    }

    @Test
    void theSecretFileLosesItsLineBreakAndMustNotBeShort() throws Exception {
        Path file = dir.resolve("admin.secret");
        Files.writeString(file, "  0123456789abcdef0123\n");
        assertArrayEquals("0123456789abcdef0123".getBytes(StandardCharsets.UTF_8),
                SecretProof.readSecret(file, "admin.secret.file"));
        Files.writeString(file, "short\n");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> SecretProof.readSecret(file, "admin.secret.file"));
        assertTrue(e.getMessage().contains("admin.secret.file") && e.getMessage().contains("at least 16"),
                e.getMessage());
        IllegalArgumentException missing = assertThrows(IllegalArgumentException.class,
                () -> SecretProof.readSecret(dir.resolve("none"), "sibyl.client.admin.secret.file"));
        assertTrue(missing.getMessage().contains("sibyl.client.admin.secret.file"), missing.getMessage());
    }
}
