package io.sibyl.bench;

import io.netty.buffer.ByteBuf;
import io.sibyl.oracle.LongLongHashMap;
import io.sibyl.oracle.journal.Checkpoint;
import io.sibyl.oracle.journal.LedgerRegistry;
import io.sibyl.oracle.journal.RecoveredState;
import io.sibyl.protocol.AbortedRange;
import io.sibyl.protocol.DecisionBlockReader;
import io.sibyl.protocol.DecisionVisitor;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * A replay rule set proposed for the so-server owner, measured by {@code RecoveryBench breakdown --replay prototype}
 * against the real {@code JournalReplay}; not used by the oracle. It rests on one property of the journal: one oracle
 * hands out commit timestamps in increasing order and journals its decisions in that order, and a recovered oracle
 * starts above every earlier timestamp. So the commits arrive sorted by commit timestamp: they are appended to two
 * parallel arrays (no hashing), T_max trims a prefix (no copying of the survivors), and the result needs no sort.
 * A COMMIT whose commit timestamp is not above the last one appended can only come from a suffix the journal wrote
 * again after a failed add: it is looked up by binary search and skipped if present (inserted in place otherwise, to
 * stay correct if the property ever fails).
 */
final class ReplayPrototype implements DecisionVisitor {
    private long[] starts = new long[1 << 16];
    private long[] commitTs = new long[1 << 16];
    private int head;
    private int size;
    private LongLongHashMap aborted = new LongLongHashMap(1024);
    private final List<AbortedRange> ranges = new ArrayList<>();
    private long tMax;
    private long maxReserved;
    private long maxTimestamp;
    long records;
    long outOfOrder;

    void entry(ByteBuf data) {
        if (Checkpoint.isCheckpoint(data)) {
            checkpoint(Checkpoint.decode(data));
        } else {
            DecisionBlockReader.readAll(data, this);
        }
    }

    /** A checkpoint is the state of everything before it (JournalReplay's rule); commits above T_max stay. */
    private void checkpoint(Checkpoint c) {
        if (c.lastTimestamp() > maxTimestamp) {
            maxTimestamp = c.lastTimestamp();
        }
        onTmax(c.tMax());
        records--; // onTmax counted it as a record
        aborted = new LongLongHashMap(Math.max(1024, c.aborted().length * 2));
        for (long ts : c.aborted()) {
            aborted.put(ts, 1);
        }
        ranges.clear();
        ranges.addAll(c.abortedRanges());
    }

    @Override
    public void onCommit(long startTs, long commit) {
        records++;
        if (commit > maxTimestamp) {
            maxTimestamp = commit;
        }
        if (commit <= tMax) {
            return;
        }
        if (size > head && commit <= commitTs[size - 1]) {
            int at = Arrays.binarySearch(commitTs, head, size, commit);
            if (at >= 0) {
                return; // a rewritten suffix repeats it
            }
            outOfOrder++;
            insertAt(-at - 1, startTs, commit);
            return;
        }
        if (size == commitTs.length) {
            makeRoom();
        }
        starts[size] = startTs;
        commitTs[size++] = commit;
    }

    private void insertAt(int at, long startTs, long commit) {
        if (size == commitTs.length) {
            int shift = head;
            makeRoom();
            at -= shift;
        }
        System.arraycopy(starts, at, starts, at + 1, size - at);
        System.arraycopy(commitTs, at, commitTs, at + 1, size - at);
        starts[at] = startTs;
        commitTs[at] = commit;
        size++;
    }

    /** Drops the trimmed prefix, and grows only if the live part fills more than half of the arrays. */
    private void makeRoom() {
        int live = size - head;
        int capacity = live * 2 > commitTs.length ? commitTs.length * 2 : commitTs.length;
        long[] s = new long[capacity];
        long[] c = new long[capacity];
        System.arraycopy(starts, head, s, 0, live);
        System.arraycopy(commitTs, head, c, 0, live);
        starts = s;
        commitTs = c;
        head = 0;
        size = live;
    }

    @Override
    public void onAbort(long startTs) {
        records++;
        if (startTs > maxTimestamp) {
            maxTimestamp = startTs;
        }
        aborted.put(startTs, 1);
    }

    @Override
    public void onForget(long startTs) {
        records++;
        aborted.remove(startTs);
    }

    @Override
    public void onTmax(long newTmax) {
        records++;
        if (newTmax > maxTimestamp) {
            maxTimestamp = newTmax;
        }
        if (newTmax > tMax) {
            tMax = newTmax;
            // Sorted by commit timestamp: the commits at or below T_max are a prefix.
            int cut = Arrays.binarySearch(commitTs, head, size, tMax);
            head = cut >= 0 ? cut + 1 : -cut - 1;
        }
    }

    @Override
    public void onReserve(long limit) {
        records++;
        maxReserved = Math.max(maxReserved, limit);
        if (limit > maxTimestamp) {
            maxTimestamp = limit;
        }
    }

    @Override
    public void onAbortRange(long from, long to) {
        records++;
        if (to > maxTimestamp) {
            maxTimestamp = to;
        }
        for (AbortedRange r : ranges) {
            if (r.from() == from && r.to() == to) {
                return;
            }
        }
        long[] inside = new long[16];
        int n = 0;
        for (int i = head; i < size; i++) {
            if (starts[i] > from && starts[i] <= to) {
                if (n == inside.length) {
                    inside = Arrays.copyOf(inside, n * 2);
                }
                inside[n++] = starts[i];
            }
        }
        inside = Arrays.copyOf(inside, n);
        Arrays.sort(inside);
        ranges.add(new AbortedRange(from, to, inside));
    }

    RecoveredState result(LedgerRegistry.Snapshot registry, RecoveredState.Stats stats) {
        long[] abortedTs = new long[aborted.size()];
        int[] j = {0};
        aborted.forEach((ts, one) -> abortedTs[j[0]++] = ts);
        Arrays.sort(abortedTs);
        return new RecoveredState(Math.max(maxReserved, maxTimestamp), maxReserved, tMax,
                Arrays.copyOfRange(starts, head, size), Arrays.copyOfRange(commitTs, head, size), abortedTs, ranges,
                registry, stats);
    }
}
