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
 *   <li>commits go into a start->commit map, and those at or below T_max are dropped (as the oracle does), so order
 *       does not matter;</li>
 *   <li>the aborted set applies ABORT (add) and FORGET (remove) in replay order; a rewritten suffix replays, in the
 *       original order, every record after its first unacknowledged one, so the last record for each timestamp is
 *       the right one;</li>
 *   <li>an ABORT_RANGE (written by a recovered oracle in its first block) is kept with the commits inside it, which
 *       are all in the commit map at that point: they committed above the T_max of that recovery, which is at or
 *       below the range's start. A repeated range is ignored.</li>
 *   <li>a {@link Checkpoint} entry is the state of everything journaled before it, commits above T_max aside: it
 *       <em>replaces</em> the aborted set and the aborted ranges, and raises T_max and the high-water mark. So a replay
 *       may start at a checkpoint (the ledgers before it deleted), and replaying one after the records it sums up (a
 *       standby that read older ledgers, a checkpoint rewritten after a write failure) changes nothing. Commits before
 *       it are not in it: only ledgers whose commits are all at or below a later T_max are ever deleted.</li>
 * </ul>
 * Memory stays bounded by the state being rebuilt: commits at or below T_max are trimmed as T_max rises.
 */
public final class JournalReplay implements DecisionVisitor {
    private static final Logger LOG = LoggerFactory.getLogger(JournalReplay.class);

    private final List<AbortedRange> ranges = new ArrayList<>();
    private LongLongHashMap commits = new LongLongHashMap(1024);
    private LongLongHashMap aborted = new LongLongHashMap(1024);
    private long tMax;
    private long maxReserved;
    private long maxTimestamp;
    private int trimAt = 1 << 16;
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
        if (Checkpoint.isCheckpoint(data)) {
            checkpoint(Checkpoint.decode(data));
        } else {
            DecisionBlockReader.readAll(data, this);
        }
    }

    /** Takes {@code c} as the state of everything before it (see the class comment). */
    public void checkpoint(Checkpoint c) {
        checkpoints++;
        see(c.lastTimestamp());
        tMax = Math.max(tMax, c.tMax());
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

    @Override
    public void onCommit(long startTs, long commitTs) {
        records++;
        see(commitTs);
        if (commitTs <= tMax) {
            return;
        }
        commits.put(startTs, commitTs);
        if (commits.size() >= trimAt) {
            trim();
            trimAt = Math.max(1 << 16, commits.size() * 2);
        }
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
        tMax = Math.max(tMax, newTmax);
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
            // range at or below T_max may already be trimmed and would then read as aborted.
            LOG.warn("journal: aborted range ({}, {}] starts below T_max {}", from, to, tMax);
        }
        long[][] inside = {new long[16]};
        int[] n = {0};
        commits.forEach((start, commit) -> {
            if (start > from && start <= to) {
                if (n[0] == inside[0].length) {
                    inside[0] = Arrays.copyOf(inside[0], n[0] * 2);
                }
                inside[0][n[0]++] = start;
            }
        });
        long[] committed = Arrays.copyOf(inside[0], n[0]);
        Arrays.sort(committed);
        ranges.add(new AbortedRange(from, to, committed));
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

    private void trim() {
        LongLongHashMap kept = new LongLongHashMap(Math.max(1024, commits.size()));
        long limit = tMax;
        commits.forEach((start, commit) -> {
            if (commit > limit) {
                kept.put(start, commit);
            }
        });
        commits = kept;
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

    /** The state replayed so far. */
    public RecoveredState result(LedgerRegistry.Snapshot registry, RecoveredState.Stats stats) {
        trim();
        int n = commits.size();
        long[] commitTs = new long[n];
        LongLongHashMap startOf = new LongLongHashMap(Math.max(16, n));
        int[] i = {0};
        commits.forEach((start, commit) -> {
            commitTs[i[0]++] = commit;
            startOf.put(commit, start);
        });
        Arrays.sort(commitTs);
        long[] starts = new long[n];
        for (int k = 0; k < n; k++) {
            starts[k] = startOf.get(commitTs[k], 0);
        }
        long[] abortedTs = new long[aborted.size()];
        int[] j = {0};
        aborted.forEach((ts, one) -> abortedTs[j[0]++] = ts);
        Arrays.sort(abortedTs);
        return new RecoveredState(lastTimestamp(), maxReserved, tMax, starts, commitTs, abortedTs, ranges, registry,
                stats);
    }

    /** Counters so far: entries, blocks, records, bytes. */
    RecoveredState.Stats stats(int ledgers, long millis) {
        return new RecoveredState.Stats(ledgers, entries, blocks, records, bytes, millis);
    }
}
