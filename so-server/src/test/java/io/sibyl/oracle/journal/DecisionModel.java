package io.sibyl.oracle.journal;

import io.sibyl.protocol.DecisionBlockWriter;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;
import java.util.TreeSet;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * Writes plausible decision blocks the way the oracle does (timestamps from one clock with RESERVE records, commits,
 * aborts, forgets of old aborts, T_max rises) and keeps the state a recovery of them must produce.
 */
final class DecisionModel {
    private final Random random;
    private final DecisionBlockWriter writer = new DecisionBlockWriter();
    private final long reservation;
    private long clock;
    private long reserved;
    private long tMax;
    private final TreeMap<Long, Long> commitsByCommitTs = new TreeMap<>();
    private final TreeSet<Long> aborted = new TreeSet<>();
    private final ArrayDeque<Long> abortOrder = new ArrayDeque<>();

    DecisionModel(long seed, long reservation) {
        this.random = new Random(seed);
        this.reservation = reservation;
    }

    /** Continues after a recovery: the clock restarts above everything recovered, like OracleState. */
    DecisionModel(long seed, long reservation, RecoveredState from) {
        this(seed, reservation);
        clock = from.lastTimestamp();
        reserved = from.lastTimestamp();
        tMax = from.tMax();
        for (int i = 0; i < from.commitCount(); i++) {
            commitsByCommitTs.put(from.commitTimestamps()[i], from.commitStarts()[i]);
        }
        for (long a : from.aborted()) {
            aborted.add(a);
            abortOrder.add(a);
        }
    }

    private long next() {
        long ts = ++clock;
        if (ts > reserved) {
            reserved = ts + reservation;
            writer.reserve(reserved);
        }
        return ts;
    }

    /** A block of 1..{@code maxRecords} decisions. */
    byte[] nextBlock(int maxRecords) {
        writer.start(clock);
        int n = 1 + random.nextInt(maxRecords);
        for (int i = 0; i < n; i++) {
            int kind = random.nextInt(100);
            if (kind < 60) {
                long start = next();
                if (random.nextBoolean()) {
                    next(); // someone else's begin in between
                }
                long commit = next();
                writer.commit(start, commit);
                commitsByCommitTs.put(commit, start);
            } else if (kind < 80) {
                long start = next();
                writer.abort(start);
                aborted.add(start);
                abortOrder.add(start);
            } else if (kind < 92) {
                Long old = abortOrder.pollFirst();
                if (old != null && aborted.remove(old)) {
                    writer.forget(old);
                } else {
                    next(); // a begin with no record of its own (inside the reservation)
                }
            } else {
                long candidate = clock - 40;
                if (candidate > tMax) {
                    tMax = candidate;
                    writer.tMax(tMax);
                    commitsByCommitTs.headMap(tMax, true).clear();
                } else {
                    next();
                }
            }
        }
        if (writer.isEmpty()) {
            writer.tMax(tMax); // harmless repeat, keeps the block non-empty
        }
        return writer.seal();
    }

    List<byte[]> blocks(int count, int maxRecords) {
        List<byte[]> out = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            out.add(nextBlock(maxRecords));
        }
        return out;
    }

    long lastTimestamp() {
        return Math.max(reserved, clock);
    }

    long tMax() {
        return tMax;
    }

    /** Asserts that {@code r} is exactly this model's state. */
    void assertRecovered(RecoveredState r) {
        assertEquals(tMax, r.tMax(), "T_max");
        assertEquals(lastTimestamp(), r.lastTimestamp(), "last timestamp (highest RESERVE limit)");
        long[] commits = commitsByCommitTs.keySet().stream().mapToLong(Long::longValue).toArray();
        long[] starts = commitsByCommitTs.values().stream().mapToLong(Long::longValue).toArray();
        assertArrayEquals(commits, r.commitTimestamps(), "commit timestamps above T_max");
        assertArrayEquals(starts, r.commitStarts(), "start timestamps of commits above T_max");
        assertArrayEquals(aborted.stream().mapToLong(Long::longValue).toArray(), r.aborted(), "aborted set");
    }
}
