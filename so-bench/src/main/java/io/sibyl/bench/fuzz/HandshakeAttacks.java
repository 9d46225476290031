package io.sibyl.bench.fuzz;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sibyl.protocol.Wire;

import java.io.IOException;
import java.util.List;
import java.util.Random;

/**
 * Attacks on a connection's first frame, each on a connection of its own: bad handshakes, TLS ClientHellos, random
 * bytes, oversized length prefixes and half-sent handshakes. Every one but the last must be refused with a
 * connection-level ERROR, then closed.
 */
final class HandshakeAttacks {
    /** How long an attacker waits on a random frame the oracle may still be waiting to complete. */
    private static final int INCOMPLETE_WAIT_MILLIS = 200;

    private final OracleLimits oracle;
    private final FuzzCounters counters;
    private final Verdicts verdicts;
    private final List<byte[]> tlsHellos;

    HandshakeAttacks(OracleLimits oracle, FuzzCounters counters, Verdicts verdicts, List<byte[]> tlsHellos) {
        this.oracle = oracle;
        this.counters = counters;
        this.verdicts = verdicts;
        this.tlsHellos = tlsHellos;
    }

    /** Bad magic, another version, an unknown role, a length of its own, or a request before any handshake. */
    void badHandshake(Random rnd) throws IOException {
        ByteBuf h = Unpooled.buffer(64);
        int code = Wire.ERR_MALFORMED;
        String what;
        switch (rnd.nextInt(6)) {
            case 0 -> {
                int magic = rnd.nextInt();
                h.writeInt(magic == Wire.MAGIC ? ~magic : magic).writeShort(Wire.VERSION);
                what = "bad magic";
            }
            case 1 -> {
                short[] versions = {0, 1, 2, 3, 4, 5, Wire.VERSION + 1, 100, Short.MAX_VALUE, -1, Short.MIN_VALUE};
                short v = versions[rnd.nextInt(versions.length)];
                h.writeInt(Wire.MAGIC).writeShort(v);
                code = Wire.ERR_VERSION;
                what = "handshake of version " + v;
            }
            case 2 -> { // 0-5 bytes: a cut magic, or the magic and half a version
                h.writeInt(Wire.MAGIC).writeShort(Wire.VERSION);
                h.writerIndex(rnd.nextInt(6));
                what = "handshake of " + h.readableBytes() + " bytes";
            }
            case 3 -> { // 8-14 bytes, or 16-40: neither a role nor a role and a token
                h.writeInt(Wire.MAGIC).writeShort(Wire.VERSION).writeByte(Wire.ROLE_CLIENT);
                int length = rnd.nextBoolean() ? 8 + rnd.nextInt(7) : 16 + rnd.nextInt(25);
                while (h.readableBytes() < length) {
                    h.writeByte(rnd.nextInt());
                }
                what = "handshake of " + length + " bytes";
            }
            case 4 -> { // a role that does not exist, or a token after the standby's watch role
                byte role = (byte) (2 + rnd.nextInt(254));
                boolean watchWithToken = rnd.nextBoolean();
                h.writeInt(Wire.MAGIC).writeShort(Wire.VERSION).writeByte(watchWithToken ? Wire.ROLE_WATCH : role);
                if (watchWithToken) {
                    h.writeLong(rnd.nextLong());
                }
                what = watchWithToken ? "watch role with a token" : "handshake role " + role;
            }
            default -> {
                h.writeByte(Wire.BEGIN).writeByte(1);
                what = "a BEGIN before the handshake";
            }
        }
        byte[] body = new byte[h.readableBytes()];
        h.readBytes(body);
        try (RawConnection c = open()) {
            counters.frameSent(FrameKind.BAD_HANDSHAKE);
            c.send(RequestWriter.withPrefix(body));
            verdicts.refused(c, c.readUntilClosed(), code, what);
        }
    }

