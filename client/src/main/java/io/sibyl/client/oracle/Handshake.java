package io.sibyl.client.oracle;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.buffer.UnpooledByteBufAllocator;
import io.sibyl.protocol.AbortedRange;
import io.sibyl.protocol.Frames;
import io.sibyl.protocol.ProtocolException;
import io.sibyl.protocol.SecretProof;
import io.sibyl.protocol.Varints;
import io.sibyl.protocol.Wire;

import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The opening exchange of a connection: the client's handshake, the oracle's HELLO (its replica's starting point and
 * its limits), and the proofs of the client's secrets. What the HELLO said is written by the I/O thread and read by
 * any thread: hence volatile.
 */
final class Handshake {
    private final String address;
    /** This client proves a client secret after the HELLO. */
    private final boolean provesClientSecret;
    /** Completes with the replica the HELLO starts, or fails with why the connection cannot be used. */
    private final CompletableFuture<CommitReplica> hello = new CompletableFuture<>();
    /** Random bytes of the oracle's HELLO, which an admin proof is computed over. */
    private volatile byte[] helloNonce;
    /** The oracle accepted this connection's admin proof, or gave it the admin role for its certificate. */
    private volatile boolean admin;
    /** The oracle's transaction.max.age.ms in nanoseconds (from HELLO); 0: no limit. */
    private volatile long transactionMaxAgeNanos;

    Handshake(String address, OracleCredentials credentials) {
        this.address = address;
        this.provesClientSecret = credentials.clientSecret() != null || credentials.isAdmin();
    }

    /** The client's handshake, the first frame of a connection. */
    static ByteBuf frame(OracleCredentials credentials) {
        ByteBuf hs = Frames.begin(UnpooledByteBufAllocator.DEFAULT, 7 + Wire.HANDSHAKE_TOKEN_BYTES);
        hs.writeInt(Wire.MAGIC);
        hs.writeShort(Wire.VERSION);
        hs.writeByte(Wire.ROLE_CLIENT);
        hs.writeLong(credentials.identityToken());
        return Frames.end(hs);
    }

    /**
     * Waits for the HELLO, then proves the secrets {@code credentials} holds, all within {@code timeoutMillis}.
     *
     * @return the replica the HELLO started
     */
    CommitReplica await(OracleCredentials credentials, long timeoutMillis, RequestPipeline requests,
                        FrameTransport transport) throws ExecutionException, TimeoutException, InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(timeoutMillis);
        CommitReplica replica = transport.await(hello, TimeUnit.MILLISECONDS.toNanos(timeoutMillis));
        if (credentials.clientSecret() != null) {
            authenticate(requests, transport, credentials.clientSecret(), Wire.AUTH_CLIENT,
                    Math.max(1, deadline - System.nanoTime()));
        }
        if (credentials.isAdmin()) {
            authenticate(requests, transport, credentials.adminSecret(), Wire.AUTH_ADMIN,
                    Math.max(1, deadline - System.nanoTime()));
            admin = true;
        }
        return replica;
    }

    /**
     * Proves a secret on this connection (after the HELLO, whose nonce the proof covers), waiting for the oracle's
     * answer: an oracle without the secret, or with another, refuses with a message naming the settings.
     */
    private void authenticate(RequestPipeline requests, FrameTransport transport, byte[] secret, byte role,
                              long timeoutNanos)
            throws ExecutionException, TimeoutException, InterruptedException {
        byte[] proof = SecretProof.compute(secret, role, helloNonce);
        ByteBuf b = Unpooled.wrappedBuffer(proof);
        long[] words = new long[Wire.PROOF_BYTES / Long.BYTES];
        for (int i = 0; i < words.length; i++) {
            words[i] = b.readLong();
        }
        transport.await(requests.submit(new OracleRequest(Wire.AUTHENTICATE, role, words)), timeoutNanos);
    }

    /**
     * Reads a HELLO after its type byte, taking the oracle's limits into {@code requests} and {@code window}. On the
     * I/O thread.
     *
     * @return the replica it starts, not yet announced ({@link #arrived})
     */
    CommitReplica readHello(ByteBuf in, RequestPipeline requests, ReadWindow window) {
        short version = in.readShort();
        if (version != Wire.VERSION) {
            throw new ProtocolException("oracle speaks protocol version " + version);
        }
        byte[] nonce = new byte[Wire.NONCE_BYTES];
        in.readBytes(nonce);
        helloNonce = nonce;
        byte flags = in.readByte();
        if ((flags & Wire.HELLO_ADMIN) != 0) {
            admin = true; // its certificate gave this connection the admin role (the oracle's admin.identities)
        }
        if ((flags & Wire.HELLO_CLIENT_SECRET_REQUIRED) != 0 && !provesClientSecret) {
            hello.completeExceptionally(new OracleException(Wire.ERR_FORBIDDEN, "the oracle at " + address
                    + " serves only clients that prove its client secret (its client.secret.file): set"
                    + " sibyl.client.secret.file to the same secret (docs/operations.md, Security)"));
        }
        long tInit = Varints.readUnsigned(in);
        long tMax = Varints.readUnsigned(in);
        Varints.readUnsigned(in); // max write set rows: enforced by the oracle
        requests.limitFrameTo((int) Math.min(Varints.readUnsigned(in), 1 << 20));
        window.graceFromHello(Varints.readUnsigned(in));
        long maxAgeMillis = Varints.readUnsigned(in);
        // Above a year: counted as a year (sooner than the oracle, never later, which "no limit" would be).
        transactionMaxAgeNanos = maxAgeMillis == 0 ? 0 : Math.min(maxAgeMillis, 365L * 86_400_000L) * 1_000_000L;
        long[] aborted = ReplyFields.readAbortedSet(in);
        List<AbortedRange> abortedRanges = AbortedRange.readAll(in); // running when earlier oracles stopped
        CommitReplica r = new CommitReplica(tInit, tMax, aborted, abortedRanges);
        r.expireReadersAfter(transactionMaxAgeNanos);
        return r;
    }

    /** The HELLO's replica is in place: a connect waiting for it goes on. */
    void arrived(CommitReplica replica) {
        hello.complete(replica);
    }

    /** The connection cannot be used: a connect waiting for the HELLO fails with {@code cause}. */
    void fail(Throwable cause) {
        hello.completeExceptionally(cause);
    }

    boolean isAdmin() {
        return admin;
    }

    long transactionMaxAgeNanos() {
        return transactionMaxAgeNanos;
    }
}
