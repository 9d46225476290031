package io.sibyl.protocol;

/**
 * Constants of the oracle wire protocol: framing, handshake, message types and status codes.
 *
 * <p>Every frame is a 4-byte big-endian length followed by that many bytes. The first frame of a connection is the
 * handshake; after it a frame is a sequence of messages, each a type byte, a varint request id and a body. The full
 * layout is in docs/protocol.md.
 */
public final class Wire {
    private Wire() {
    }

    /** "SIBY": first four bytes of a client handshake. */
    public static final int MAGIC = 0x53494259;
    /**
     * Protocol version this build speaks (2: HELLO carries aborted ranges, decision blocks may hold ABORT_RANGE;
     * 3: HELLO carries the reader grace period, and a silent connection gets empty frames as heartbeats; 4:
     * {@link #RANGE_CLEANED_UP} and the FORGET_RANGE record; 5: HELLO carries the oracle's transaction max age; 6:
     * HELLO carries a {@link #NONCE_BYTES}-byte nonce after the version, a client's handshake may carry its identity
     * token, {@link #AUTHENTICATE} proves a client or admin secret, and {@link #COMMIT_CERTIFIED} certifies reads).
     */
    public static final short VERSION = 6;
    /**
     * Optional seventh byte of the handshake, who connects: a client (the same as no such byte). A client may follow
     * it with its 8-byte identity token ({@link #HANDSHAKE_TOKEN_BYTES}): the connections that present the same token
     * are one client, which may abort and report the clean-up of the transactions it began on any of them. Without a
     * token a connection is a client of its own.
     */
    public static final byte ROLE_CLIENT = 0;
    /** Bytes of a client's identity token in its handshake. */
    public static final int HANDSHAKE_TOKEN_BYTES = 8;
    /** Bytes of the random nonce in every HELLO, which an {@link #AUTHENTICATE} proof is computed over. */
    public static final int NONCE_BYTES = 16;
    /** Bytes of the proof in {@link #AUTHENTICATE}: an HMAC-SHA256. */
    public static final int PROOF_BYTES = 32;
    /** Flag of HELLO's flags byte: the client must prove the client secret ({@link #AUTH_CLIENT}) first. */
    public static final int HELLO_CLIENT_SECRET_REQUIRED = 1;
    /**
     * Flag of HELLO's flags byte: the connection has the admin role already, given by its client certificate
     * ({@code admin.identities}); no {@link #AUTH_ADMIN} proof is needed. Added within version 6: an older client
     * of version 6 takes any non-zero flags byte for {@link #HELLO_CLIENT_SECRET_REQUIRED}.
     */
    public static final int HELLO_ADMIN = 2;
    /** {@link #AUTHENTICATE} role: a client proving {@code client.secret.file}. */
    public static final byte AUTH_CLIENT = 1;
    /** {@link #AUTHENTICATE} role: the admin (the sweeper) proving {@code admin.secret.file}. */
    public static final byte AUTH_ADMIN = 2;
    /**
     * Handshake role of the hot standby's watch of its leader: the oracle sends no HELLO and keeps the connection open
     * (counted in its connection limit) until either side closes it; any frame after the handshake is malformed.
     */
    public static final byte ROLE_WATCH = 1;
    /** Bytes of the frame length prefix. */
    public static final int LENGTH_FIELD_BYTES = 4;

