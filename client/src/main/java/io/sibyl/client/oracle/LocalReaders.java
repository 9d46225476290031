package io.sibyl.client.oracle;

import java.util.Arrays;

/**
 * The start timestamps of this client's running transactions, as a multiset that answers "oldest" cheaply. Start
 * timestamps are registered in increasing order by the connection's I/O thread, so they are kept in a sorted ring:
 * registering appends, finishing is a binary search, the oldest is the head. No boxing, no allocation per
 * transaction. Thread-safe; every operation is short, so a plain monitor is cheaper than a concurrent skip list.
 *
 * <p>Each entry also keeps when it was registered, so that {@link #oldestRegisteredSince} can let go of transactions
 * that outlived the oracle's {@code transaction.max.age.ms}: their clients can no longer read in them, and one the
 * application leaked must not make the replica keep every later commit for as long as the client lives.
 */
final class LocalReaders {
    /** Returned by {@link #oldest()} when no transaction is running. */
    static final long NONE = Long.MAX_VALUE;

    private long[] ts = new long[256];
    private boolean[] done = new boolean[256];
    /** When each entry was registered ({@link System#nanoTime}). */
    private long[] since = new long[256];
    private int head;
    private int size;

    void register(long startTs) {
        register(startTs, System.nanoTime());
    }

    /** Registers {@code startTs} as running since {@code nowNanos} ({@link System#nanoTime}). */
    synchronized void register(long startTs, long nowNanos) {
        if (size == ts.length) {
            grow();
        }
        int mask = ts.length - 1;
        int pos = size;
        // Normally appended at the end; an out-of-order registration shifts later entries up to stay sorted.
        while (pos > 0 && ts[(head + pos - 1) & mask] > startTs) {
            int from = (head + pos - 1) & mask;
            int to = (head + pos) & mask;
            ts[to] = ts[from];
            done[to] = done[from];
            since[to] = since[from];
            pos--;
        }
        int at = (head + pos) & mask;
        ts[at] = startTs;
        done[at] = false;
        since[at] = nowNanos;
        size++;
    }

    /** Ends one registration of {@code startTs}; unknown timestamps are ignored. */
    synchronized void unregister(long startTs) {
        int mask = ts.length - 1;
        int lo = 0;
        int hi = size - 1;
        while (lo <= hi) { // leftmost entry >= startTs
            int mid = (lo + hi) >>> 1;
            if (ts[(head + mid) & mask] < startTs) {
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        for (int i = lo; i < size && ts[(head + i) & mask] == startTs; i++) {
            int at = (head + i) & mask;
            if (!done[at]) {
                done[at] = true;
                break;
            }
        }
        while (size > 0 && done[head]) {
            head = (head + 1) & mask;
            size--;
        }
    }

    /** Start timestamp of the oldest running local transaction, or {@link #NONE}. */
    synchronized long oldest() {
        return size == 0 ? NONE : ts[head];
    }

    /**
     * Like {@link #oldest()}, but first forgets the oldest entries registered before {@code cutoffNanos}
     * ({@link System#nanoTime}): transactions past the oracle's max age, which can no longer read. An entry that
     * expired behind a younger one has a larger start timestamp, so it does not decide the answer; it goes when it
     * reaches the head.
     */
    synchronized long oldestRegisteredSince(long cutoffNanos) {
        int mask = ts.length - 1;
        while (size > 0 && (done[head] || since[head] - cutoffNanos < 0)) {
            head = (head + 1) & mask;
            size--;
        }
        return size == 0 ? NONE : ts[head];
    }

    synchronized long[] snapshot() {
        long[] out = new long[size];
        int n = 0;
        for (int i = 0; i < size; i++) {
            int at = (head + i) & (ts.length - 1);
            if (!done[at]) {
                out[n++] = ts[at];
            }
        }
        return Arrays.copyOf(out, n);
    }

    private void grow() {
        long[] t = new long[ts.length * 2];
        boolean[] d = new boolean[ts.length * 2];
        long[] r = new long[ts.length * 2];
        for (int i = 0; i < size; i++) {
            t[i] = ts[(head + i) & (ts.length - 1)];
            d[i] = done[(head + i) & (ts.length - 1)];
            r[i] = since[(head + i) & (ts.length - 1)];
        }
        ts = t;
        done = d;
        since = r;
        head = 0;
    }
}
