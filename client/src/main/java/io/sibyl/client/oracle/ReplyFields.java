package io.sibyl.client.oracle;

import io.netty.buffer.ByteBuf;
import io.sibyl.protocol.AbortedRange;
import io.sibyl.protocol.Varints;
import io.sibyl.protocol.Wire;

import java.util.Arrays;

/** Readers of the oracle's reply fields that are lists of timestamps (HELLO's aborted set, history points). */
final class ReplyFields {
    private ReplyFields() {
    }

    /** A {@link Wire#HISTORY_POINT} after its id; null when the oracle keeps none. */
    static HistoryPoint readHistoryPoint(ByteBuf in) {
        byte flags = in.readByte();
        long snapshotTs = Varints.readUnsigned(in);
        long bound = Varints.readUnsigned(in);
        long[] running = readAscending(in, "running transactions of a history point");
        long[] committedAfter = readAscending(in, "commits after a history point");
        return (flags & Wire.HISTORY_NONE) != 0 ? null : new HistoryPoint(snapshotTs, bound, running, committedAfter);
    }

    /**
     * The HELLO's aborted set: a snapshot, the timestamps added since and those removed since (each ascending), as
     * one ascending array of the snapshot and the added ones less the removed ones. {@link AbortedRange}s follow it.
     */
    static long[] readAbortedSet(ByteBuf in) {
        long[] snapshot = readAscending(in, "aborted set size");
        long[] added = readAscending(in, "aborted additions");
        long[] removed = readAscending(in, "aborted removals");
        long[] all = Arrays.copyOf(snapshot, snapshot.length + added.length);
        System.arraycopy(added, 0, all, snapshot.length, added.length);
        Arrays.sort(all);
        int n = 0;
        for (long ts : all) {
            if (Arrays.binarySearch(removed, ts) < 0 && (n == 0 || all[n - 1] != ts)) {
                all[n++] = ts;
            }
        }
        return Arrays.copyOf(all, n);
    }

    /** A count, then that many ascending timestamps, each sent as the gap from the one before. */
    private static long[] readAscending(ByteBuf in, String what) {
        int n = Varints.readBoundedInt(in, in.readableBytes(), what);
        long[] out = new long[n];
        long previous = 0;
        for (int i = 0; i < n; i++) {
            previous += Varints.readUnsigned(in);
            out[i] = previous;
        }
        return out;
    }
}
