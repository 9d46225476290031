package io.sibyl.oracle;

import io.netty.buffer.ByteBuf;
import io.sibyl.protocol.AbortedRange;
import io.sibyl.protocol.DecisionBlockWriter;

import java.util.Arrays;
import java.util.List;

/**
 * What the oracle remembers of aborted transactions, and the clean-up protocol that lets it forget them: the aborted
 * set (with the client that began each) and the aborted ranges of earlier recoveries. Each is answered as aborted until
 * its versions are reported deleted and every transaction that started before that report has finished; then it is
 * forgotten. Every abort and every forgetting is a record of the decision block. {@link OracleState} decides when a
 * transaction aborts; this class only keeps the outcome. Owned by the sequencer thread.
 */
final class AbortedRecords implements AbortedView {
    private final AbortedTransactions set;
    /** Transactions that were running when earlier oracles stopped, aborted; the sweeper's reports of them. */
    private final InDoubtRanges ranges;
    private final DecisionBlockWriter block;
    /** {@code block::forget}, bound once: a method reference made at every seal would allocate. */
    private final RunningTransactions.TimestampSink recordForget;
    private final int limit;

    /**
     * Records over {@code set}, which starts with the aborts {@code recovered} from the journal (written there
     * already), and {@code ranges}; new records go to {@code block}.
     */
    AbortedRecords(AbortedTransactions set, long[] recovered, InDoubtRanges ranges, int limit,
                   DecisionBlockWriter block) {
        this.set = set;
        this.ranges = ranges;
        this.limit = limit;
        this.block = block;
        this.recordForget = block::forget;
        for (long ts : recovered) {
            set.add(ts);
        }
    }

    /**
     * {@code ts}, begun by the client {@code identity}, aborted: an ABORT record. Returns false, writing nothing, if it
     * was aborted already.
     */
    boolean add(long ts, long identity) {
        if (set.add(ts, identity)) {
            block.abort(ts);
            return true;
        }
        return false;
    }

    /**
     * True at {@code max.aborted.transactions}: every abort kept is in every replica and every HELLO, so BEGINs are
     * refused until clean-ups free some (running transactions may still abort past the limit).
     */
    boolean isFull() {
        return set.size() >= limit;
    }

    /** True if {@code ts} is in the aborted set. */
    boolean contains(long ts) {
        return set.contains(ts);
    }

    @Override
    public boolean isInDoubt(long ts) {
        return ranges.isInDoubt(ts);
    }

    /** The aborted range of an earlier recovery that covers {@code ts}, or null. */
    AbortedRange rangeOf(long ts) {
        return ranges.rangeOf(ts);
    }

    @Override
    public List<AbortedRange> ranges() {
        return ranges.list();
    }

    int rangeCount() {
        return ranges.count();
    }

    /**
     * The versions of the aborted {@code ts} are gone, as of {@code clock} (the last timestamp handed out). Returns
     * false if {@code ts} is not in the aborted set.
     */
    boolean cleanedUp(long ts, long clock) {
        return set.cleanedUp(ts, clock);
    }

    /**
     * The versions the in-doubt transactions of the aborted range {@code (from, to]} left in the data store were
     * deleted, as of {@code clock}. Returns false if no range is exactly {@code (from, to]} (unknown, forgotten
     * already) or its report is pending already.
     */
    boolean rangeCleanedUp(long from, long to, long clock) {
        return ranges.reportCleanedUp(from, to, clock);
    }

    /**
     * Forgets the aborts and ranges reported cleaned up before {@code lowWatermark}: every transaction that could
     * still read one of their versions has finished. FORGET and FORGET_RANGE records.
     */
    void forgetReportedBefore(long lowWatermark) {
        set.forgetReportedBefore(lowWatermark, recordForget);
        ranges.forgetCleanedUp(lowWatermark, block);
    }

    /** The aborted set, ascending, for a checkpoint: a copy (usually small), one per ledger. */
    long[] sortedTimestamps() {
        long[] abortedTs = new long[set.size()];
        int[] n = {0};
        set.forEach(ts -> abortedTs[n[0]++] = ts);
        Arrays.sort(abortedTs);
        return abortedTs;
    }

    @Override
    public int size() {
        return set.size();
    }

    @Override
    public int limit() {
        return limit;
    }

    @Override
    public void forEach(RunningTransactions.TimestampSink sink) {
        set.forEach(sink);
    }

    @Override
    public void writeForHello(ByteBuf out) {
        set.writeForHello(out);
        ranges.writeForHello(out);
    }
}
