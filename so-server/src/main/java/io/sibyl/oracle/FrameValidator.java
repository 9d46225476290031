package io.sibyl.oracle;

import io.netty.buffer.ByteBuf;
import io.sibyl.protocol.ProtocolException;
import io.sibyl.protocol.Varints;
import io.sibyl.protocol.Wire;

/**
 * Checks a client frame completely on the I/O thread, so the sequencer only ever sees well-formed requests. A write
 * set above the limit is well-formed (it gets an error reply); anything else wrong is a {@link ProtocolException}.
 */
final class FrameValidator {
    private FrameValidator() {
    }

    static void validate(ByteBuf frame) {
        ByteBuf in = frame.duplicate();
        if (!in.isReadable()) {
            throw new ProtocolException("empty frame");
        }
        while (in.isReadable()) {
            int at = in.readerIndex() - frame.readerIndex();
            byte type = in.readByte();
            try {
                long id = Varints.readUnsigned(in);
                if (id == 0 && type != Wire.FINISH) {
                    // An answer numbered 0 would read as an error about the whole connection (docs/protocol.md).
                    throw new ProtocolException("request id 0 is reserved for errors about the whole connection:"
                            + " number requests from 1");
                }
                switch (type) {
                    case Wire.BEGIN, Wire.WATERMARK_QUERY, Wire.ORACLE_STATUS_QUERY -> {
                    }
                    case Wire.RUNNING_QUERY -> Varints.readUnsigned(in); // the limit: any value is well-formed
                    case Wire.COMMIT -> {
                        timestamp(in);
                        rows(in, "rows");
                    }
                    case Wire.COMMIT_CERTIFIED -> {
                        timestamp(in);
                        rows(in, "rows written");
                        rows(in, "rows and ranges read");
                        rows(in, "ranges written");
                    }
                    case Wire.TICKET -> {
                        rows(in, "rows written");
                        rows(in, "ranges written");
                    }
                    case Wire.ABORT, Wire.CLEANED_UP, Wire.FINISH, Wire.QUERY -> timestamp(in);
                    case Wire.HISTORY_QUERY -> {
                        if (!in.isReadable()) {
                            throw new ProtocolException("history query without its kind");
                        }
                        byte kind = in.readByte();
                        if (kind != Wire.HISTORY_AT_TIMESTAMP && kind != Wire.HISTORY_AT_TIME
                                && kind != Wire.HISTORY_OLDEST) {
                            throw new ProtocolException("unknown history query kind " + kind);
                        }
                        Varints.readUnsigned(in); // any value is well-formed; the sequencer says what it cannot serve
                    }
                    case Wire.RANGE_CLEANED_UP -> {
                        long from = Varints.readUnsigned(in);
                        long to = Varints.readUnsigned(in);
                        if (from < 0 || to <= from) {
                            throw new ProtocolException("range (" + from + ", " + to + "] is empty or negative");
                        }
                    }
                    case Wire.AUTHENTICATE -> {
                        if (in.readableBytes() < 1 + Wire.PROOF_BYTES) {
                            throw new ProtocolException("authenticate carries " + in.readableBytes() + " bytes;"
                                    + " expected a role and " + Wire.PROOF_BYTES + " bytes of proof");
                        }
                        in.skipBytes(1 + Wire.PROOF_BYTES);
                    }
                    default -> throw new ProtocolException("unknown message type " + type);
                }
            } catch (ProtocolException e) {
                throw new ProtocolException("malformed frame at byte " + at + ": " + e.getMessage());
            }
        }
    }

    /** A varint count and that many int64 row ids. */
    private static void rows(ByteBuf in, String what) {
        long count = Varints.readUnsigned(in);
        // Divide, do not multiply: count * 8 overflows from 2^60 rows (2^61 rows made it 0), which passed, and then
        // the skip below threw (leaking the frame) or the sequencer read another count than the one checked here.
        if (count < 0 || count > in.readableBytes() / 8) {
            throw new ProtocolException("the request declares " + count + " " + what + " but only " + in.readableBytes()
                    + " bytes follow");
        }
        in.skipBytes((int) count * 8);
    }

    private static void timestamp(ByteBuf in) {
        long ts = Varints.readUnsigned(in);
        if (ts <= 0) {
            throw new ProtocolException("timestamp must be positive, got " + ts);
        }
    }
}
