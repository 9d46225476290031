package io.sibyl.bench.fuzz;

import io.sibyl.protocol.Wire;

import java.util.Random;

/** Requests that break one rule of the format each; the oracle must answer ERROR code 1 and close the connection. */
final class MalformedRequests {
    /** Message types that protocol version 6 does not have as requests: unknown, or reply types. */
    private static final int[] NOT_REQUESTS = {0, 10, 17, 31, Wire.HELLO, Wire.STARTED, Wire.ERROR, Wire.WATERMARK,
            127, -1, -128};
    /** Row counts a commit may declare without the rows following, up to 2^64 - 1. */
    private static final long[] DECLARED_ROWS = {2, 3, 1L << 20, 1L << 31, 1L << 32, 1L << 60, (1L << 61) + 1,
            Long.MAX_VALUE, -1L};

    private MalformedRequests() {
    }

    /** Appends one malformed request (or makes the frame empty); returns what is wrong with it. */
    static String append(RequestWriter w, Random rnd, long ownTs) {
        switch (rnd.nextInt(9)) {
            case 0 -> {
                int type = NOT_REQUESTS[rnd.nextInt(NOT_REQUESTS.length)];
                w.rawByte(type).raw(SessionAttacks.varint(7));
                return "message type " + type;
            }
            case 1 -> {
                w.rawByte(Wire.QUERY);
                if (rnd.nextBoolean()) {
                    SessionAttacks.overlongVarint(w, rnd);
                    w.raw(SessionAttacks.varint(ownTs));
                } else {
                    w.raw(SessionAttacks.varint(7));
                    SessionAttacks.overlongVarint(w, rnd);
                }
                return "overlong varint";
            }
            case 2 -> {
                byte[] whole = new RequestWriter().commit(7, ownTs, HostileFrame.strangerRows(rnd, 2)).body();
                w.raw(java.util.Arrays.copyOf(whole, 1 + rnd.nextInt(whole.length - 1)));
                return "a commit cut short";
            }
            case 3 -> {
                byte[] types = {Wire.COMMIT, Wire.ABORT, Wire.CLEANED_UP, Wire.QUERY, Wire.FINISH};
                byte type = types[rnd.nextInt(types.length)];
                long bad = rnd.nextBoolean() ? 0 : Long.MIN_VALUE | rnd.nextLong();
                w.request(type, 7, bad);
                if (type == Wire.COMMIT) {
                    w.raw(SessionAttacks.varint(0));
                }
                return "timestamp " + Long.toUnsignedString(bad) + " in type " + type;
            }
            case 4 -> {
                long declared = DECLARED_ROWS[rnd.nextInt(DECLARED_ROWS.length)];
                w.request(Wire.COMMIT, 7, ownTs, declared);
                w.raw(new byte[Long.BYTES * rnd.nextInt(2)]);
                return "a commit declaring " + Long.toUnsignedString(declared) + " rows";
            }
            case 5, 6 -> {
                if (w.size() == 0) {
                    return "an empty frame"; // the frame after the handshake must hold a message
                }
                io.netty.buffer.ByteBuf h = io.netty.buffer.Unpooled.buffer(6).writeInt(Wire.MAGIC)
                        .writeShort(Wire.VERSION);
                w.raw(java.util.Arrays.copyOf(h.array(), 6));
                return "a second handshake";
            }
            case 7 -> {
                long from = 1 + rnd.nextInt(1 << 16);
                w.request(Wire.RANGE_CLEANED_UP, 7, from, from - rnd.nextInt(2));
                return "an empty or inverted range";
            }
            default -> {
                w.rawByte(Wire.AUTHENTICATE).raw(SessionAttacks.varint(7))
                        .raw(new byte[rnd.nextInt(1 + Wire.PROOF_BYTES)]);
                return "a role and proof shorter than " + (1 + Wire.PROOF_BYTES) + " bytes";
            }
        }
    }
}
