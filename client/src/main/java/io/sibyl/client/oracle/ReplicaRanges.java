package io.sibyl.client.oracle;

import io.sibyl.protocol.AbortedRange;

import java.util.ArrayList;
import java.util.List;

/**
 * The aborted ranges a replica knows (transactions running when an oracle stopped), oldest first; immutable, replaced
 * as a whole by the applying thread. Bounds make the common case, a writer outside every range, two comparisons.
 */
final class ReplicaRanges {
    static final ReplicaRanges NONE = new ReplicaRanges(new AbortedRange[0]);

    private final AbortedRange[] items;
    private final long low;
    private final long high;

    private ReplicaRanges(AbortedRange[] items) {
        this.items = items;
        long lo = Long.MAX_VALUE;
        long hi = 0;
        for (AbortedRange r : items) {
            lo = Math.min(lo, r.from());
            hi = Math.max(hi, r.to());
        }
        this.low = lo;
        this.high = hi;
    }

    static ReplicaRanges of(List<AbortedRange> ranges) {
        return ranges.isEmpty() ? NONE : new ReplicaRanges(ranges.toArray(new AbortedRange[0]));
    }

    List<AbortedRange> items() {
        return List.of(items);
    }

    /** The range covering {@code ts}, or null. */
    AbortedRange find(long ts) {
        if (ts <= low || ts > high) {
            return null;
        }
        for (AbortedRange r : items) {
            if (r.covers(ts)) {
                return r;
            }
        }
        return null;
    }

    /** With the range {@code (from, to]} added without its commits (unless known), the newest MAX_KEPT kept. */
    ReplicaRanges with(long from, long to) {
        if (get(from, to) != null) {
            return this;
        }
        List<AbortedRange> next = new ArrayList<>(List.of(items));
        next.add(new AbortedRange(from, to, null));
        next.sort((a, b) -> Long.compare(a.to(), b.to()));
        while (next.size() > AbortedRange.MAX_KEPT) {
            next.remove(0);
        }
        return of(next);
    }

    /** The range {@code (from, to]} if known, else null. */
    AbortedRange get(long from, long to) {
        for (AbortedRange r : items) {
            if (r.from() == from && r.to() == to) {
                return r;
            }
        }
        return null;
    }

    /** Without the range {@code (from, to]}. */
    ReplicaRanges without(long from, long to) {
        List<AbortedRange> next = new ArrayList<>(List.of(items));
        return next.removeIf(r -> r.from() == from && r.to() == to) ? of(next) : this;
    }

    /**
     * For a read of the past, a writer that finished before its point: visible if a range lists it committed,
     * invisible if a range with its commits covers it otherwise, {@link Visibility#ASK_ORACLE} if a range without
     * them does; null if no range covers it.
     */
    static Visibility pastVisibility(long writerTs, List<AbortedRange> ranges) {
        for (AbortedRange r : ranges) {
            if (r.covers(writerTs)) {
                if (r.isCommitted(writerTs)) {
                    return Visibility.VISIBLE;
                }
                return r.committedKnown() ? Visibility.INVISIBLE : Visibility.ASK_ORACLE;
            }
        }
        return null;
    }

    @Override
    public String toString() {
        return java.util.Arrays.toString(items);
    }
}
