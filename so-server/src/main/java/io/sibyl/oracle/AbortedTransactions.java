package io.sibyl.oracle;

import io.netty.buffer.ByteBuf;

/**
 * The aborted set with its clean-up protocol. An aborted transaction is forgotten only after its client reported its
 * writes cleaned up and every transaction that started before that report has finished, because such a reader may
 * still hold a version of the aborted writer and must keep seeing it as aborted. Owned by the sequencer thread.
 */
public final class AbortedTransactions {
    private final LongLongHashMap aborted = new LongLongHashMap(1024);
    private final AbortedSetImage image = new AbortedSetImage();
    private long[] pendingTs = new long[1024];
    private long[] pendingReportTs = new long[1024];
    private int pendingHead;
    private int pendingCount;

    /**
     * Identity of no client: a transaction aborted with it (recovered from the journal, or its owner unknown) may be
     * reported cleaned up by the admin role only.
     */
    public static final long NOBODY = 0;

    /** Adds {@code ts} with no owner ({@link #NOBODY}); returns false if it was already aborted. */
    public boolean add(long ts) {
        return add(ts, NOBODY);
    }

    /**
     * Adds {@code ts}, begun by the client {@code identity} (the token its connections share); returns false if it
     * was already aborted.
     */
    public boolean add(long ts, long identity) {
        if (aborted.containsKey(ts)) {
            return false;
        }
        aborted.put(ts, identity);
        image.added(ts);
        return true;
    }

    /** Times the HELLO image was encoded from the whole set. */
    long imageEncodings() {
        return image.encodings();
    }

    /** Writes the set in the HELLO's form ({@link AbortedSetImage#write}), without sorting it in the common case. */
    public void writeForHello(ByteBuf out) {
        image.write(out, this);
    }

    /** The client that began the aborted transaction {@code ts}: {@link #NOBODY} if unknown or not aborted. */
    public long identityOf(long ts) {
        return aborted.get(ts, NOBODY);
    }

    public boolean contains(long ts) {
        return aborted.containsKey(ts);
    }

    public int size() {
        return aborted.size();
    }

    public int pendingForgets() {
        return pendingCount;
    }

    /**
     * Records that {@code ts} was cleaned up when timestamps up to {@code clock} had been handed out. Returns false
     * when {@code ts} is not aborted (nothing to do).
     */
    public boolean cleanedUp(long ts, long clock) {
        if (!aborted.containsKey(ts)) {
            return false;
        }
        if (pendingCount == pendingTs.length) {
            growPending();
        }
        int i = (pendingHead + pendingCount) % pendingTs.length;
        pendingTs[i] = ts;
        pendingReportTs[i] = clock;
        pendingCount++;
        return true;
    }

    /** Forgets every cleaned-up transaction whose report is older than {@code lowWatermark}, telling {@code sink}. */
    public void forgetReportedBefore(long lowWatermark, RunningTransactions.TimestampSink sink) {
        while (pendingCount > 0 && pendingReportTs[pendingHead] < lowWatermark) {
            long ts = pendingTs[pendingHead];
            pendingHead = (pendingHead + 1) % pendingTs.length;
            pendingCount--;
            if (aborted.remove(ts)) {
                image.removed(ts);
                sink.accept(ts);
            }
        }
    }

    /** Calls {@code sink} for every aborted transaction. */
    public void forEach(RunningTransactions.TimestampSink sink) {
        aborted.forEach((k, v) -> sink.accept(k));
    }

    private void growPending() {
        long[] ts = new long[pendingTs.length * 2];
        long[] report = new long[pendingTs.length * 2];
        for (int k = 0; k < pendingCount; k++) {
            int i = (pendingHead + k) % pendingTs.length;
            ts[k] = pendingTs[i];
            report[k] = pendingReportTs[i];
        }
        pendingTs = ts;
        pendingReportTs = report;
        pendingHead = 0;
    }
}
