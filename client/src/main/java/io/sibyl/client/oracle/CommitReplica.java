package io.sibyl.client.oracle;

import io.netty.buffer.ByteBuf;
import io.sibyl.protocol.DecisionBlockReader;
import io.sibyl.protocol.DecisionVisitor;

import java.util.Arrays;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentSkipListMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * The client's read-only replica of the oracle's commit metadata (paper Section IV, "Client replica of the SO"):
 * start-to-commit timestamps above T_max, the aborted set, T_max and T_init. It answers the paper's Algorithm 4
 * locally so that snapshot reads need no round trip to the oracle.
 *
 * <p>One thread (the connection's I/O thread) applies decision blocks; any thread may ask {@link #inSnapshot}. A
 * sequence counter makes each block appear atomically to readers. A commit timestamp is forgotten only when it is at
 * or below T_max <em>and</em> below the start timestamp of every running local transaction, so a long reader's
 * snapshot never shifts while T_max moves past it.
 */
public final class CommitReplica implements DecisionVisitor {
    private final long tInit;
    private final ConcurrentHashMap<Long, Long> commits = new ConcurrentHashMap<>();
    private final Set<Long> aborted = ConcurrentHashMap.newKeySet();
    /** Writers below T_init the oracle told us committed (answers to commit queries). */
    private final Set<Long> committedBeforeInit = ConcurrentHashMap.newKeySet();
    /** Running local transactions by start timestamp, with a count since a caller may register one twice. */
    private final ConcurrentSkipListMap<Long, AtomicInteger> readers = new ConcurrentSkipListMap<>();
    private volatile long tMax;
    private volatile int version;
    /** Commits in commit order, for trimming; touched only by the applying thread. */
    private long[] fifoStart = new long[1024];
    private long[] fifoCommit = new long[1024];
    private int fifoHead;
    private int fifoSize;

    /** Starts from the handshake: the oracle's clock, T_max and aborted set when this connection began. */
    public CommitReplica(long tInit, long tMax, long[] abortedAtInit) {
        this.tInit = tInit;
        this.tMax = tMax;
        for (long ts : abortedAtInit) {
            aborted.add(ts);
        }
    }

    public long tInit() {
        return tInit;
    }

    public long tMax() {
        return tMax;
    }

    /** Number of commit timestamps held (for tests and memory accounting). */
    public int commitCount() {
        return commits.size();
    }

    public int abortedCount() {
        return aborted.size();
    }

    /** Declares a local transaction running: commit timestamps it may need are kept until {@link #unregisterReader}. */
    public void registerReader(long startTs) {
        readers.computeIfAbsent(startTs, k -> new AtomicInteger()).incrementAndGet();
    }

    public void unregisterReader(long startTs) {
        readers.computeIfPresent(startTs, (k, n) -> n.decrementAndGet() == 0 ? null : n);
    }

    /** Applies a run of decision blocks received from the oracle. Only the connection's I/O thread calls this. */
    public void apply(ByteBuf blocks) {
        version++;
        try {
            DecisionBlockReader.readAll(blocks, this);
            trim();
        } finally {
            version++;
        }
    }

    /**
     * Algorithm 4 for a version written by transaction {@code writerTs}, read by the local transaction
     * {@code readerTs} (which must be registered, or have started after the replica's current T_max).
     */
    public Visibility inSnapshot(long writerTs, long readerTs) {
        if (writerTs == readerTs) {
            return Visibility.VISIBLE;
        }
        while (true) {
            int before = version;
            if ((before & 1) == 0) {
                Visibility v = decide(writerTs, readerTs);
                if (version == before) {
                    return v;
                }
            }
            Thread.onSpinWait();
        }
    }

    private Visibility decide(long writerTs, long readerTs) {
        Long commitTs = commits.get(writerTs);
        if (commitTs != null) {
            return commitTs < readerTs ? Visibility.VISIBLE : Visibility.INVISIBLE;
        }
        if (aborted.contains(writerTs)) {
            return Visibility.INVISIBLE;
        }
        if (writerTs < tMax) {
            return Visibility.VISIBLE; // committed long ago (below T_max, not aborted, not still needed here)
        }
        if (writerTs >= tInit) {
            // Every commit after T_init reaches us before any start timestamp it precedes: not committed for us.
            return Visibility.INVISIBLE;
        }
        if (committedBeforeInit.contains(writerTs)) {
            return Visibility.VISIBLE;
        }
        return Visibility.ASK_ORACLE;
    }

    /** Records the oracle's answer that {@code writerTs} (below T_init) committed before this connection began. */
    public void rememberCommittedBeforeInit(long writerTs) {
        if (writerTs < tInit) {
            committedBeforeInit.add(writerTs);
        }
    }

    /** True if the replica knows {@code writerTs} aborted. */
    public boolean isAborted(long writerTs) {
        return aborted.contains(writerTs);
    }

    /** Commit timestamp the replica holds for {@code writerTs}, or 0. */
    public long commitTimestampOf(long writerTs) {
        Long c = commits.get(writerTs);
        return c == null ? 0 : c;
    }

    @Override
    public void onCommit(long startTs, long commitTs) {
        if (commits.putIfAbsent(startTs, commitTs) == null) {
            if (fifoSize == fifoStart.length) {
                growFifo();
            }
            int i = (fifoHead + fifoSize) % fifoStart.length;
            fifoStart[i] = startTs;
            fifoCommit[i] = commitTs;
            fifoSize++;
        }
    }

    @Override
    public void onAbort(long startTs) {
        aborted.add(startTs);
    }

    @Override
    public void onForget(long startTs) {
        aborted.remove(startTs);
    }

    @Override
    public void onTmax(long newTmax) {
        if (newTmax > tMax) {
            tMax = newTmax;
        }
    }

    private void trim() {
        long bound = tMax;
        Long oldestReader = readers.isEmpty() ? null : readers.firstKey();
        if (oldestReader != null && oldestReader - 1 < bound) {
            bound = oldestReader - 1;
        }
        while (fifoSize > 0 && fifoCommit[fifoHead] <= bound) {
            commits.remove(fifoStart[fifoHead]);
            fifoHead = (fifoHead + 1) % fifoStart.length;
            fifoSize--;
        }
        if (!committedBeforeInit.isEmpty()) {
            committedBeforeInit.removeIf(ts -> ts < tMax);
        }
    }

    private void growFifo() {
        long[] s = new long[fifoStart.length * 2];
        long[] c = new long[fifoStart.length * 2];
        for (int k = 0; k < fifoSize; k++) {
            int i = (fifoHead + k) % fifoStart.length;
            s[k] = fifoStart[i];
            c[k] = fifoCommit[i];
        }
        fifoStart = s;
        fifoCommit = c;
        fifoHead = 0;
    }

    @Override
    public String toString() {
        return "CommitReplica{tInit=" + tInit + ", tMax=" + tMax + ", commits=" + commits.size() + ", aborted="
                + aborted.size() + ", readers=" + Arrays.toString(readers.keySet().toArray()) + "}";
    }
}