    /**
     * A TLS client pointed at the plaintext port: its ClientHello, whole, with a few bytes changed, or cut short. The
     * oracle cannot speak TLS and must say so (an ERROR) and close, whatever it takes the record's header for.
     */
    void tls(Random rnd) throws IOException {
        byte[] hello = tlsHellos.get(rnd.nextInt(tlsHellos.size())).clone();
        int choice = rnd.nextInt(20);
        if (choice < 5) {
            for (int i = 1 + rnd.nextInt(4); i > 0; i--) {
                hello[5 + rnd.nextInt(hello.length - 5)] = (byte) rnd.nextInt();
            }
        } else if (choice < 8) {
            hello = java.util.Arrays.copyOf(hello, 4 + rnd.nextInt(hello.length - 4));
        }
        try (RawConnection c = open()) {
            counters.frameSent(FrameKind.TLS);
            c.send(hello);
            List<OracleMessage> seen = c.readUntilClosed();
            verdicts.refused(c, seen, -1, "TLS ClientHello");
            if (!seen.isEmpty() && seen.get(seen.size() - 1).isConnectionError()) {
                counters.tlsAnswer.compareAndSet(null, seen.get(seen.size() - 1).toString());
            }
        }
    }

    /**
     * 4-64 random bytes as the first thing sent, half of the time under a length prefix that matches them. The oracle
     * refuses them, or waits for the rest of a frame their prefix announced (then the attacker drops it).
     */
    void randomFirstBytes(Random rnd) throws IOException {
        byte[] junk = new byte[4 + rnd.nextInt(61)];
        rnd.nextBytes(junk);
        if (rnd.nextBoolean()) {
            Unpooled.wrappedBuffer(junk).setInt(0, junk.length - 4);
        }
        long announced = Unpooled.wrappedBuffer(junk).getInt(0);
        boolean incomplete = announced >= 0 && announced <= oracle.maxFrameBytes() && announced > junk.length - 4;
        try (RawConnection c = open()) {
            counters.frameSent(FrameKind.RANDOM_FIRST);
            c.send(junk);
            if (incomplete) {
                List<OracleMessage> seen = c.readFor(INCOMPLETE_WAIT_MILLIS);
                if (c.closedByOracle()) {
                    verdicts.refused(c, seen, -1, "random first bytes");
                } else {
                    counters.droppedMidFrame.increment();
                }
            } else {
                verdicts.refused(c, c.readUntilClosed(), -1, "random first bytes");
            }
        }
    }

    /** A first frame whose length prefix is above max.frame.bytes (refused as too large) or negative. */
    void oversizedFirst(Random rnd) throws IOException {
        try (RawConnection c = open()) {
            counters.frameSent(FrameKind.OVERSIZED);
            int length = oversizedLength(rnd, oracle.maxFrameBytes());
            c.send(oversizedPrefix(rnd, length));
            verdicts.refused(c, c.readUntilClosed(), length > 0 ? Wire.ERR_TOO_LARGE : -1,
                    "first frame of " + length + " bytes");
        }
    }

    /** Half a handshake, then the attacker drops the connection. */
    void halfHandshake(Random rnd) throws IOException {
        byte[] whole = new byte[10];
        Unpooled.wrappedBuffer(whole).writerIndex(0).writeInt(6).writeInt(Wire.MAGIC).writeShort(Wire.VERSION);
        try (RawConnection c = open()) {
            counters.frameSent(FrameKind.TRUNCATED);
            c.send(java.util.Arrays.copyOf(whole, 1 + rnd.nextInt(9)));
            counters.droppedMidFrame.increment();
        }
    }

    /** A length above {@code maxFrameBytes}, up to 2^31 - 1, or a negative one. */
    static int oversizedLength(Random rnd, long maxFrameBytes) {
        return switch (rnd.nextInt(3)) {
            case 0 -> (int) Math.min(Integer.MAX_VALUE, maxFrameBytes + 1 + rnd.nextInt(1 << 16));
            case 1 -> Integer.MAX_VALUE - rnd.nextInt(16);
            default -> Integer.MIN_VALUE + rnd.nextInt(Integer.MAX_VALUE); // any negative int
        };
    }

    /** The prefix, then up to 16 random bytes of what would be the frame. */
    static byte[] oversizedPrefix(Random rnd, int length) {
        byte[] bytes = new byte[4 + rnd.nextInt(17)];
        rnd.nextBytes(bytes);
        Unpooled.wrappedBuffer(bytes).setInt(0, length);
        return bytes;
    }

    private RawConnection open() throws IOException {
        counters.connectionsOpened.increment();
        return RawConnection.open(oracle.host(), oracle.port());
    }
}
