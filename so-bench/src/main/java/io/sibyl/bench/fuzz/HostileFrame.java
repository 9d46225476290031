package io.sibyl.bench.fuzz;

import io.sibyl.protocol.SecretProof;
import io.sibyl.protocol.Wire;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

/**
 * One frame of well-formed requests of every type of protocol version 6 that a stranger may not make or that cannot
 * succeed (another client's ABORT, CLEANED_UP, COMMIT and FINISH, RANGE_CLEANED_UP, AUTHENTICATE with a bad proof,
 * commits of transactions never begun or with too many rows) among ordinary ones, with the answer each must get.
 */
final class HostileFrame {
    /** Start timestamps far above anything the oracle will hand out in a run. */
    private static final long NEVER_BEGUN = 1L << 40;

    /** The answers a request may get. */
    enum Expect {
        /** No reply (FINISH). */
        NONE,
        STARTED_OR_REFUSED,
        /** A decision, an ACK, or a request-level refusal: too large, unknown, over a limit, forbidden. */
        ANY,
        ACK_OR_FORBIDDEN,
        /** ERROR code 8: a stranger's RANGE_CLEANED_UP or a wrong AUTHENTICATE proof. */
        FORBIDDEN,
        UNKNOWN_TRANSACTION,
        TOO_LARGE_OR_UNKNOWN,
        STATUS,
        WATERMARK;

        boolean accepts(OracleMessage m) {
            boolean error = m.type() == Wire.ERROR;
            int code = m.code();
            return switch (this) {
                case NONE -> false;
                case STARTED_OR_REFUSED -> m.type() == Wire.STARTED || error && code == Wire.ERR_OVERLOADED;
                case ANY -> !error || code == Wire.ERR_TOO_LARGE || code == Wire.ERR_UNKNOWN_TRANSACTION
                        || code == Wire.ERR_OVERLOADED || code == Wire.ERR_FORBIDDEN;
                case ACK_OR_FORBIDDEN -> m.type() == Wire.ACK || error && code == Wire.ERR_FORBIDDEN;
                case FORBIDDEN -> error && code == Wire.ERR_FORBIDDEN;
                case UNKNOWN_TRANSACTION -> error && code == Wire.ERR_UNKNOWN_TRANSACTION;
                case TOO_LARGE_OR_UNKNOWN -> error && (code == Wire.ERR_TOO_LARGE
                        || code == Wire.ERR_UNKNOWN_TRANSACTION);
                case STATUS -> m.type() == Wire.STATUS;
                case WATERMARK -> m.type() == Wire.WATERMARK;
            };
        }
    }

    /** A request of this frame: its id, type and the answer it must get. */
    record Request(long id, byte type, Expect expect) {
    }

    final RequestWriter writer = new RequestWriter();
    final Map<Long, Request> requests = new LinkedHashMap<>();

    /**
     * Builds 1-6 requests. {@code own}: start timestamps this connection began; {@code nonces}: this connection's
     * HELLO nonce and another's (for a replayed proof; null if none yet).
     */
    static HostileFrame build(Random rnd, long firstId, GoodTransactions good, List<Long> own, OracleLimits oracle,
                              byte[][] nonces) {
        HostileFrame f = new HostileFrame();
        long id = firstId;
        for (int n = 1 + rnd.nextInt(6); n > 0; n--, id++) {
            f.add(rnd, id, good, own, oracle, nonces);
        }
        return f;
    }

