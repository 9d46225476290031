package io.sibyl.oracle;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sibyl.protocol.AbortedRange;
import io.sibyl.protocol.DecisionBlockWriter;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;

/**
 * The aborted ranges of earlier recoveries: the transactions that were running when earlier oracles stopped, which
 * left no record and are aborted, and the sweeper's reports that their versions are gone, forgotten once no reader
 * can still hold one. Owned by {@link OracleState} on the sequencer thread.
 */
final class InDoubtRanges {
    private static final Logger LOG = LoggerFactory.getLogger(InDoubtRanges.class);

    /** Ascending and disjoint. */
    private AbortedRange[] ranges;
    /** Bounds of {@link #ranges}, so that the common case (no range covers a timestamp) costs two comparisons. */
    private long low;
    private long high;
    /** {@link #ranges} encoded once for every HELLO. */
    private byte[] forHello;
    /** Ranges reported cleaned up, as {from, to, clock at the report}, forgotten once the watermark passes the clock. */
    private final List<long[]> pendingForgets = new ArrayList<>();

    /**
     * The ranges of a recovery: {@code earlier} ones from the journal, plus the range of transactions running when
     * the last oracle stopped, {@code (max(recoveredTmax, end of the newest earlier range), lastTimestamp]} less its
     * commits, written to {@code block} as its first record. The newest {@link AbortedRange#MAX_KEPT} are kept.
     */
    InDoubtRanges(long recoveredTmax, long lastTimestamp, List<AbortedRange> earlier, long[] commitStarts,
                  DecisionBlockWriter block) {
        List<AbortedRange> kept = new ArrayList<>(earlier);
        AbortedRange fresh = AbortedRange.afterRecovery(recoveredTmax, lastTimestamp, kept, commitStarts);
        if (fresh != null) {
            kept.add(fresh);
            block.abortRange(fresh.from(), fresh.to()); // first record of the first block, before any T_MAX
        }
        while (kept.size() > AbortedRange.MAX_KEPT) {
            AbortedRange dropped = kept.remove(0);
            LOG.warn("forgetting the oldest aborted range {} (more than {} recoveries): versions its in-doubt"
                    + " transactions left in the data store would read as committed", dropped, AbortedRange.MAX_KEPT);
        }
        set(kept);
    }

    private void set(List<AbortedRange> kept) {
        ranges = kept.toArray(new AbortedRange[0]);
        low = ranges.length == 0 ? Long.MAX_VALUE : ranges[0].from();
        high = ranges.length == 0 ? 0 : ranges[ranges.length - 1].to();
        ByteBuf hello = Unpooled.buffer();
        AbortedRange.writeAll(hello, kept);
        forHello = new byte[hello.readableBytes()];
        hello.readBytes(forHello);
    }

    /** The range covering {@code ts}, or null. */
    AbortedRange rangeOf(long ts) {
        if (ts <= low || ts > high) {
            return null;
        }
        for (AbortedRange r : ranges) {
            if (r.covers(ts)) {
                return r;
            }
        }
        return null;
    }

    /** True if {@code ts} was running when an earlier oracle stopped (no commit, no abort record): aborted. */
    boolean isInDoubt(long ts) {
        AbortedRange r = rangeOf(ts);
        return r != null && r.isInDoubt(ts);
    }

    /** The ranges, oldest first. */
    List<AbortedRange> list() {
        return List.of(ranges);
    }

    int count() {
        return ranges.length;
    }

    /** Writes the ranges in the HELLO format ({@link AbortedRange#writeAll}). */
    void writeForHello(ByteBuf out) {
        out.writeBytes(forHello);
    }

    /**
     * The sweeper reports the range {@code (from, to]} cleaned up at {@code clock}. Returns false if no range is
     * exactly {@code (from, to]} (unknown, forgotten already) or its report is pending already.
     */
    boolean reportCleanedUp(long from, long to, long clock) {
        boolean known = false;
        for (AbortedRange r : ranges) {
            known |= r.from() == from && r.to() == to;
        }
        for (long[] pending : pendingForgets) {
            known &= !(pending[0] == from && pending[1] == to);
        }
        if (known) {
            pendingForgets.add(new long[] {from, to, clock});
        }
        return known;
    }

    /**
     * Forgets the ranges reported cleaned up before {@code watermark}: every reader that could hold one of their
     * versions has finished. Each forgotten range is a FORGET_RANGE record of {@code block}.
     */
    void forgetCleanedUp(long watermark, DecisionBlockWriter block) {
        if (pendingForgets.isEmpty()) {
            return;
        }
        List<AbortedRange> kept = new ArrayList<>(List.of(ranges));
        for (Iterator<long[]> it = pendingForgets.iterator(); it.hasNext(); ) {
            long[] pending = it.next();
            if (pending[2] < watermark) {
                it.remove();
                if (kept.removeIf(r -> r.from() == pending[0] && r.to() == pending[1])) {
                    block.forgetRange(pending[0], pending[1]);
                    LOG.info("forgot the aborted range ({}, {}]: its versions were swept", pending[0], pending[1]);
                }
            }
        }
        if (kept.size() != ranges.length) {
            set(kept);
        }
    }
}