    // client -> oracle
    public static final byte BEGIN = 1;
    public static final byte COMMIT = 2;
    public static final byte ABORT = 3;
    public static final byte CLEANED_UP = 4;
    public static final byte QUERY = 5;
    /** A transaction that wrote nothing has finished; no reply. */
    public static final byte FINISH = 6;
    /**
     * Asks for the oracle's current low watermark (no body); answered with {@link #WATERMARK}. Added after version 2
     * without changing the version: an older oracle refuses it as malformed.
     */
    public static final byte WATERMARK_QUERY = 7;
    /**
     * The versions that the in-doubt transactions of an aborted range left in the data store were deleted: body
     * {@code varint from, varint to} (the range {@code (from, to]}); answered with {@link #ACK}. The oracle forgets
     * the range once every transaction that started before the report has finished.
     */
    public static final byte RANGE_CLEANED_UP = 8;
    /**
     * Proves a shared secret: body {@code byte role} ({@link #AUTH_CLIENT} or {@link #AUTH_ADMIN}), then
     * {@value #PROOF_BYTES} bytes, {@code HMAC-SHA256(secret, role, HELLO nonce)} ({@link SecretProof}); answered with
     * {@link #ACK}, or {@link #ERR_FORBIDDEN} when the oracle has no such secret or the proof does not match. An
     * oracle with {@code client.secret.file} serves a connection only once it proved the client (or admin) secret;
     * the admin role may also abort any transaction and report the clean-up of any aborted transaction or aborted
     * range (the sweeper's work).
     */
    public static final byte AUTHENTICATE = 9;
    /**
     * A commit with its reads certified: body {@code varint startTs}, then three lists, each {@code varint n, n x
     * int64}: the rows written (checked for write-write conflicts and recorded, as in {@link #COMMIT}), the rows and
     * range granules read (checked only: one committed by another transaction after {@code startTs} aborts it with
     * {@link #ABORT_READ_CONFLICT}), and the granules written (recorded only, so that later readers of a range see
     * this commit). Replies as {@link #COMMIT}. Serializable transactions send their reads; every client sends the
     * granules of what it writes, whatever its isolation, since a serializable reader must see every writer.
     */
    public static final byte COMMIT_CERTIFIED = 10;
    /**
     * Admin only: asks for the oracle's figures (no body); answered with {@link #ORACLE_STATUS}, or
     * {@link #ERR_FORBIDDEN} without the admin role. Added to version 6 without changing it: an older oracle closes
     * the connection as malformed. {@code bin/sibyl status} sends it.
     */
    public static final byte ORACLE_STATUS_QUERY = 11;
    /**
     * Admin only: lists the running transactions, oldest first; body {@code varint limit} (at most that many are
     * listed); answered with {@link #RUNNING_LIST}, or {@link #ERR_FORBIDDEN}. {@code bin/sibyl transactions}.
     */
    public static final byte RUNNING_QUERY = 12;
    /**
     * A region server commits a single-row transaction itself (the fast path): body two lists, each {@code varint n,
     * n x int64}, the rows written and the range granules written, recorded in the conflict table as if committed at
     * the timestamp the oracle hands out for it (so that a transaction that started before it and writes one of those
     * rows, or read one as a serializable transaction, aborts). Answered with {@link #TICKETED} carrying that timestamp,
     * the ticket {@code t}; the write then takes version {@link Timestamps#selfCommittedVersion t + 1}, which no
     * other timestamp of the oracle can be ({@link Timestamps}). Nothing is journaled: a recovered oracle hands out
     * timestamps above every one handed out before, and its conflict table starts at that T_max. Added to version 6
     * without changing it: an older oracle closes the connection as malformed.
     */
    public static final byte TICKET = 13;
    /**
     * Where a read of the past reads: body {@code byte kind, varint value}, the kind {@link #HISTORY_AT_TIMESTAMP}
     * (value: a timestamp), {@link #HISTORY_AT_TIME} (value: milliseconds since the epoch) or {@link #HISTORY_OLDEST}
     * (value 0: the oldest point kept, which the garbage collector keeps readable). Answered with
     * {@link #HISTORY_POINT}, or {@link #ERR_HISTORY} saying why not (reads of the past off, too far back). Added to
     * version 6 without changing it: an older oracle closes the connection as malformed.
     */
    public static final byte HISTORY_QUERY = 14;
    /** {@link #HISTORY_QUERY} kind: the state at a timestamp. */
    public static final byte HISTORY_AT_TIMESTAMP = 0;
    /** {@link #HISTORY_QUERY} kind: the state at a wall-clock time. */
    public static final byte HISTORY_AT_TIME = 1;
    /** {@link #HISTORY_QUERY} kind: the oldest point kept. */
    public static final byte HISTORY_OLDEST = 2;

