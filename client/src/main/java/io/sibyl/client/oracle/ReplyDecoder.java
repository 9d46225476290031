package io.sibyl.client.oracle;

import io.netty.buffer.ByteBuf;
import io.sibyl.protocol.Frames;
import io.sibyl.protocol.ProtocolException;
import io.sibyl.protocol.Varints;
import io.sibyl.protocol.Wire;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Decodes the oracle's reply frames of one connection in two passes: new readers are registered and the frame's
 * metadata applied to the replica before any future of the frame completes, so a start timestamp is never seen
 * before the commits it must include. Confined to the connection's I/O thread, but for its counters.
 */
final class ReplyDecoder {
    private final OracleClient client;
    private final String address;
    private final RequestPipeline requests;
    private final Handshake handshake;
    private final ReadWindow window;
    private final ReplicaFreshness freshness;
    private long[] ids = new long[64];
    private long[] values = new long[64];
    private byte[] types = new byte[64];
    private final List<String> errors = new ArrayList<>();
    /** History points of this frame, by request id (rare: reads of the past). */
    private final Map<Long, HistoryPoint> points = new HashMap<>();
    private int count;
    /** Counters read by other threads (written only here): volatile. */
    private volatile long deltaBytes;
    private volatile long startReplies;

    ReplyDecoder(OracleClient client, RequestPipeline requests, Handshake handshake, ReadWindow window,
                 ReplicaFreshness freshness) {
        this.client = client;
        this.address = client.address();
        this.requests = requests;
        this.handshake = handshake;
        this.window = window;
        this.freshness = freshness;
    }

    /**
     * Decodes and applies one frame.
     *
     * @return false if the oracle closed the connection with an error (it is lost then, and the caller closes it)
     */
    boolean decode(ByteBuf in) {
        count = 0;
        errors.clear();
        points.clear();
        ByteBuf delta = null;
        CommitReplica r = client.replica();
        while (in.isReadable()) {
            byte type = in.readByte();
            switch (type) {
                case Wire.HELLO -> r = handshake.readHello(in, requests, window);
                case Wire.DELTA -> {
                    int len = Varints.readBoundedInt(in, in.readableBytes(), "delta length");
                    delta = in.readSlice(len);
                }
                case Wire.HISTORY_POINT -> {
                    long id = Varints.readUnsigned(in);
                    points.put(id, ReplyFields.readHistoryPoint(in));
                    add(type, id, 0);
                }
                case Wire.STARTED, Wire.COMMITTED, Wire.ACK, Wire.ABORTED, Wire.STATUS, Wire.ERROR,
                     Wire.WATERMARK, Wire.TICKETED -> {
                    long id = Varints.readUnsigned(in);
                    long value = 0;
                    switch (type) {
                        case Wire.STARTED, Wire.COMMITTED, Wire.WATERMARK, Wire.TICKETED ->
                                value = Varints.readUnsigned(in);
                        case Wire.ABORTED -> value = in.readByte();
                        case Wire.STATUS -> {
                            byte code = in.readByte();
                            value = ((long) code << 56) | Varints.readUnsigned(in);
                        }
                        case Wire.ERROR -> {
                            value = in.readByte();
                            errors.add(Frames.readString(in, Frames.MAX_ERROR_TEXT * 4));
                        }
                        default -> {
                        }
                    }
                    if (type == Wire.STARTED && r != null) {
                        r.registerReader(value);
                    }
                    if (type == Wire.STARTED || type == Wire.COMMITTED || type == Wire.TICKETED) {
                        freshness.replied(value);
                    }
                    add(type, id, value);
                }
                default -> throw new ProtocolException("unknown reply type " + type + " from the oracle");
            }
        }
        if (delta != null && r != null) {
            deltaBytes += delta.readableBytes();
            r.apply(delta);
        }
        if (r != null && client.replica() == null) {
            client.replicaArrived(r);
            handshake.arrived(r);
        }
        int errorIndex = 0;
        for (int i = 0; i < count; i++) {
            if (types[i] == Wire.ERROR && ids[i] == 0) {
                String text = errors.get(errorIndex++);
                if (values[i] == Wire.ERR_FORBIDDEN || values[i] == Wire.ERR_VERSION) {
                    // Refused for what this client is (plaintext to a TLS oracle, another version): retrying
                    // elsewhere or later cannot help, so a connect fails at once with the oracle's reason.
                    handshake.fail(new OracleException((int) values[i], "the oracle at " + address
                            + " refused the connection: " + text));
                }
                client.connectionLost("the oracle at " + address + " closed the connection: " + text);
                return false;
            }
            complete(types[i], ids[i], values[i], types[i] == Wire.ERROR ? errors.get(errorIndex++) : null);
        }
        return true;
    }

    long deltaBytes() {
        return deltaBytes;
    }

    long startReplies() {
        return startReplies;
    }

    private void add(byte type, long id, long value) {
        if (count == ids.length) {
            ids = Arrays.copyOf(ids, count * 2);
            values = Arrays.copyOf(values, count * 2);
            types = Arrays.copyOf(types, count * 2);
        }
        ids[count] = id;
        values[count] = value;
        types[count] = type;
        count++;
    }

    private void complete(byte type, long id, long value, String error) {
        OracleRequest req = requests.answered(id);
        if (req == null) {
            return;
        }
        CommitReplica r = client.replica();
        if (type == Wire.STARTED || type == Wire.TICKETED) {
            freshness.snapshotAt(value, req.sentNanos);
        }
        switch (type) {
            case Wire.STARTED -> {
                startReplies++;
                req.future.complete(value);
            }
            case Wire.TICKETED -> req.future.complete(value);
            case Wire.COMMITTED -> {
                r.unregisterReader(req.ts);
                req.future.complete(value);
            }
            case Wire.ABORTED -> {
                r.unregisterReader(req.ts);
                req.future.completeExceptionally(new TransactionAbortedException(req.ts, abortReason(value)));
            }
            case Wire.ACK -> {
                if (req.type == Wire.ABORT) {
                    r.unregisterReader(req.ts);
                }
                req.future.complete(null);
            }
            case Wire.WATERMARK -> req.future.complete(value);
            case Wire.HISTORY_POINT -> req.future.complete(points.get(id));
            case Wire.STATUS -> req.future.complete(
                    TransactionStatus.fromWire((byte) (value >>> 56), value & 0x00FF_FFFF_FFFF_FFFFL));
            case Wire.ERROR -> {
                if (req.type == Wire.COMMIT || req.type == Wire.COMMIT_CERTIFIED || req.type == Wire.ABORT) {
                    r.unregisterReader(req.ts);
                }
                req.future.completeExceptionally(new OracleException((int) value, error));
            }
            default -> {
            }
        }
    }

    private static TransactionAbortedException.Reason abortReason(long code) {
        return switch ((int) code) {
            case Wire.ABORT_CONFLICT -> TransactionAbortedException.Reason.CONFLICT;
            case Wire.ABORT_TOO_OLD -> TransactionAbortedException.Reason.TOO_OLD;
            case Wire.ABORT_READ_CONFLICT -> TransactionAbortedException.Reason.READ_CONFLICT;
            default -> TransactionAbortedException.Reason.ALREADY_ABORTED;
        };
    }
}
