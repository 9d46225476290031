package io.sibyl.protocol;

import io.netty.buffer.ByteBuf;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The transactions that were running when an oracle stopped, as the oracle that recovered from its journal decided
 * them: every start timestamp in {@code (from, to]} is <b>aborted</b> unless it is one of {@link #committedStarts()}
 * (the transactions of the range whose COMMIT record reached the journal before the crash).
 *
 * <p>Why a range: the journal has no record of a begin (timestamps are reserved in blocks), so a transaction running
 * at the crash left no trace. Every such transaction started above the recovered T_max (one that T_max passed was
 * aborted explicitly) and at or below the recovered last timestamp. Readers treat a writer below T_max that is not
 * aborted as committed, so without the range those transactions would turn visible once the new oracle's T_max
 * passes them.
 *
 * <p>Why the committed list: a commit inside the range is known by its COMMIT record, but replicas (and the oracle's
 * own commit window) forget commit records once T_max passes them, and a connection made after the recovery never
 * received them at all. So the range carries its commits explicitly, for as long as the range is kept; without them
 * "in the range and no commit known" could not tell an in-doubt writer from a committed one. Cost: 8 bytes per commit
 * that was above T_max at the crash (at most {@code recent.commits.capacity} per recovery).
 *
 * <p>Immutable. The ranges kept at any time are disjoint and ascending: a new range starts at or above the end of
 * every kept one (timestamps below it belong to earlier oracles, whose in-doubt transactions those ranges cover). A
 * range that was swept and forgotten (FORGET_RANGE) no longer counts, so a later range, which starts at T_max then,
 * may cover its span again: harmless, since every commit with a start above T_max still has its COMMIT record and is
 * listed in the new range, and the forgotten range's in-doubt writers are simply in doubt once more.
 */
public final class AbortedRange {
    /**
     * Ranges kept by the oracle and by replicas (the newest; one per recovery) until the abort sweeper has deleted
     * their versions and the oracle forgets them. Past this many the oldest is dropped, which makes its in-doubt
     * versions readable: sweep after failovers. See docs/gc.md.
     */
    public static final int MAX_KEPT = 64;

    private static final long[] NONE = new long[0];

    private final long from;
    private final long to;
    /** Sorted start timestamps in (from, to] that committed; null when not known (see {@link #committedKnown()}). */
    private final long[] committed;

    /**
     * @param from            exclusive lower end (the recovered T_max, or the end of the previous range)
     * @param to              inclusive upper end (the recovered last timestamp)
     * @param committedStarts start timestamps in the range that committed, ascending; null if not known
     */
    public AbortedRange(long from, long to, long[] committedStarts) {
        if (from < 0 || to <= from) {
            throw new IllegalArgumentException("empty or negative aborted range (" + from + ", " + to + "]");
        }
        if (committedStarts != null) {
            long previous = from;
            for (long ts : committedStarts) {
                if (ts <= previous || ts > to) {
                    throw new IllegalArgumentException("committed start timestamps of (" + from + ", " + to
                            + "] must be ascending and inside it; got " + ts + " after " + previous);
                }
                previous = ts;
            }
        }
        this.from = from;
        this.to = to;
        this.committed = committedStarts;
    }

    /**
     * The range a recovered oracle must abort, or null if it is empty: from {@code max(tMax, end of the newest
     * earlier range)} to {@code lastTimestamp}, with the commits among {@code commitStarts} (the recovered commits
     * above T_max, in any order) that fall inside it.
     */
    public static AbortedRange afterRecovery(long tMax, long lastTimestamp, List<AbortedRange> earlier,
                                             long[] commitStarts) {
        long from = tMax;
        for (AbortedRange r : earlier) {
            from = Math.max(from, r.to);
        }
        if (lastTimestamp <= from) {
            return null;
        }
        long[] inside = new long[commitStarts.length];
        int n = 0;
        for (long ts : commitStarts) {
            if (ts > from && ts <= lastTimestamp) {
                inside[n++] = ts;
            }
        }
        inside = Arrays.copyOf(inside, n);
        Arrays.sort(inside);
        return new AbortedRange(from, lastTimestamp, inside);
    }

    public long from() {
        return from;
    }

    public long to() {
        return to;
    }

    /** True if {@code ts} lies in {@code (from, to]}. */
    public boolean covers(long ts) {
        return ts > from && ts <= to;
    }

    /** False for a range learnt from a decision block alone (its commits were not sent with it). */
    public boolean committedKnown() {
        return committed != null;
    }

    /** True if {@code ts} is in the range and committed before the crash. */
    public boolean isCommitted(long ts) {
        return committed != null && covers(ts) && Arrays.binarySearch(committed, ts) >= 0;
    }

    /** True if {@code ts} is in the range and did not commit: a transaction running at the crash (aborted). */
    public boolean isInDoubt(long ts) {
        return covers(ts) && committed != null && Arrays.binarySearch(committed, ts) < 0;
    }

    /** Committed start timestamps, ascending (a copy); empty if not known. */
    public long[] committedStarts() {
        return committed == null ? NONE : committed.clone();
    }

    public int committedCount() {
        return committed == null ? 0 : committed.length;
    }

    /** The same range with its commits known. */
    public AbortedRange withCommitted(long[] committedStarts) {
        return new AbortedRange(from, to, committedStarts);
    }

    /** True if both are the same interval (commit lists are not compared). */
    public boolean sameInterval(AbortedRange other) {
        return from == other.from && to == other.to;
    }

    /**
     * Writes ranges for the HELLO handshake: {@code varint count}, then per range {@code varint (from - previous
     * to), varint (to - from), varint m, m x varint (committed start - previous)}, where "previous" starts at 0 for
     * the first range's {@code from} and at {@code from} for its commits. Ranges must be ascending and disjoint, with
     * their commits known.
     */
    public static void writeAll(ByteBuf out, List<AbortedRange> ranges) {
        Varints.writeUnsigned(out, ranges.size());
        long previousTo = 0;
        for (AbortedRange r : ranges) {
            if (r.from < previousTo || r.committed == null) {
                throw new IllegalArgumentException("aborted ranges must be ascending, disjoint and complete");
            }
            Varints.writeUnsigned(out, r.from - previousTo);
            Varints.writeUnsigned(out, r.to - r.from);
            Varints.writeUnsigned(out, r.committed.length);
            long previous = r.from;
            for (long ts : r.committed) {
                Varints.writeUnsigned(out, ts - previous);
                previous = ts;
            }
            previousTo = r.to;
        }
    }

    /** Reads what {@link #writeAll} wrote, validating it. */
    public static List<AbortedRange> readAll(ByteBuf in) {
        int n = Varints.readBoundedInt(in, in.readableBytes(), "aborted range count");
        List<AbortedRange> out = new ArrayList<>(n);
        long previousTo = 0;
        for (int i = 0; i < n; i++) {
            long from = previousTo + Varints.readUnsigned(in);
            long width = Varints.readUnsigned(in);
            long to = from + width;
            if (from < previousTo || width <= 0 || to < from || to >= DecisionBlockWriter.MAX_TIMESTAMP) {
                throw new ProtocolException("aborted range (" + from + ", " + to + "] is empty, out of order or too"
                        + " large");
            }
            int m = Varints.readBoundedInt(in, in.readableBytes(), "committed count of an aborted range");
            long[] committed = new long[m];
            long previous = from;
            for (int k = 0; k < m; k++) {
                long delta = Varints.readUnsigned(in);
                previous += delta;
                if (delta <= 0 || previous > to) {
                    throw new ProtocolException("committed start timestamp " + previous + " of aborted range (" + from
                            + ", " + to + "] is out of order or outside it");
                }
                committed[k] = previous;
            }
            out.add(new AbortedRange(from, to, committed));
            previousTo = to;
        }
        return out;
    }

    @Override
    public String toString() {
        return "(" + from + ", " + to + "]" + (committed == null ? " commits unknown" : " less " + committed.length
                + " commits");
    }
}
