package io.sibyl.bench.fuzz;

import io.sibyl.protocol.Varints;
import io.sibyl.protocol.Wire;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Attacks after a good handshake, many frames on one connection until the oracle drops it: hostile requests, mutated
 * requests, random bytes, malformed requests, an oversized length prefix or a frame cut short. After each frame that
 * may leave the connection open the attacker sends a WATERMARK_QUERY in a frame of its own, a marker whose reply
 * shows that the oracle has answered everything before it.
 */
final class SessionAttacks {
    /** Marker request ids, far from the ids of the attack's requests. */
    private static final long MARKER_IDS = 1L << 40;

    private final OracleLimits oracle;
    private final FuzzCounters counters;
    private final Verdicts verdicts;
    private final GoodTransactions good;
    private final int maxFrames;
    private final long frameTarget;
    /** The HELLO nonce of the latest attacking connection, for proofs replayed on another one. */
    private final AtomicReference<byte[]> latestNonce = new AtomicReference<>();

    SessionAttacks(OracleLimits oracle, FuzzCounters counters, Verdicts verdicts, GoodTransactions good,
                   int maxFrames, long frameTarget) {
        this.oracle = oracle;
        this.counters = counters;
        this.verdicts = verdicts;
        this.good = good;
        this.maxFrames = maxFrames;
        this.frameTarget = frameTarget;
    }

    /** One connection: a handshake (with an identity token half of the time), then up to maxFrames attack frames. */
    void session(Random rnd) throws IOException {
        counters.connectionsOpened.increment();
        try (RawConnection c = RawConnection.open(oracle.host(), oracle.port())) {
            c.handshake(rnd.nextBoolean() ? rnd.nextLong() | 1 : 0);
            byte[][] nonces = {c.nonce(), latestNonce.getAndSet(c.nonce())};
            Session s = new Session(c, rnd, nonces);
            for (int n = 1 + rnd.nextInt(maxFrames); n > 0 && !c.closedByOracle(); n--) {
                if (counters.frames() >= frameTarget) {
                    return;
                }
                int pick = rnd.nextInt(100);
                if (pick < 50) {
                    s.hostile();
                } else if (pick < 78) {
                    s.mutated();
                } else if (pick < 88) {
                    s.randomBody();
                } else if (pick < 94) {
                    s.malformed();
                    return;
                } else if (pick < 97) {
                    s.oversized();
                    return;
                } else {
                    s.truncated();
                    return;
                }
            }
        }
    }

    /** The state of one attacking connection. */
    private final class Session {
        private final RawConnection c;
        private final Random rnd;
        private final byte[][] nonces;
        private final List<Long> own = new ArrayList<>();
        private long nextId = 1;
        private long nextMarker = MARKER_IDS;

        Session(RawConnection c, Random rnd, byte[][] nonces) {
            this.c = c;
            this.rnd = rnd;
            this.nonces = nonces;
        }

        void hostile() throws IOException {
            HostileFrame f = HostileFrame.build(rnd, nextId, good, own, oracle, nonces);
            nextId += f.requests.size();
            f.requests.values().forEach(r -> counters.requestSent(r.type()));
            List<OracleMessage> seen = sendWithMarker(FrameKind.HOSTILE, f.writer.body());
            verdicts.keptOpen(c, seen, "hostile requests");
            for (String wrong : f.check(seen, own)) {
                counters.misbehaved("hostile requests: " + wrong);
            }
        }

        /** Hostile requests with 1-4 bytes of the body replaced or one bit flipped (the length prefix is kept). */
        void mutated() throws IOException {
            HostileFrame f = HostileFrame.build(rnd, nextId, good, own, oracle, nonces);
            nextId += f.requests.size();
            byte[] body = f.writer.body();
            for (int i = 1 + rnd.nextInt(4); i > 0; i--) {
                int at = rnd.nextInt(body.length);
                body[at] = rnd.nextBoolean() ? (byte) rnd.nextInt() : (byte) (body[at] ^ (1 << rnd.nextInt(8)));
            }
            verdicts.refusedOrKept(c, sendWithMarker(FrameKind.MUTATED, body), "mutated requests");
        }

        void randomBody() throws IOException {
            byte[] body = new byte[1 + rnd.nextInt(rnd.nextBoolean() ? 16 : 256)];
            rnd.nextBytes(body);
            verdicts.refusedOrKept(c, sendWithMarker(FrameKind.RANDOM_BODY, body), "random bytes");
        }

        /** A frame that breaks one rule of the format after 0-2 good requests: ERROR code 1, connection closed. */
        void malformed() throws IOException {
            RequestWriter w = new RequestWriter();
            for (int i = rnd.nextInt(3); i > 0; i--) {
                w.request(Wire.WATERMARK_QUERY, nextId++);
            }
            String what = MalformedRequests.append(w, rnd, own.isEmpty() ? 1 : own.get(0));
            counters.frameSent(FrameKind.MALFORMED);
            c.send(w.frame());
            verdicts.refused(c, c.readUntilClosed(), Wire.ERR_MALFORMED, "malformed request: " + what);
        }

        void oversized() throws IOException {
            int length = HandshakeAttacks.oversizedLength(rnd, oracle.maxFrameBytes());
            counters.frameSent(FrameKind.OVERSIZED);
            c.send(HandshakeAttacks.oversizedPrefix(rnd, length));
            verdicts.refused(c, c.readUntilClosed(), length > 0 ? Wire.ERR_TOO_LARGE : -1, "frame of " + length
                    + " bytes");
        }

        /** Hostile requests cut anywhere in the prefix or the body; then the attacker drops the connection. */
        void truncated() {
            byte[] whole = HostileFrame.build(rnd, nextId, good, own, oracle, nonces).writer.frame();
            counters.frameSent(FrameKind.TRUNCATED);
            c.send(Arrays.copyOf(whole, 1 + rnd.nextInt(whole.length - 1)));
            counters.droppedMidFrame.increment();
        }

        private List<OracleMessage> sendWithMarker(FrameKind kind, byte[] body) throws IOException {
            long marker = nextMarker++;
            RequestWriter m = new RequestWriter().request(Wire.WATERMARK_QUERY, marker);
            counters.frameSent(kind);
            c.send(RequestWriter.concat(RequestWriter.withPrefix(body), m.frame()));
            return c.readUntil(marker);
        }
    }

    /** Appends a varint that does not fit 64 bits: 11 bytes, or 10 with bits above the 64th. */
    static void overlongVarint(RequestWriter w, Random rnd) {
        for (int i = 0; i < 9; i++) {
            w.rawByte(0x80 | (i == 0 ? 1 + rnd.nextInt(100) : 0));
        }
        if (rnd.nextBoolean()) {
            w.rawByte(0x80).rawByte(0);
        } else {
            w.rawByte(2 + rnd.nextInt(126));
        }
    }

    /** Writes {@code value} as an unsigned varint, for bodies built by hand. */
    static byte[] varint(long value) {
        io.netty.buffer.ByteBuf b = io.netty.buffer.Unpooled.buffer(10);
        Varints.writeUnsigned(b, value);
        return Arrays.copyOf(b.array(), b.readableBytes());
    }
}
