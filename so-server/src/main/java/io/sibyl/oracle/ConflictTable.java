package io.sibyl.oracle;

/**
 * The bounded lastCommit map of the paper's Algorithm 3: for each recently written row id, the commit timestamp of
 * the last transaction that wrote it. Set-associative: a row hashes to a bucket of {@code WAYS} slots stored next to
 * each other (row id and commit timestamp interleaved), so a lookup touches one or two cache lines. When a bucket is
 * full the slot with the oldest commit timestamp is evicted and the table's {@code tMax} rises to it: every row that
 * is not in the table was last committed at or before {@code tMax}.
 *
 * <p>Owned by the sequencer thread; allocates nothing after construction.
 */
public final class ConflictTable {
    static final int WAYS = 8;
    private final long[] slots;
    private final int bucketShift;
    private long tMax;

    /** @param capacity number of rows remembered; rounded up to a power of two, at least {@code WAYS}. */
    public ConflictTable(int capacity) {
        int buckets = Integer.highestOneBit(Math.max(1, (Math.max(capacity, WAYS) + WAYS - 1) / WAYS - 1)) << 1;
        slots = new long[buckets * WAYS * 2];
        bucketShift = 64 - Integer.numberOfTrailingZeros(buckets);
    }

    /** Heap bytes a table of {@code capacity} rows allocates (checked against the heap before starting). */
    static long footprintBytes(int capacity) {
        int buckets = Integer.highestOneBit(Math.max(1, (Math.max(capacity, WAYS) + WAYS - 1) / WAYS - 1)) << 1;
        return (long) buckets * WAYS * 2 * Long.BYTES;
    }

    /** Number of rows the table can remember. */
    public int capacity() {
        return slots.length / 2;
    }

    private int bucketStart(long rowId) {
        if (bucketShift == 64) {
            return 0;
        }
        return (int) ((rowId * 0x9E3779B97F4A7C15L) >>> bucketShift) * WAYS * 2;
    }

    /** Last commit timestamp recorded for {@code rowId}, or 0 if the row is not remembered (then it is at most tMax). */
    public long lastCommit(long rowId) {
        int start = bucketStart(rowId);
        for (int i = start, end = start + WAYS * 2; i < end; i += 2) {
            if (slots[i] == rowId && slots[i + 1] != 0) {
                return slots[i + 1];
            }
        }
        return 0;
    }

    /**
     * Touches the bucket of every row so that their cache misses overlap instead of being paid one after another
     * by {@link #lastCommit} (the table is far larger than the caches). Returns a value only to keep the loads alive.
     */
    public long prefetch(long[] rowIds, int count) {
        long sink = 0;
        for (int i = 0; i < count; i++) {
            sink += slots[bucketStart(rowIds[i]) + 1];
        }
        return sink;
    }

    /** Records that {@code rowId} was committed at {@code commitTs}, evicting the bucket's oldest entry if needed. */
    public void record(long rowId, long commitTs) {
        int start = bucketStart(rowId);
        int end = start + WAYS * 2;
        int oldest = start;
        long oldestTs = Long.MAX_VALUE;
        for (int i = start; i < end; i += 2) {
            long ts = slots[i + 1];
            if (ts == 0 || slots[i] == rowId) {
                slots[i] = rowId;
                slots[i + 1] = commitTs;
                return;
            }
            if (ts < oldestTs) {
                oldestTs = ts;
                oldest = i;
            }
        }
        if (oldestTs > tMax) {
            tMax = oldestTs;
        }
        slots[oldest] = rowId;
        slots[oldest + 1] = commitTs;
    }

    /** Highest commit timestamp evicted so far. */
    public long tMax() {
        return tMax;
    }
}
