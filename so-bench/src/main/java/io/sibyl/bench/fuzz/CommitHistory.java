package io.sibyl.bench.fuzz;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * Every timestamp the good clients were handed and every transaction they committed, checked at the end against
 * snapshot isolation: no two committed transactions that overlap in time wrote the same row, and no timestamp was
 * handed out twice.
 */
final class CommitHistory {
    /** A committed good transaction. */
    record Committed(long start, long commit, long[] rows) {
    }

    private final ConcurrentLinkedQueue<Long> timestamps = new ConcurrentLinkedQueue<>();
    private final ConcurrentLinkedQueue<Committed> committed = new ConcurrentLinkedQueue<>();

    void began(long startTs) {
        timestamps.add(startTs);
    }

    void committed(long startTs, long commitTs, long[] rows) {
        timestamps.add(commitTs);
        committed.add(new Committed(startTs, commitTs, rows));
    }

    /** What breaks snapshot isolation or the uniqueness of timestamps; empty if nothing. */
    List<String> violations() {
        List<String> wrong = new ArrayList<>();
        long[] all = timestamps.stream().mapToLong(Long::longValue).sorted().toArray();
        for (int i = 1; i < all.length; i++) {
            if (all[i] == all[i - 1]) {
                wrong.add("timestamp " + all[i] + " was handed out twice");
            }
        }
        Map<Long, List<Committed>> byRow = new HashMap<>();
        for (Committed c : committed) {
            for (long row : c.rows()) {
                byRow.computeIfAbsent(row, r -> new ArrayList<>()).add(c);
            }
        }
        for (Map.Entry<Long, List<Committed>> e : byRow.entrySet()) {
            List<Committed> writers = e.getValue();
            writers.sort(Comparator.comparingLong(Committed::commit));
            // In commit order, each writer must have started after the one before committed: then no two overlap.
            for (int i = 1; i < writers.size(); i++) {
                Committed before = writers.get(i - 1);
                Committed after = writers.get(i);
                if (after.start() < before.commit()) {
                    wrong.add("row " + e.getKey() + ": " + describe(before) + " and " + describe(after)
                            + " overlap and both committed");
                }
            }
        }
        return wrong;
    }

    int commits() {
        return committed.size();
    }

    private static String describe(Committed c) {
        return "[" + c.start() + ", " + c.commit() + "] " + Arrays.toString(c.rows());
    }
}
