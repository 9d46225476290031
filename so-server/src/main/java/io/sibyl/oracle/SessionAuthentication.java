package io.sibyl.oracle;

import io.netty.buffer.ByteBuf;
import io.sibyl.protocol.Frames;
import io.sibyl.protocol.SecretProof;
import io.sibyl.protocol.Varints;
import io.sibyl.protocol.Wire;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.nio.file.Path;

/**
 * Who a connection may be: checks AUTHENTICATE's proofs of the client and admin secrets, refuses a client that did
 * not prove the client secret, and words every refusal of a request the connection's role does not allow.
 */
final class SessionAuthentication {
    private static final Logger LOG = LoggerFactory.getLogger(SessionAuthentication.class);

    /** The admin secret ({@code admin.secret.file}), or null: then no connection can be admin. */
    private final byte[] adminSecret;
    /** The client secret ({@code client.secret.file}), or null: then clients need not authenticate. */
    private final byte[] clientSecret;

    SessionAuthentication(OracleConfig config) {
        this.adminSecret = config.adminSecretFile().isEmpty() ? null
                : SecretProof.readSecret(Path.of(config.adminSecretFile()), "admin.secret.file");
        this.clientSecret = config.clientSecretFile().isEmpty() ? null
                : SecretProof.readSecret(Path.of(config.clientSecretFile()), "client.secret.file");
    }

    /** True when every client must prove the client secret before its first request. */
    boolean clientSecretRequired() {
        return clientSecret != null;
    }

    /** AUTHENTICATE {@code id}: {@code proof} of {@code role}'s secret; the ACK or the refusal goes to {@code out}. */
    void authenticate(ClientSession session, long id, byte role, byte[] proof, ByteBuf out) {
        boolean admin = role == Wire.AUTH_ADMIN;
        byte[] secret = admin ? adminSecret : clientSecret;
        String oracleKey = admin ? "admin.secret.file" : "client.secret.file";
        String clientKey = admin ? "sibyl.client.admin.secret.file" : "sibyl.client.secret.file";
        if (role != Wire.AUTH_ADMIN && role != Wire.AUTH_CLIENT) {
            forbidden(session, id, "unknown authentication role " + role + "; expected " + Wire.AUTH_CLIENT
                    + " (client) or " + Wire.AUTH_ADMIN + " (admin)", out);
        } else if (secret == null) {
            forbidden(session, id, "this oracle has no " + (admin ? "admin" : "client") + " secret (" + oracleKey
                    + " is empty): set it on the oracle, and the same secret in " + clientKey, out);
        } else if (!SecretProof.verify(secret, role, session.nonce, proof)) {
            forbidden(session, id, "the " + (admin ? "admin" : "client") + " secret does not match the oracle's:"
                    + " compare " + clientKey + " with the oracle's " + oracleKey, out);
        } else {
            session.authenticated = true;
            session.admin |= admin;
            if (admin) {
                LOG.info("{} authenticated as admin", session.channel.remoteAddress());
            }
            out.writeByte(Wire.ACK);
            Varints.writeUnsigned(out, id);
        }
    }

    /**
     * A request before the client secret was proven: the whole connection is refused (its reply says what to set)
     * and closed once the reply is out; nothing it sends is decided.
     */
    void refuseUnauthenticated(ClientSession session, ByteBuf out) {
        if (session.closeAfterReplies) {
            return;
        }
        session.closeAfterReplies = true;
        String reason = "this oracle serves only clients that prove its client secret (client.secret.file is set):"
                + " set sibyl.client.secret.file to the same secret (docs/operations.md, Security)";
        if (!session.warnedForbidden) {
            session.warnedForbidden = true;
            LOG.warn("refused {}: it sent a request without authenticating", session.channel.remoteAddress());
        }
        Frames.writeError(out, 0, Wire.ERR_FORBIDDEN, reason);
    }

    /** Refuses a request that needs the admin role or another client's identity; said once per connection in the log. */
    static void forbidden(ClientSession session, long id, String reason, ByteBuf out) {
        if (!session.warnedForbidden) {
            session.warnedForbidden = true;
            LOG.warn("refused a request from {}: {}", session.channel.remoteAddress(), reason);
        }
        Frames.writeError(out, id, Wire.ERR_FORBIDDEN, reason);
    }
}
