package io.sibyl.oracle;

/**
 * The transactions that have a start timestamp and have not finished, in start order (the paper's uncommitted
 * list). Start timestamps are handed out in increasing order, so a ring of them stays sorted: finishing is a binary
 * search, the low watermark is the head, and the transactions T_max has passed are a prefix.
 *
 * <p>A transaction T_max passed is aborted (it can no longer commit) but stays here until its client finishes it, so
 * that the low watermark still protects the versions its snapshot reads. A running transaction is never evicted:
 * at the limit new transactions are refused instead. Finished transactions in the middle of the ring give their
 * slots back when the ring is compacted (the ring has room for twice the limit, so compaction is amortized O(1)).
 * Owned by the sequencer thread.
 */
public final class RunningTransactions implements RunningView {
    /** Result of {@link #finish}: the transaction was running and may commit. */
    public static final int RUNNING = 1;
    /** Result of {@link #finish}: the transaction was running but was already aborted because T_max passed it. */
    public static final int ABORTED_BY_TMAX = 2;
    /**
     * Result of {@link #finish}: the transaction was running but another connection aborted it ({@link #abortHeld});
     * like {@link #ABORTED_BY_TMAX} it stays, holding the low watermark for its owner's snapshot, until finished.
     */
    public static final int ABORTED_ELSEWHERE = 3;
    /** Result of {@link #finish}: no such running transaction. */
    public static final int NOT_FOUND = 0;

    private static final byte DONE = 0;

    private final long[] startTs;
    private final int[] owners;
    private final byte[] states;
    private final int mask;
    private final int maxLive;
    /** The caps per owner (connection) and per identity, and the counts they are checked against. */
    private final RunningQuotas quotas;
    private int live;
    private long head;
    private long tail;
    /** Every entry below this index has already been compared with T_max. */
    private long tMaxScanned;
    /** Owner of the transaction the last {@link #finish} found. */
    private int lastFinishedOwner = -1;

    /** @param maxLive maximum number of running transactions, with no quota per owner. */
    public RunningTransactions(int maxLive) {
        this(maxLive, maxLive);
    }

    /**
     * @param maxLive     maximum number of running transactions
     * @param maxPerOwner maximum number of them one owner may hold ({@link #ownerAtLimit})
     */
    public RunningTransactions(int maxLive, int maxPerOwner) {
        this(maxLive, maxPerOwner, maxLive);
    }

    /**
     * @param maxLive        maximum number of running transactions
     * @param maxPerOwner    maximum number of them one owner may hold ({@link #ownerAtLimit})
     * @param maxPerIdentity maximum number of them the owners of one identity may hold together
     *                       ({@link #identityAtLimit}; owners are given their identity by {@link #identify})
     */
    public RunningTransactions(int maxLive, int maxPerOwner, int maxPerIdentity) {
        this.maxLive = maxLive;
        this.quotas = new RunningQuotas(maxLive, maxPerOwner, maxPerIdentity);
        int size = Integer.highestOneBit(Math.max(2, maxLive) * 2 - 1) << 1;
        startTs = new long[size];
        owners = new int[size];
        states = new byte[size];
        mask = size - 1;
    }

    /** Heap bytes a table of {@code maxLive} running transactions allocates. */
    static long footprintBytes(int maxLive) {
        int size = Integer.highestOneBit(Math.max(2, maxLive) * 2 - 1) << 1;
        return (long) size * (Long.BYTES + Integer.BYTES + 1);
    }

    @Override
    public int capacity() {
        return maxLive;
    }

    public boolean isFull() {
        return live >= maxLive;
    }

    @Override
    public int live() {
        return live;
    }

    @Override
    public int capacityPerOwner() {
        return quotas.perOwner();
    }

    @Override
    public int capacityPerIdentity() {
        return quotas.perIdentity();
    }

    /** {@code owner} is a connection of the identity {@code identityKey} (positive) until it is lost. */
    public void identify(int owner, long identityKey) {
        quotas.identify(owner, identityKey);
    }

    /** {@code owner} is gone (after {@link #finishAllOf}): its identity is forgotten. */
    public void forgetOwner(int owner) {
        quotas.forget(owner);
    }

    /** True if the owners of {@code owner}'s identity hold as many running transactions as one identity may. */
    public boolean identityAtLimit(int owner) {
        return quotas.identityAtLimit(owner);
    }

    @Override
    public long liveOfIdentityOf(int owner) {
        return quotas.heldByIdentityOf(owner);
    }

    @Override
    public int liveOf(int owner) {
        long counted = quotas.heldBy(owner);
        if (counted < 0) {
            int n = 0;
            for (long index = head; index < tail; index++) {
                int i = (int) (index & mask);
                n += owners[i] == owner && states[i] != DONE ? 1 : 0;
            }
            return n;
        }
        return (int) counted;
    }

    /** True if {@code owner} holds as many running transactions as one owner may: it may add no more. */
    public boolean ownerAtLimit(int owner) {
        return quotas.ownerAtLimit(owner);
    }

    /**
     * Adds a transaction; its start timestamp must exceed every one added before. Must not be {@link #isFull()}, nor
     * {@link #ownerAtLimit} or {@link #identityAtLimit} for {@code owner}.
     */
    public void add(long ts, int owner) {
        if (isFull()) {
            throw new IllegalStateException("running transaction limit of " + maxLive + " reached");
        }
        quotas.added(owner);
        if (tail - head == startTs.length) {
            compact();
        }
        int i = (int) (tail & mask);
        startTs[i] = ts;
        owners[i] = owner;
        states[i] = (byte) RUNNING;
        tail++;
        live++;
    }

