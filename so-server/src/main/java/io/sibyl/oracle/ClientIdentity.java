package io.sibyl.oracle;

import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;

/**
 * Who is behind a connection, as the oracle decided at its handshake.
 *
 * @param name      for messages and the log: the certificate's identity, or {@code token-XXXXXXXX} (a digest of the
 *                  token, never the token itself: knowing a token lets a client act as that client)
 * @param token     what makes connections one client (they may abort and report the clean-up of each other's
 *                  transactions); with a certificate it is derived from the certificate's identity and the token the
 *                  client sent, so that a client cannot act as a client of another certificate
 * @param limitKey  what the per-identity limits count: the certificate's identity, else the token
 * @param certified true when the name comes from a certificate the oracle verified
 */
record ClientIdentity(String name, long token, long limitKey, boolean certified) {

    /** A client that sent no token: every connection of it is a client of its own. */
    static ClientIdentity unnamed() {
        return ofToken(ClientSession.randomIdentity());
    }

    /** A client that named itself by {@code token} in its handshake, without a certificate. */
    static ClientIdentity ofToken(long token) {
        return new ClientIdentity(String.format("token-%08x", (int) digest("token", token, "")), token,
                positive(digest("limit-token", token, "")), false);
    }

    /**
     * A client whose verified certificate names it {@code certificateName}, that sent {@code token}: its connections
     * with that token are one client, and none of them is a client of another certificate whatever token it sends.
     */
    static ClientIdentity ofCertificate(String certificateName, long token) {
        return new ClientIdentity(certificateName, usable(digest("certificate", token, certificateName)),
                positive(digest("limit-certificate", 0, certificateName)), true);
    }

    /** Not 0 (no client) nor Long.MIN_VALUE (the oracle's maps' empty value). */
    private static long usable(long v) {
        return v == 0 || v == Long.MIN_VALUE ? 1 : v;
    }

    /** Above 0: the oracle's counting maps take positive keys only. */
    private static long positive(long v) {
        long p = v & Long.MAX_VALUE;
        return p == 0 ? 1 : p;
    }

    /**
     * The first 8 bytes of SHA-256 over a domain, the token and the name: two identities get the same value only by a
     * collision that nobody can aim at another client's value.
     */
    private static long digest(String domain, long token, String name) {
        try {
            MessageDigest sha = MessageDigest.getInstance("SHA-256");
            sha.update(domain.getBytes(StandardCharsets.US_ASCII));
            sha.update((byte) 0);
            sha.update(ByteBuffer.allocate(Long.BYTES).putLong(token).array());
            sha.update(name.getBytes(StandardCharsets.UTF_8));
            return ByteBuffer.wrap(sha.digest()).getLong();
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JDK has SHA-256", e);
        }
    }
}
