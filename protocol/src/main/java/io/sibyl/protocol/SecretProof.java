package io.sibyl.protocol;

import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;

/**
 * A shared secret (the clients' or the admin's) and the proof of it a connection sends in {@link Wire#AUTHENTICATE}:
 * an HMAC-SHA256 of the role and the oracle's per-connection HELLO nonce, so the secret never crosses the wire, a
 * recorded proof opens no other connection, and a client's proof is no admin's.
 */
public final class SecretProof {
    /** Fewest bytes a secret may have: shorter ones can be guessed. */
    public static final int MIN_SECRET_BYTES = 16;

    private SecretProof() {
    }

    /**
     * Reads a secret from {@code file}: its bytes, without a trailing line break. {@code setting} names the
     * setting that gave the path, for the error.
     *
     * @throws IllegalArgumentException if the file cannot be read or holds fewer than {@link #MIN_SECRET_BYTES} bytes
     */
    public static byte[] readSecret(Path file, String setting) {
        byte[] raw;
        try {
            raw = Files.readAllBytes(file);
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read the secret file " + file + " named by " + setting
                    + ": " + e);
        }
        String text = new String(raw, StandardCharsets.UTF_8).strip();
        byte[] secret = text.getBytes(StandardCharsets.UTF_8);
        if (secret.length < MIN_SECRET_BYTES) {
            throw new IllegalArgumentException("the secret in " + file + " (" + setting + ") has "
                    + secret.length + " bytes; use at least " + MIN_SECRET_BYTES + ", for example the output of"
                    + " 'openssl rand -hex 32'");
        }
        return secret;
    }

    /** The proof of {@code secret} for {@code role} on a connection whose HELLO carried {@code nonce}. */
    public static byte[] compute(byte[] secret, byte role, byte[] nonce) {
        try {
            Mac mac = Mac.getInstance("HmacSHA256");
            mac.init(new SecretKeySpec(secret, "HmacSHA256"));
            mac.update("sibyl-auth-v1".getBytes(StandardCharsets.US_ASCII));
            mac.update(role);
            return mac.doFinal(nonce);
        } catch (GeneralSecurityException e) {
            throw new IllegalStateException("HmacSHA256 is missing from this JDK", e);
        }
    }

    /** True if {@code proof} proves {@code secret} for {@code role} and {@code nonce}; compared in constant time. */
    public static boolean verify(byte[] secret, byte role, byte[] nonce, byte[] proof) {
        return proof.length == Wire.PROOF_BYTES && MessageDigest.isEqual(compute(secret, role, nonce), proof);
    }
}
