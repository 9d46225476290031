package io.sibyl.oracle.journal;

import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleState;
import io.sibyl.protocol.AbortedRange;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.Arrays;
import java.util.List;

/**
 * What the journal says about the oracle that wrote it, as {@link JournalRecovery} rebuilt it.
 *
 * <p>How a new oracle must use it:
 * <ul>
 *   <li><b>Clock.</b> Every timestamp it hands out must exceed {@link #lastTimestamp()} (the highest RESERVE limit,
 *       or any higher timestamp seen).</li>
 *   <li><b>T_max</b> and the <b>commit map</b> above it ({@link #commitStarts()} / {@link #commitTimestamps()},
 *       ascending by commit timestamp): answers for commit queries and for the replicas' handshake.</li>
 *   <li><b>Aborted set</b> ({@link #aborted()}, ascending): aborted and not yet forgotten.</li>
 *   <li><b>In doubt</b>: a transaction running at the crash left no record. Any start timestamp in
 *       ({@link #tMax()}, {@link #lastTimestamp()}] (above the newest earlier range) that is neither committed nor
 *       aborted here must be treated as aborted (its writes may be in the data store); see {@link #isInDoubt(long)}
 *       and {@link #inDoubtRange()}. The new oracle records that as an {@link AbortedRange} in its first block.</li>
 *   <li><b>Aborted ranges</b> of earlier recoveries ({@link #abortedRanges()}) stay aborted.</li>
 * </ul>
 * {@link #newOracleState} does all of that.
 *
 * @param lastTimestamp    highest timestamp that may have been handed out
 * @param maxReserved      highest RESERVE limit journaled (0 if none)
 * @param tMax             highest T_max journaled
 * @param commitStarts     start timestamps of the commits above T_max, in commit order
 * @param commitTimestamps their commit timestamps, ascending
 * @param aborted          aborted transactions not forgotten, ascending
 * @param abortedRanges    the ABORT_RANGE records of earlier recoveries, oldest first, with their commits
 * @param registry         the registry as fenced by this recovery: pass it to {@link BookKeeperJournal#open}
 * @param stats            what was read
 * @param inDoubtRange     the range of start timestamps the new oracle aborts, or null: see {@link #inDoubtRange()}
 * @param writerGraceMillis the longest {@code reader.grace.ms} recorded by the oracles that wrote the ledgers read
 *                         (0 if none recorded one): the new oracle holds its low watermark at 0 at least that long
 */
public record RecoveredState(long lastTimestamp, long maxReserved, long tMax, long[] commitStarts,
                             long[] commitTimestamps, long[] aborted, List<AbortedRange> abortedRanges,
                             LedgerRegistry.Snapshot registry, Stats stats, AbortedRange inDoubtRange,
                             long writerGraceMillis) {
    private static final Logger LOG = LoggerFactory.getLogger(RecoveredState.class);

    public RecoveredState {
        abortedRanges = List.copyOf(abortedRanges);
    }

    /**
     * The state with its {@link #inDoubtRange()} computed from the rest, once: it copies and sorts the starts of the
     * commits above T_max (hundreds of thousands after a busy oracle), and logging and {@link #isInDoubt} need it.
     */
    public RecoveredState(long lastTimestamp, long maxReserved, long tMax, long[] commitStarts,
                          long[] commitTimestamps, long[] aborted, List<AbortedRange> abortedRanges,
                          LedgerRegistry.Snapshot registry, Stats stats, long writerGraceMillis) {
        this(lastTimestamp, maxReserved, tMax, commitStarts, commitTimestamps, aborted, abortedRanges, registry, stats,
                AbortedRange.afterRecovery(tMax, lastTimestamp, abortedRanges, commitStarts), writerGraceMillis);
    }

    /**
     * An oracle state that continues this journal (clock, T_max, commits, aborted set, aborted ranges), holding the
     * low watermark at 0 for the longer of its own grace and {@link #writerGraceMillis()}.
     */
    public OracleState newOracleState(OracleConfig config) {
        if (writerGraceMillis > config.readerGraceMillis()) {
            LOG.warn("an earlier oracle of this journal ran with reader.grace.ms={} (this one: {}): nothing is garbage"
                    + " collected for {} ms, while its clients may still read; give every oracle of a group the same"
                    + " reader.grace.ms", writerGraceMillis, config.readerGraceMillis(), writerGraceMillis);
        }
        return new OracleState(config, lastTimestamp, tMax, commitStarts, commitTimestamps, aborted, abortedRanges,
                writerGraceMillis);
    }

    /**
     * The range of start timestamps the new oracle aborts (those without a commit or abort record), or null if it is
     * empty: {@code (max(tMax, end of the newest earlier range), lastTimestamp]}.
     */
    @Override
    public AbortedRange inDoubtRange() {
        return inDoubtRange;
    }

    /** Ledgers, entries, blocks, records and bytes read, and how long recovery took. */
    public record Stats(int ledgers, long entries, long blocks, long records, long bytes, long millis) {
    }

    /** Number of commits above T_max. */
    public int commitCount() {
        return commitStarts.length;
    }

    /** Commit timestamp of the transaction that started at {@code startTs}, if it committed above T_max; else 0. */
    public long commitTimestampOf(long startTs) {
        for (int i = 0; i < commitStarts.length; i++) {
            if (commitStarts[i] == startTs) {
                return commitTimestamps[i];
            }
        }
        return 0;
    }

    public boolean isAborted(long startTs) {
        return Arrays.binarySearch(aborted, startTs) >= 0;
    }

    /**
     * True if {@code startTs} may belong to a transaction that was running at the crash (inside
     * {@link #inDoubtRange()}, neither committed nor aborted in the journal), or at an earlier crash (in-doubt in one
     * of {@link #abortedRanges()}). The new oracle treats it as aborted. Commit timestamps are not start timestamps
     * and are never in doubt.
     */
    public boolean isInDoubt(long startTs) {
        if (Arrays.binarySearch(commitTimestamps, startTs) >= 0 || isAborted(startTs)) {
            return false;
        }
        for (AbortedRange r : abortedRanges) {
            if (r.covers(startTs)) {
                return r.isInDoubt(startTs);
            }
        }
        return inDoubtRange != null && inDoubtRange.isInDoubt(startTs);
    }

    /** Epoch the recovering oracle now holds in the ledger registry. */
    public long epoch() {
        return registry.epoch();
    }

    @Override
    public String toString() {
        return "RecoveredState[lastTimestamp=" + lastTimestamp + ", maxReserved=" + maxReserved + ", tMax=" + tMax
                + ", commits above T_max=" + commitStarts.length + ", aborted=" + aborted.length + ", aborted ranges=" + abortedRanges
                + ", in doubt=" + inDoubtRange + ", epoch="
                + registry.epoch() + ", ledgers=" + registry.ledgers() + ", " + stats + "]";
    }
}