    // oracle -> client
    public static final byte HELLO = 32;
    public static final byte STARTED = 33;
    public static final byte COMMITTED = 34;
    public static final byte ABORTED = 35;
    public static final byte ACK = 36;
    public static final byte STATUS = 37;
    public static final byte ERROR = 38;
    /** Replicated commit metadata: a run of decision blocks the connection has not seen yet. */
    public static final byte DELTA = 39;
    /**
     * The low watermark: no transaction that is running, or starts later, has a start timestamp below it. Only ever
     * rises, so a stale value is merely conservative for garbage collection.
     */
    public static final byte WATERMARK = 40;
    /** The oracle's figures, each a name and a value ({@link AdminReplies}): the answer to {@link #ORACLE_STATUS_QUERY}. */
    public static final byte ORACLE_STATUS = 41;
    /** Running transactions, oldest first ({@link AdminReplies}): the answer to {@link #RUNNING_QUERY}. */
    public static final byte RUNNING_LIST = 42;
    /**
     * The answer to {@link #TICKET}: {@code varint ticket}. Like {@link #STARTED} it leaves with the block, so the
     * delta before it holds every decision below the ticket; unlike it, nothing is registered as running.
     */
    public static final byte TICKETED = 43;
    /**
     * The answer to {@link #HISTORY_QUERY}: {@code varint id, byte flags, varint S, varint E, varint n, n x varint,
     * varint m, m x varint}: a point the oracle recorded at clock {@code S}, the timestamp {@code E >= S} read at, the
     * start timestamps running at the point and those of the transactions that committed after it at or below
     * {@code E}, each list ascending and sent as differences to the one before (the first to 0). A writer is in the
     * state at {@code E} exactly when it is in the second list, or started below {@code S}, is not in the first list
     * and did not abort; a fast-path version when it is at or below {@code E}. Flag {@link #HISTORY_NONE}: no point is
     * kept (only for {@link #HISTORY_OLDEST}; the rest is zeros).
     */
    public static final byte HISTORY_POINT = 44;
    /** {@link #HISTORY_POINT} flag: no point is kept (only for {@link #HISTORY_OLDEST}). */
    public static final byte HISTORY_NONE = 2;

    // reasons carried by ABORTED
    public static final byte ABORT_CONFLICT = 1;
    public static final byte ABORT_TOO_OLD = 2;
    public static final byte ABORT_ALREADY_ABORTED = 3;
    /** A row or range the (serializable) transaction read was written by a transaction that committed since it began. */
    public static final byte ABORT_READ_CONFLICT = 4;

    // transaction states carried by STATUS
    public static final byte STATUS_COMMITTED = 1;
    /** Committed before the oracle's T_max; its commit timestamp has been forgotten. */
    public static final byte STATUS_COMMITTED_LONG_AGO = 2;
    public static final byte STATUS_ABORTED = 3;
    public static final byte STATUS_RUNNING = 4;
    /** Not a start timestamp of a transaction that wrote anything the oracle knows of. */
    public static final byte STATUS_UNKNOWN = 5;

    // error codes carried by ERROR
    public static final byte ERR_MALFORMED = 1;
    public static final byte ERR_TOO_LARGE = 2;
    public static final byte ERR_VERSION = 3;
    public static final byte ERR_UNKNOWN_TRANSACTION = 4;
    public static final byte ERR_FELL_BEHIND = 5;
    public static final byte ERR_SHUTTING_DOWN = 6;
    public static final byte ERR_OVERLOADED = 7;
    /** The request needs the admin role ({@link #AUTHENTICATE}) or another client's identity: nothing was done. */
    public static final byte ERR_FORBIDDEN = 8;
    /** A read of the past cannot be served: reads of the past are off, or the point asked for is not kept. */
    public static final byte ERR_HISTORY = 12;
}
