package io.sibyl.oracle;

/**
 * Start-to-commit timestamps of transactions that committed after T_max (the paper's T_c map, down to T_max). Kept
 * in commit order in a fixed ring, with a hash index by start timestamp for commit queries. When the ring is full the
 * caller must raise T_max past the oldest entry; that is how this structure stays bounded even when no row is ever
 * evicted from the conflict table (a few hot rows). Owned by the sequencer thread.
 */
public final class RecentCommits {
    private final long[] startTs;
    private final long[] commitTs;
    private final int mask;
    private final LongLongHashMap byStart;
    private long head;
    private long tail;

    public RecentCommits(int capacity) {
        int size = Integer.highestOneBit(Math.max(2, capacity) - 1) << 1;
        startTs = new long[size];
        commitTs = new long[size];
        mask = size - 1;
        byStart = new LongLongHashMap(size, true);
    }

    /** Heap bytes a window of {@code capacity} commits allocates. */
    static long footprintBytes(int capacity) {
        int size = Integer.highestOneBit(Math.max(2, capacity) - 1) << 1;
        return 2L * size * Long.BYTES + LongLongHashMap.footprintBytes(size);
    }

    /**
     * Fills the window with the commits of a recovered journal ({@code starts} / {@code commits}, ascending by commit
     * timestamp, all above {@code tMax} and at most {@code lastTimestamp}), raising T_max past the oldest when there
     * are more than it holds, as when the window fills while running. Returns the T_max to continue with.
     */
    long recover(long[] starts, long[] commits, long tMax, long lastTimestamp) {
        long raised = tMax;
        long previousCommit = tMax;
        for (int i = 0; i < starts.length; i++) {
            long c = commits[i];
            if (c <= previousCommit || c > lastTimestamp || starts[i] >= c || starts[i] <= 0) {
                throw new IllegalArgumentException("recovered commit " + starts[i] + " -> " + c + " is not above"
                        + " T_max " + tMax + " in ascending commit order");
            }
            previousCommit = c;
            if (isFull()) {
                raised = Math.max(raised, oldestCommitTs());
                trimTo(raised);
            }
            add(starts[i], c);
        }
        return raised;
    }

    public boolean isFull() {
        return tail - head == startTs.length;
    }

    public int size() {
        return (int) (tail - head);
    }

    /** Commit timestamp of the oldest entry; only valid when not empty. */
    public long oldestCommitTs() {
        return commitTs[(int) (head & mask)];
    }

    /** Appends a commit; commit timestamps must increase. The ring must not be full. */
    public void add(long start, long commit) {
        int i = (int) (tail & mask);
        startTs[i] = start;
        commitTs[i] = commit;
        tail++;
        byStart.put(start, commit);
    }

    /** Commit timestamp of the transaction that started at {@code start}, or 0 if not known here. */
    public long commitTsOf(long start) {
        return byStart.get(start, 0);
    }

    /** Forgets every commit at or below {@code tMax}. */
    public void trimTo(long tMax) {
        while (head < tail) {
            int i = (int) (head & mask);
            if (commitTs[i] > tMax) {
                return;
            }
            byStart.remove(startTs[i]);
            head++;
        }
    }
}
