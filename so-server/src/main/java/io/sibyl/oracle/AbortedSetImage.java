package io.sibyl.oracle;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sibyl.protocol.Varints;

import java.util.Arrays;

/**
 * The aborted set as every HELLO carries it, kept so that a handshake costs a copy of bytes encoded earlier, not a
 * sort of the whole set: an encoded snapshot (ascending start timestamps) plus the timestamps added and removed since,
 * each list ascending; the set is the snapshot and the added ones less the removed ones. The snapshot is encoded
 * again only when a HELLO finds more than {@link #MAX_CHANGES} changes since the last one; until then the change
 * lists stay below that size, so a storm of handshakes costs one encoding at most, and a set that churns without
 * handshakes costs nothing. Sequencer thread.
 */
final class AbortedSetImage {
    /** Changes kept beside the snapshot; beyond them the snapshot is encoded again at the next HELLO. */
    static final int MAX_CHANGES = 4096;

    private byte[] snapshot = encode(new long[0]);
    private long[] added = new long[16];
    private int addedCount;
    private long[] removed = new long[16];
    private int removedCount;
    /** More changes than the lists hold happened: the snapshot must be encoded again from the set. */
    private boolean stale;
    /** Times the snapshot was encoded from the set (tests, statistics). */
    private long encodings;

    /** {@code ts} joined the set. */
    void added(long ts) {
        if (roomForAChange()) {
            added = append(added, addedCount++, ts);
        }
    }

    /** {@code ts} left the set (a start timestamp never joins it again, so removal wins over an addition). */
    void removed(long ts) {
        if (roomForAChange()) {
            removed = append(removed, removedCount++, ts);
        }
    }

    private boolean roomForAChange() {
        if (stale) {
            return false;
        }
        if (addedCount + removedCount >= MAX_CHANGES) {
            invalidate();
            return false;
        }
        return true;
    }

    private static long[] append(long[] list, int at, long ts) {
        long[] out = at == list.length ? Arrays.copyOf(list, list.length * 2) : list;
        out[at] = ts;
        return out;
    }

    /**
     * Writes the HELLO's aborted set: snapshot, then the added and the removed timestamps (each a varint count and
     * ascending varint deltas). {@code set} is read only when the snapshot must be encoded again.
     */
    void write(ByteBuf out, AbortedTransactions set) {
        if (stale) {
            long[] all = new long[set.size()];
            int[] n = {0};
            set.forEach(ts -> all[n[0]++] = ts);
            snapshot = encode(all);
            encodings++;
            addedCount = 0;
            removedCount = 0;
            stale = false;
        }
        out.writeBytes(snapshot);
        writeSorted(out, added, addedCount);
        writeSorted(out, removed, removedCount);
    }

    long encodings() {
        return encodings;
    }

    /** Drops the change lists: the next HELLO encodes the snapshot again from the set. */
    private void invalidate() {
        stale = true;
        addedCount = 0;
        removedCount = 0;
    }

    private static byte[] encode(long[] timestamps) {
        ByteBuf b = Unpooled.buffer(8 + timestamps.length * 4);
        writeSorted(b, timestamps, timestamps.length);
        byte[] bytes = new byte[b.readableBytes()];
        b.readBytes(bytes);
        return bytes;
    }

    private static void writeSorted(ByteBuf out, long[] timestamps, int count) {
        Arrays.sort(timestamps, 0, count);
        Varints.writeUnsigned(out, count);
        long previous = 0;
        for (int i = 0; i < count; i++) {
            Varints.writeUnsigned(out, timestamps[i] - previous);
            previous = timestamps[i];
        }
    }
}
