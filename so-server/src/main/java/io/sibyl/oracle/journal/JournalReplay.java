package io.sibyl.oracle.journal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sibyl.oracle.LongLongHashMap;
import io.sibyl.protocol.AbortedRange;
import io.sibyl.protocol.DecisionBlockReader;
import io.sibyl.protocol.DecisionVisitor;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Rebuilds the oracle's durable state from journal entries read in ledger order. Built so that the duplicates a
 * failed-and-rewritten suffix leaves (see {@link BookKeeperJournal}) do no harm:
 * <ul>
 *   <li>T_max and the timestamp high-water mark (RESERVE limits and every timestamp seen) are maxima;</li>
 *   <li>commits above T_max are kept ascending by commit timestamp, and those at or below T_max are dropped (as the
 *       oracle does). One oracle journals its commits in commit-timestamp order and a recovered oracle starts above
 *       every earlier timestamp, so a COMMIT normally lands at the end. One that does not (a rewritten suffix
 *       repeating commits, or one a failed add lost the first time around) is looked up and skipped if already
 *       there, inserted in its place otherwise, so the result never depends on that order;</li>
 *   <li>the aborted set applies ABORT (add) and FORGET (remove) in replay order; a rewritten suffix replays, in the
 *       original order, every record after its first unacknowledged one, so the last record for each timestamp is
 *       the right one;</li>
 *   <li>an ABORT_RANGE (written by a recovered oracle in its first block) is kept with the commits inside it, which
 *       are all among the kept commits at that point: they committed above the T_max of that recovery, which is at
 *       or below the range's start. A repeated range is ignored. A FORGET_RANGE (the range was swept) removes it;
 *       a rewritten suffix that repeats both repeats them in order;</li>
 *   <li>a {@link Checkpoint} entry is the state of everything journaled before it, commits above T_max aside: it
 *       <em>replaces</em> the aborted set and the aborted ranges, and raises T_max and the high-water mark. So a replay
 *       may start at a checkpoint (the ledgers before it deleted), and replaying one after the records it sums up (a
 *       standby that read older ledgers, a checkpoint rewritten after a write failure) changes nothing. Commits before
 *       it are not in it: only ledgers whose commits are all at or below a later T_max are ever deleted. A checkpoint
 *       in several part entries takes effect at its last part ({@link CheckpointParts}).</li>
 * </ul>
 * Memory stays bounded by the state being rebuilt: commits at or below T_max are trimmed as T_max rises.
 */
public final class JournalReplay implements DecisionVisitor {
    private static final Logger LOG = LoggerFactory.getLogger(JournalReplay.class);
    private static final int INITIAL_CAPACITY = 1 << 16;

    private final List<AbortedRange> ranges = new ArrayList<>();
    /** A checkpoint too big for one entry, while its parts are read (see {@link Checkpoint}). */
    private final CheckpointParts checkpointParts = new CheckpointParts();
    /*
     * The commits above T_max are (starts[i], commitTs[i]) for head <= i < size, ascending by commit timestamp.
     * Sorted parallel arrays rather than a map: the commits arrive in order, so keeping them is an append, raising
     * T_max moves head past a prefix, and the result is a copy of the slice (no hashing, no sort).
     */
    private long[] starts = new long[INITIAL_CAPACITY];
    private long[] commitTs = new long[INITIAL_CAPACITY];
    private int head;
    private int size;
    private LongLongHashMap aborted = new LongLongHashMap(1024);
    private long tMax;
    private long maxReserved;
    private long writerGraceMillis;
    private long maxTimestamp;
    private long records;
    private long blocks;
    private long entries;
    private long bytes;
    private long checkpoints;

    /** Replays one journal entry: a concatenation of decision blocks. */
    public void entry(byte[] data) {
        entry(Unpooled.wrappedBuffer(data));
    }

    public void entry(ByteBuf data) {
        entries++;
        bytes += data.readableBytes();
        if (Checkpoint.isPart(data)) {
            Checkpoint whole = checkpointParts.add(data);
            if (whole != null) {
                checkpoint(whole);
            }
        } else if (Checkpoint.isCheckpoint(data)) {
            checkpoint(Checkpoint.decode(data));
        } else {
            checkpointParts.blocksSeen();
            DecisionBlockReader.readAll(data, this);
        }
    }

    /** Takes {@code c} as the state of everything before it (see the class comment). */
    public void checkpoint(Checkpoint c) {
        checkpoints++;
        see(c.lastTimestamp());
        raiseTmax(c.tMax());
        aborted = new LongLongHashMap(Math.max(1024, c.aborted().length * 2));
        for (long ts : c.aborted()) {
            aborted.put(ts, 1);
        }
        ranges.clear();
        ranges.addAll(c.abortedRanges());
    }

    /** Checkpoint entries replayed so far. */
    public long checkpoints() {
        return checkpoints;
    }

