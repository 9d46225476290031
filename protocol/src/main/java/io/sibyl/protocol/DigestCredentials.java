package io.sibyl.protocol;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.Base64;

/**
 * A ZooKeeper {@code digest} identity, {@code user:password}, as the oracle ({@code journal.zk.auth.file}) and its
 * clients ({@code sibyl.oracle.zk.auth.file}) read it from a file: the password never appears on a command line or
 * in a process listing.
 */
public record DigestCredentials(String user, String password) {
    /** ZooKeeper's authentication scheme for these credentials. */
    public static final String SCHEME = "digest";

    public DigestCredentials {
        if (user.isEmpty() || user.contains(":") || password.isEmpty()) {
            throw new IllegalArgumentException("ZooKeeper digest credentials need a user without ':' and a password");
        }
    }

    /**
     * Reads {@code user:password} from the first line of {@code file} (surrounding white space ignored).
     * {@code setting} names the setting that gave the path, for the error.
     *
     * @throws IllegalArgumentException if the file cannot be read or does not hold {@code user:password}
     */
    public static DigestCredentials read(Path file, String setting) {
        String text;
        try {
            text = Files.readString(file, StandardCharsets.UTF_8).strip();
        } catch (IOException e) {
            throw new IllegalArgumentException("cannot read the ZooKeeper credentials file " + file + " named by "
                    + setting + ": " + e);
        }
        int colon = text.indexOf(':');
        int lineEnd = text.indexOf('\n');
        if (colon <= 0 || colon == text.length() - 1 || lineEnd >= 0) {
            throw new IllegalArgumentException("the ZooKeeper credentials file " + file + " (" + setting
                    + ") must hold one line, user:password");
        }
        return new DigestCredentials(text.substring(0, colon), text.substring(colon + 1));
    }

    /** What {@code ZooKeeper.addAuthInfo("digest", ...)} takes. */
    public byte[] authBytes() {
        return (user + ":" + password).getBytes(StandardCharsets.UTF_8);
    }

    /**
     * The id ZooKeeper gives this identity in ACLs, {@code user:base64(sha1(user:password))}: what an operator
     * lists in {@code journal.zk.acl.readers} as {@code digest:<this>} to let a client with these credentials read.
     */
    public String aclId() {
        try {
            byte[] sha1 = MessageDigest.getInstance("SHA-1").digest(authBytes());
            return user + ":" + Base64.getEncoder().encodeToString(sha1);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("the JDK has no SHA-1", e);
        }
    }

    /** Never shows the password. */
    @Override
    public String toString() {
        return SCHEME + ":" + user;
    }
}
