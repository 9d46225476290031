package io.sibyl.oracle.journal;

import java.util.Arrays;

/**
 * What the journal says about the oracle that wrote it, as {@link JournalRecovery} rebuilt it.
 *
 * <p>How a new oracle must use it:
 * <ul>
 *   <li><b>Clock.</b> Every timestamp it hands out must exceed {@link #lastTimestamp()} (the highest RESERVE limit,
 *       or any higher timestamp seen): {@code new OracleState(config, lastTimestamp(), tMax())} does that.</li>
 *   <li><b>T_max</b> and the <b>commit map</b> above it ({@link #commitStarts()} / {@link #commitTimestamps()},
 *       ascending by commit timestamp): answers for commit queries and for the replicas' handshake.</li>
 *   <li><b>Aborted set</b> ({@link #aborted()}, ascending): aborted and not yet forgotten.</li>
 *   <li><b>In doubt</b>: a transaction running at the crash left no record. Any start timestamp in
 *       ({@link #tMax()}, {@link #lastTimestamp()}] that is neither committed nor aborted here must be treated as
 *       aborted (its writes may be in the data store); see {@link #isInDoubt(long)}.</li>
 * </ul>
 *
 * @param lastTimestamp    highest timestamp that may have been handed out
 * @param maxReserved      highest RESERVE limit journaled (0 if none)
 * @param tMax             highest T_max journaled
 * @param commitStarts     start timestamps of the commits above T_max, in commit order
 * @param commitTimestamps their commit timestamps, ascending
 * @param aborted          aborted transactions not forgotten, ascending
 * @param registry         the registry as fenced by this recovery: pass it to {@link BookKeeperJournal#open}
 * @param stats            what was read
 */
public record RecoveredState(long lastTimestamp, long maxReserved, long tMax, long[] commitStarts,
                             long[] commitTimestamps, long[] aborted, LedgerRegistry.Snapshot registry, Stats stats) {

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
     * True if {@code startTs} may belong to a transaction that was running at the crash: above T_max, at or below
     * the last timestamp, and neither committed nor aborted in the journal. The new oracle must treat it as aborted.
     */
    public boolean isInDoubt(long startTs) {
        return startTs > tMax && startTs <= lastTimestamp && !isAborted(startTs) && commitTimestampOf(startTs) == 0
                && Arrays.binarySearch(commitTimestamps, startTs) < 0;
    }

    /** Epoch the recovering oracle now holds in the ledger registry. */
    public long epoch() {
        return registry.epoch();
    }

    @Override
    public String toString() {
        return "RecoveredState[lastTimestamp=" + lastTimestamp + ", maxReserved=" + maxReserved + ", tMax=" + tMax
                + ", commits above T_max=" + commitStarts.length + ", aborted=" + aborted.length + ", epoch="
                + registry.epoch() + ", ledgers=" + registry.ledgers() + ", " + stats + "]";
    }
}