    /** True while a checkpoint written in parts has been started but its last part not read yet. */
    public boolean checkpointInProgress() {
        return checkpointParts.inProgress();
    }

    @Override
    public void onCommit(long startTs, long commit) {
        records++;
        see(commit);
        if (commit <= tMax) {
            return;
        }
        int at = size;
        if (size > head && commit <= commitTs[size - 1]) {
            int found = Arrays.binarySearch(commitTs, head, size, commit);
            if (found >= 0) {
                return; // a rewritten suffix repeats it
            }
            at = -found - 1;
        }
        if (size == commitTs.length) {
            at -= head;
            makeRoom();
        }
        if (at < size) {
            System.arraycopy(starts, at, starts, at + 1, size - at);
            System.arraycopy(commitTs, at, commitTs, at + 1, size - at);
        }
        starts[at] = startTs;
        commitTs[at] = commit;
        size++;
    }

    /** Moves the live commits to the front, doubling the arrays if they would still be more than half full. */
    private void makeRoom() {
        int live = size - head;
        int capacity = live * 2 > commitTs.length ? commitTs.length * 2 : commitTs.length;
        long[] s = capacity == starts.length ? starts : new long[capacity];
        long[] c = capacity == commitTs.length ? commitTs : new long[capacity];
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
        see(startTs);
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
        see(newTmax);
        raiseTmax(newTmax);
    }

    private void raiseTmax(long newTmax) {
        if (newTmax <= tMax) {
            return;
        }
        tMax = newTmax;
        // Ascending by commit timestamp: the commits now at or below T_max are a prefix of the live slice.
        int cut = Arrays.binarySearch(commitTs, head, size, newTmax);
        head = cut >= 0 ? cut + 1 : -cut - 1;
    }

    @Override
    public void onReserve(long limit) {
        records++;
        maxReserved = Math.max(maxReserved, limit);
        see(limit);
    }

    @Override
    public void onAbortRange(long from, long to) {
        records++;
        see(to);
        for (AbortedRange r : ranges) {
            if (r.from() == from && r.to() == to) {
                return; // a rewritten suffix repeats it
            }
        }
        if (tMax > from) {
            // Cannot happen with this oracle (the range starts at or above the T_max it recovered); commits of the
            // range at or below T_max are already trimmed and would then read as aborted.
            LOG.warn("journal: aborted range ({}, {}] starts below T_max {}", from, to, tMax);
        }
        long[] inside = new long[16];
        int n = 0;
        for (int i = head; i < size; i++) {
            long start = starts[i];
            if (start > from && start <= to) {
                if (n == inside.length) {
                    inside = Arrays.copyOf(inside, n * 2);
                }
                inside[n++] = start;
            }
        }
        long[] committed = Arrays.copyOf(inside, n);
        Arrays.sort(committed); // in commit order, not start order
        ranges.add(new AbortedRange(from, to, committed));
    }

    @Override
    public void onForgetRange(long from, long to) {
        records++;
        ranges.removeIf(r -> r.from() == from && r.to() == to);
    }

    @Override
    public void onBlockEnd() {
        blocks++;
    }

    private void see(long ts) {
        if (ts > maxTimestamp) {
            maxTimestamp = ts;
        }
    }

    public long tMax() {
        return tMax;
    }

    /** Highest timestamp that may have been handed out: no new timestamp may be at or below it. */
    public long lastTimestamp() {
        return Math.max(maxReserved, maxTimestamp);
    }

    public long records() {
        return records;
    }

    /** The state replayed so far; replay may go on afterwards (the result holds copies). */
    /** The longest reader grace recorded by the writers of the ledgers replayed so far (0: none recorded). */
    public long writerGraceMillis() {
        return writerGraceMillis;
    }

    /** Notes the grace of the oracle that wrote a ledger being replayed ({@link WriterGrace}); the longest counts. */
    void sawWriterGrace(long graceMillis) {
        writerGraceMillis = Math.max(writerGraceMillis, graceMillis);
    }

    public RecoveredState result(LedgerRegistry.Snapshot registry, RecoveredState.Stats stats) {
        long[] abortedTs = new long[aborted.size()];
        int[] j = {0};
        aborted.forEach((ts, one) -> abortedTs[j[0]++] = ts);
        Arrays.sort(abortedTs);
        return new RecoveredState(lastTimestamp(), maxReserved, tMax, Arrays.copyOfRange(starts, head, size),
                Arrays.copyOfRange(commitTs, head, size), abortedTs, ranges, registry, stats, writerGraceMillis);
    }

    /** Counters so far: entries, blocks, records, bytes. */
    RecoveredState.Stats stats(int ledgers, long millis) {
        return new RecoveredState.Stats(ledgers, entries, blocks, records, bytes, millis);
    }
}
