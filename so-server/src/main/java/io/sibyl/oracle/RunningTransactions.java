package io.sibyl.oracle;

/**
 * The transactions that have a start timestamp and have not finished, in start order (the paper's uncommitted
 * list). Start timestamps are handed out in increasing order, so a ring of them stays sorted: finishing is a binary
 * search, the low watermark is the head, and the transactions T_max has passed are a prefix.
 *
 * <p>A transaction T_max passed is aborted (it can no longer commit) but stays here until its client finishes it, so
 * that the low watermark still protects the versions its snapshot reads. Owned by the sequencer thread.
 */
public final class RunningTransactions {
    /** Result of {@link #finish}: the transaction was running and may commit. */
    public static final int RUNNING = 1;
    /** Result of {@link #finish}: the transaction was running but was already aborted because T_max passed it. */
    public static final int ABORTED_BY_TMAX = 2;
    /** Result of {@link #finish}: no such running transaction. */
    public static final int NOT_FOUND = 0;

    private static final byte DONE = 0;

    private final long[] startTs;
    private final int[] owners;
    private final byte[] states;
    private final int mask;
    private long head;
    private long tail;
    /** Every entry below this index has already been compared with T_max. */
    private long tMaxScanned;

    /** @param capacity maximum number of running transactions; rounded up to a power of two. */
    public RunningTransactions(int capacity) {
        int size = Integer.highestOneBit(Math.max(2, capacity) - 1) << 1;
        startTs = new long[size];
        owners = new int[size];
        states = new byte[size];
        mask = size - 1;
    }

    public int capacity() {
        return startTs.length;
    }

    public boolean isFull() {
        return tail - head == startTs.length;
    }

    /** Number of ring slots in use (finished transactions in the middle still hold theirs until the head passes). */
    public int occupied() {
        return (int) (tail - head);
    }

    /** Adds a transaction; its start timestamp must exceed every one added before. The ring must not be full. */
    public void add(long ts, int owner) {
        if (isFull()) {
            throw new IllegalStateException("running transaction ring is full");
        }
        int i = (int) (tail & mask);
        startTs[i] = ts;
        owners[i] = owner;
        states[i] = (byte) RUNNING;
        tail++;
    }

    /** Marks {@code ts} finished and returns the state it was in ({@link #RUNNING}, {@link #ABORTED_BY_TMAX}). */
    public int finish(long ts) {
        long index = find(ts);
        if (index < 0) {
            return NOT_FOUND;
        }
        int i = (int) (index & mask);
        int state = states[i];
        states[i] = DONE;
        compactHead();
        return state;
    }

    /** State of {@code ts} without changing it. */
    public int stateOf(long ts) {
        long index = find(ts);
        return index < 0 ? NOT_FOUND : states[(int) (index & mask)];
    }

    private long find(long ts) {
        long lo = head;
        long hi = tail - 1;
        while (lo <= hi) {
            long mid = (lo + hi) >>> 1;
            long v = startTs[(int) (mid & mask)];
            if (v < ts) {
                lo = mid + 1;
            } else if (v > ts) {
                hi = mid - 1;
            } else {
                return states[(int) (mid & mask)] == DONE ? -1 : mid;
            }
        }
        return -1;
    }

    private void compactHead() {
        while (head < tail && states[(int) (head & mask)] == DONE) {
            head++;
        }
        if (tMaxScanned < head) {
            tMaxScanned = head;
        }
    }

    /**
     * Marks every still-running transaction that started before {@code tMax} as aborted and reports each to
     * {@code aborted}. Each transaction is reported at most once.
     */
    public void abortStartedBefore(long tMax, TimestampSink aborted) {
        while (tMaxScanned < tail) {
            int i = (int) (tMaxScanned & mask);
            if (startTs[i] >= tMax) {
                return;
            }
            if (states[i] == RUNNING) {
                states[i] = (byte) ABORTED_BY_TMAX;
                aborted.accept(startTs[i]);
            }
            tMaxScanned++;
        }
    }

    /**
     * Removes the oldest transaction to make room; returns its start timestamp and reports it to {@code aborted} if it
     * was still allowed to commit.
     */
    public long evictOldest(TimestampSink aborted) {
        int i = (int) (head & mask);
        long ts = startTs[i];
        if (states[i] == RUNNING) {
            aborted.accept(ts);
        }
        states[i] = DONE;
        compactHead();
        return ts;
    }

    /** Finishes every transaction of {@code owner}; those still allowed to commit are reported to {@code aborted}. */
    public void finishAllOf(int owner, TimestampSink aborted) {
        for (long index = head; index < tail; index++) {
            int i = (int) (index & mask);
            if (owners[i] == owner && states[i] != DONE) {
                if (states[i] == RUNNING) {
                    aborted.accept(startTs[i]);
                }
                states[i] = DONE;
            }
        }
        compactHead();
    }

    /** Start timestamp of the oldest running transaction, or {@code ifEmpty}. */
    public long oldest(long ifEmpty) {
        return head < tail ? startTs[(int) (head & mask)] : ifEmpty;
    }

    /** Receives a timestamp. */
    @FunctionalInterface
    public interface TimestampSink {
        void accept(long ts);
    }
}