    /** Squeezes finished entries out of the ring, keeping start order. */
    private void compact() {
        long write = head;
        long newScanned = head;
        for (long read = head; read < tail; read++) {
            int r = (int) (read & mask);
            if (states[r] == DONE) {
                continue;
            }
            if (read < tMaxScanned) {
                newScanned++;
            }
            int w = (int) (write & mask);
            startTs[w] = startTs[r];
            owners[w] = owners[r];
            states[w] = states[r];
            write++;
        }
        tail = write;
        tMaxScanned = newScanned;
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
        live--;
        lastFinishedOwner = owners[i];
        quotas.finished(owners[i], 1);
        compactHead();
        return state;
    }

    /** Owner of the transaction the last {@link #finish} found (unspecified when it found none). */
    public int lastFinishedOwner() {
        return lastFinishedOwner;
    }

    /** Owner of {@code ts} while it is in the table, else -1. */
    public int ownerOf(long ts) {
        long index = find(ts);
        return index < 0 ? -1 : owners[(int) (index & mask)];
    }

    /**
     * True if {@code ts} is in the table (running, or aborted by T_max and not yet finished by its client) and was
     * added for another owner than {@code owner}.
     */
    public boolean ownedByAnother(long ts, int owner) {
        long index = find(ts);
        return index >= 0 && owners[(int) (index & mask)] != owner;
    }

    /**
     * Marks {@code ts}, if it is running, {@link #ABORTED_ELSEWHERE} and returns true; it stays until its owner
     * finishes it (or is lost). Returns false for a transaction in any other state, which is left unchanged.
     */
    public boolean abortHeld(long ts) {
        long index = find(ts);
        if (index < 0 || states[(int) (index & mask)] != RUNNING) {
            return false;
        }
        states[(int) (index & mask)] = (byte) ABORTED_ELSEWHERE;
        return true;
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
        abortStartedBefore(tMax, (ts, owner) -> aborted.accept(ts));
    }

    /** As {@link #abortStartedBefore(long, TimestampSink)}, telling each transaction's owner. */
    public void abortStartedBefore(long tMax, AbortSink aborted) {
        while (tMaxScanned < tail) {
            int i = (int) (tMaxScanned & mask);
            if (startTs[i] >= tMax) {
                return;
            }
            if (states[i] == RUNNING) {
                states[i] = (byte) ABORTED_BY_TMAX;
                aborted.aborted(startTs[i], owners[i]);
            }
            tMaxScanned++;
        }
    }

    /**
     * Finishes every transaction of {@code owner}; those still allowed to commit are reported to {@code aborted}.
     * Returns the oldest start timestamp finished, or {@link Long#MAX_VALUE} if the owner had none.
     */
    public long finishAllOf(int owner, TimestampSink aborted) {
        return finishAllOf(owner, (ts, o) -> aborted.accept(ts));
    }

    /** As {@link #finishAllOf(int, TimestampSink)}, telling each transaction's owner. */
    public long finishAllOf(int owner, AbortSink aborted) {
        long oldest = Long.MAX_VALUE;
        int finished = 0;
        for (long index = head; index < tail; index++) {
            int i = (int) (index & mask);
            if (owners[i] == owner && states[i] != DONE) {
                if (states[i] == RUNNING) {
                    aborted.aborted(startTs[i], owner);
                }
                oldest = Math.min(oldest, startTs[i]);
                states[i] = DONE;
                live--;
                finished++;
            }
        }
        quotas.finished(owner, finished);
        compactHead();
        return oldest;
    }

    /**
     * Finishes every transaction that started at or before {@code lastTs}; those still allowed to commit are reported
     * to {@code aborted}. Returns how many were finished.
     */
    public int finishStartedUpTo(long lastTs, TimestampSink aborted) {
        return finishStartedUpTo(lastTs, (ts, owner) -> aborted.accept(ts));
    }

    /** As {@link #finishStartedUpTo(long, TimestampSink)}, telling each transaction's owner. */
    public int finishStartedUpTo(long lastTs, AbortSink aborted) {
        int finished = 0;
        for (long index = head; index < tail; index++) {
            int i = (int) (index & mask);
            if (startTs[i] > lastTs) {
                break;
            }
            if (states[i] != DONE) {
                if (states[i] == RUNNING) {
                    aborted.aborted(startTs[i], owners[i]);
                }
                states[i] = DONE;
                live--;
                quotas.finished(owners[i], 1);
                finished++;
            }
        }
        compactHead();
        return finished;
    }

    /** Start timestamp of the oldest running transaction, or {@code ifEmpty}. */
    public long oldest(long ifEmpty) {
        return head < tail ? startTs[(int) (head & mask)] : ifEmpty;
    }

    @Override
    public void forEachLive(LiveSink sink) {
        for (long index = head; index < tail; index++) {
            int i = (int) (index & mask);
            if (states[i] != DONE && !sink.live(startTs[i], owners[i], states[i])) {
                return;
            }
        }
    }

    /** Receives a timestamp. */
    @FunctionalInterface
    public interface TimestampSink {
        void accept(long ts);
    }

    /** Receives an aborted transaction's start timestamp and its owner. */
    @FunctionalInterface
    public interface AbortSink {
        void aborted(long ts, int owner);
    }
}
