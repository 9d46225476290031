package io.sibyl.oracle;

import io.netty.buffer.ByteBuf;
import io.sibyl.protocol.Frames;
import io.sibyl.protocol.Varints;
import io.sibyl.protocol.Wire;

/**
 * Answers HISTORY_QUERY: where a read of the past reads. Like every reply it leaves with the block, so the delta
 * before it holds every decision at or below the point's timestamp: the client's replica knows which writers aborted.
 */
final class HistoryReplies {
    private static final long[] NONE = new long[0];

    private HistoryReplies() {
    }

    /** Writes to {@code out} the answer to query {@code id}: {@code kind} ({@code Wire.HISTORY_*}) at {@code value}. */
    static void answer(ReadHorizon horizon, ByteBuf out, long id, byte kind, long value) {
        HistoryPoints.Point point;
        long bound;
        long[] committedAfter;
        if (kind == Wire.HISTORY_OLDEST) {
            point = horizon.oldestHistoryPoint();
            bound = point == null ? 0 : point.snapshotTs;
            committedAfter = NONE;
        } else {
            HistoryPoints.Answer answer = kind == Wire.HISTORY_AT_TIME
                    ? horizon.historyAtTime(value) : horizon.historyAtTimestamp(value);
            if (answer.refusal() != null) {
                Frames.writeError(out, id, Wire.ERR_HISTORY, answer.refusal());
                return;
            }
            point = answer.point();
            bound = answer.bound();
            committedAfter = answer.committedAfter();
        }
        out.writeByte(Wire.HISTORY_POINT);
        Varints.writeUnsigned(out, id);
        out.writeByte(point == null ? Wire.HISTORY_NONE : 0);
        Varints.writeUnsigned(out, point == null ? 0 : point.snapshotTs);
        Varints.writeUnsigned(out, bound);
        writeAscending(out, point == null ? NONE : point.running);
        writeAscending(out, committedAfter);
    }

    private static void writeAscending(ByteBuf out, long[] values) {
        Varints.writeUnsigned(out, values.length);
        long previous = 0;
        for (long v : values) {
            Varints.writeUnsigned(out, v - previous);
            previous = v;
        }
    }
}