    private void add(Random rnd, long id, GoodTransactions good, List<Long> own, OracleLimits oracle,
                     byte[][] nonces) {
        long foreign = good.pick(rnd);
        long target = foreign != 0 ? foreign : 1 + rnd.nextInt(1 << 16);
        long mine = own.isEmpty() ? 1 + rnd.nextInt(1 << 16) : own.get(rnd.nextInt(own.size()));
        switch (rnd.nextInt(14)) {
            case 0 -> expect(id, Wire.BEGIN, Expect.STARTED_OR_REFUSED).request(Wire.BEGIN, id);
            case 1 -> expect(id, Wire.COMMIT, Expect.ANY).commit(id, mine, strangerRows(rnd, 1 + rnd.nextInt(4)));
            case 2 -> expect(id, Wire.COMMIT, Expect.UNKNOWN_TRANSACTION)
                    .commit(id, NEVER_BEGUN + rnd.nextInt(1 << 20), strangerRows(rnd, 1 + rnd.nextInt(4)));
            case 3 -> expect(id, Wire.COMMIT, Expect.ANY).commit(id, target, strangerRows(rnd, rnd.nextInt(4)));
            case 4 -> expect(id, Wire.ABORT, Expect.ACK_OR_FORBIDDEN).request(Wire.ABORT, id, target);
            case 5 -> expect(id, Wire.CLEANED_UP, Expect.ACK_OR_FORBIDDEN).request(Wire.CLEANED_UP, id,
                    rnd.nextBoolean() ? target : 1 + rnd.nextInt(1 << 16));
            case 6 -> expect(id, Wire.QUERY, Expect.STATUS).request(Wire.QUERY, id, rnd.nextBoolean() ? target : mine);
            case 7 -> expect(id, Wire.FINISH, Expect.NONE).request(Wire.FINISH, id, rnd.nextBoolean() ? target : mine);
            case 8 -> expect(id, Wire.WATERMARK_QUERY, Expect.WATERMARK).request(Wire.WATERMARK_QUERY, id);
            case 9 -> {
                long from = rnd.nextInt(1 << 16);
                expect(id, Wire.RANGE_CLEANED_UP, Expect.FORBIDDEN).request(Wire.RANGE_CLEANED_UP, id, from,
                        from + 1 + rnd.nextInt(1 << 16));
            }
            case 10 -> expect(id, Wire.AUTHENTICATE, Expect.FORBIDDEN).authenticate(id, badProof(rnd, oracle,
                    nonces[0], nonces[1]));
            case 11 -> { // more rows than max.write.set.rows, when such a frame is not too large to send often
                long rows = oracle.maxWriteSetRows() + 1 + rnd.nextInt(8);
                if (rows * Long.BYTES + 64 <= Math.min(oracle.maxFrameBytes(), 1 << 16)) {
                    long ts = rnd.nextBoolean() ? target : mine;
                    expect(id, Wire.COMMIT, Expect.TOO_LARGE_OR_UNKNOWN).commit(id, ts, strangerRows(rnd, (int) rows));
                } else {
                    expect(id, Wire.QUERY, Expect.STATUS).request(Wire.QUERY, id, target);
                }
            }
            case 12 -> expect(id, Wire.ABORT, Expect.ANY).request(Wire.ABORT, id, mine);
            default -> expect(id, Wire.CLEANED_UP, Expect.ACK_OR_FORBIDDEN).request(Wire.CLEANED_UP, id, mine);
        }
    }

    private RequestWriter expect(long id, byte type, Expect expect) {
        requests.put(id, new Request(id, type, expect));
        return writer;
    }

    /**
     * A proof that must not open the admin role: random bytes; an HMAC of this connection's nonce under a wrong
     * secret; or, when the run knows the admin secret, the right secret over another connection's nonce (a replay).
     */
    private static byte[] badProof(Random rnd, OracleLimits oracle, byte[] ownNonce, byte[] otherNonce) {
        int choice = rnd.nextInt(3);
        if (choice == 0) {
            byte[] proof = new byte[Wire.PROOF_BYTES];
            rnd.nextBytes(proof);
            return proof;
        }
        if (choice == 1 || oracle.adminSecret() == null || otherNonce == null) {
            byte[] wrongSecret = ("not-the-admin-secret-" + rnd.nextLong()).getBytes(StandardCharsets.US_ASCII);
            return SecretProof.compute(wrongSecret, Wire.AUTH_ADMIN, ownNonce);
        }
        return SecretProof.compute(oracle.adminSecret(), Wire.AUTH_ADMIN, otherNonce);
    }

    /** Negative row ids: the good clients write only non-negative ones, so attackers cannot make them conflict. */
    static long[] strangerRows(Random rnd, int n) {
        long[] rows = new long[n];
        for (int i = 0; i < n; i++) {
            rows[i] = rnd.nextLong() | Long.MIN_VALUE;
        }
        return rows;
    }

    /**
     * Checks every reply against its request; returns what is wrong (empty if nothing). Adds the start timestamps of
     * answered BEGINs to {@code own}.
     */
    List<String> check(List<OracleMessage> seen, List<Long> own) {
        List<String> wrong = new ArrayList<>();
        Map<Long, OracleMessage> replies = new LinkedHashMap<>();
        for (OracleMessage m : seen) {
            if (requests.containsKey(m.id()) && m.type() != Wire.DELTA && m.type() != Wire.HELLO
                    && replies.put(m.id(), m) != null) {
                wrong.add("two replies to request " + m.id());
            }
        }
        for (Request r : requests.values()) {
            OracleMessage reply = replies.get(r.id());
            if (reply == null) {
                if (r.expect() != Expect.NONE) {
                    wrong.add("no reply to request " + r.id() + " (type " + r.type() + ")");
                }
            } else if (!r.expect().accepts(reply)) {
                wrong.add("request " + r.id() + " of type " + r.type() + " expected " + r.expect() + ", got " + reply
                        + (r.type() == Wire.AUTHENTICATE && reply.type() == Wire.ACK ? ": A BAD PROOF OPENED THE"
                        + " ADMIN ROLE" : ""));
            } else if (reply.type() == Wire.STARTED) {
                own.add(reply.value());
            }
        }
        return wrong;
    }
}
