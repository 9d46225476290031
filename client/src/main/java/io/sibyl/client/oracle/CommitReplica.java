package io.sibyl.client.oracle;

import io.netty.buffer.ByteBuf;
import io.sibyl.protocol.AbortedRange;
import io.sibyl.protocol.DecisionBlockReader;
import io.sibyl.protocol.Timestamps;
import io.sibyl.protocol.DecisionVisitor;
import io.sibyl.protocol.SingleWriterLongSet;

import java.lang.invoke.VarHandle;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The client's read-only replica of the oracle's commit metadata (paper Section IV, "Client replica of the SO"):
 * start-to-commit timestamps above T_max, the aborted set, T_max and T_init. It answers the paper's Algorithm 4
 * locally so that snapshot reads need no round trip to the oracle.
 *
 * <p>One thread (the connection's I/O thread) applies decision blocks; any thread may ask {@link #inSnapshot}. A
 * sequence counter makes each block appear atomically to readers. A commit timestamp is forgotten only when it is at
 * or below T_max <em>and</em> below the start timestamp of every running local transaction, so a long reader's
 * snapshot never shifts while T_max moves past it. A local transaction stops counting once it is older than the
 * oracle's {@code transaction.max.age.ms} ({@link #expireReadersAfter}): the oracle has aborted it and its client no
 * longer reads in it, and one the application leaked would otherwise keep every later commit here for good.
 *
 * <p><b>Memory and concurrency.</b> Commits live in a {@link CommitWindow}: a ring of 2-byte commit distances indexed
 * by start timestamp, about 4 bytes per held commit when every transaction takes two timestamps (a hash map with
 * start and commit, 29 to 44 bytes with its trim queue, held the default window of 1,048,576 commits in 36 MB; the
 * ring in 4.5 MB, {@code bin/so-bench-replica}). Aborts live in a primitive open-addressing set
 * ({@link SingleWriterLongSet}). Only the applying thread mutates them, so applying a block allocates nothing (they
 * only allocate when they resize).
 * Readers use a sequence lock: {@code version} is odd while a block is applied; a reader reads it, reads the tables,
 * issues a load-load fence and re-reads it, retrying if it changed or was odd. The tables tolerate reads that race
 * with mutations (no exceptions, bounded probes); such answers are discarded by the version check.
 *
 * <p><b>Aborted ranges.</b> An oracle that recovered from its journal aborts the transactions that were running at
 * the crash as an {@link AbortedRange}: every writer in {@code (from, to]} is aborted unless the range lists it as
 * committed (commits and aborts inside the range are explicit). The replica gets the ranges with their commits in
 * the handshake and checks them before the "below T_max and not aborted means committed" rule, so those writers stay
 * invisible however far T_max moves past them, until the oracle forgets the range (FORGET_RANGE, once the abort
 * sweeper deleted those versions). At most {@link AbortedRange#MAX_KEPT} ranges are kept (one per recovery), as the
 * oracle does.
 */
public final class CommitReplica implements DecisionVisitor {
    /** Spins of a reader waiting for a block to be applied before it yields the CPU. */
    private static final int SPINS_BEFORE_YIELD = 128;
    /** Applies between checks whether the tables stayed sparse long enough to shrink (after a burst). */
    private static final int SHRINK_CHECK_INTERVAL = 1024;

    private final long tInit;
    /** Start timestamp to commit timestamp, for commits not yet trimmed. Mutated only by the applying thread. */
    private final CommitWindow commits;
    /** Start timestamps of aborted transactions not yet forgotten. Mutated only by the applying thread. */
    private final SingleWriterLongSet aborted;
    /** Writers below T_init the oracle told us committed (answers to commit queries); rarely used. */
    private final Set<Long> committedBeforeInit = ConcurrentHashMap.newKeySet();
    /** Running local transactions by start timestamp, with a count since a caller may register one twice. */
    private final LocalReaders readers = new LocalReaders();
    /** Longest a read of the past lasts when the oracle sets no transaction.max.age.ms. */
    public static final long PAST_READ_MAX_NANOS = PastReaders.PAST_READ_MAX_NANOS;
    /** Aborts and ranges forgotten while reads of the past run, kept aside for them. */
    private final PastReaders pastReaders = new PastReaders(() -> this.readerMaxAgeNanos);
    private volatile long tMax;
    /** How long after registration a local transaction stops holding commits (nanoseconds); 0: for ever. */
    private volatile long readerMaxAgeNanos;
    /** Sequence lock: odd while {@link #apply} mutates the tables. Written only by the applying thread. */
    private volatile int version;
    private int appliesUntilShrinkCheck = SHRINK_CHECK_INTERVAL;
    /**
     * Highest timestamp in the decisions applied (commit timestamps, aborted start timestamps, ends of aborted ranges);
     * written only by the applying thread, read under the sequence lock.
     */
    private long highestDecided;
    /** Aborted ranges, replaced as a whole (by the applying thread) when a block brings a new one. */
    private volatile ReplicaRanges ranges;

    /** Starts from the handshake: the oracle's clock, T_max and aborted set when this connection began. */
    public CommitReplica(long tInit, long tMax, long[] abortedAtInit) {
        this(tInit, tMax, abortedAtInit, List.of());
    }

    /**
     * Starts from the handshake: the oracle's clock, T_max, aborted set and aborted ranges (transactions running when
     * earlier oracles stopped) when this connection began.
     */
    public CommitReplica(long tInit, long tMax, long[] abortedAtInit, List<AbortedRange> abortedRanges) {
        this(tInit, tMax, abortedAtInit, abortedRanges, new CommitWindow());
    }

    /** As above, with the commits held in {@code commits} (tests size its ring small to exercise its edges). */
    CommitReplica(long tInit, long tMax, long[] abortedAtInit, List<AbortedRange> abortedRanges,
            CommitWindow commits) {
        this.commits = commits;
        this.tInit = tInit;
        this.tMax = tMax;
        this.aborted = new SingleWriterLongSet(16); // grows as needed, and can shrink back once those are forgotten
        for (long ts : abortedAtInit) {
            aborted.add(ts);
        }
        List<AbortedRange> kept = abortedRanges;
        if (kept.size() > AbortedRange.MAX_KEPT) {
            kept = kept.subList(kept.size() - AbortedRange.MAX_KEPT, kept.size());
        }
        this.ranges = ReplicaRanges.of(kept);
    }

    /** The aborted ranges this replica knows, oldest first. */
    public List<AbortedRange> abortedRanges() {
        return ranges.items();
    }

    public long tInit() {
        return tInit;
    }

    public long tMax() {
        return tMax;
    }

    /** Number of commit timestamps held (for tests and memory accounting). */
    public int commitCount() {
        for (int spins = 0; ; spins++) {
            int before = version;
            if ((before & 1) == 0) {
                int n = commits.size();
                VarHandle.loadLoadFence();
                if (version == before) {
                    return n;
                }
            }
            backOff(spins);
        }
    }

    /**
     * Bytes the commit window and the aborted set take, by their capacities (any thread; without the sequence lock,
     * so a figure for monitoring and benchmarks).
     */
    public long memoryBytes() {
        return commits.bytes() + 16L * aborted.slots();
    }

    public int abortedCount() {
        for (int spins = 0; ; spins++) {
            int before = version;
            if ((before & 1) == 0) {
                int n = aborted.size();
                VarHandle.loadLoadFence();
                if (version == before) {
                    return n;
                }
            }
            backOff(spins);
        }
    }

    /** Declares a local transaction running: commit timestamps it may need are kept until {@link #unregisterReader}. */
    public void registerReader(long startTs) {
        readers.register(startTs);
    }

    public void unregisterReader(long startTs) {
        readers.unregister(startTs);
    }

    /**
     * Lets go of local transactions registered more than {@code maxAgeNanos} ago (0: never), the oracle's
     * {@code transaction.max.age.ms}: the oracle aborts such a transaction, and its client must have stopped reading
     * in it by then (it counts the age from before its begin was sent, so its count ends first) and check the age
     * again after resolving a read, since commits its snapshot needs may be trimmed from then on.
     */
    public void expireReadersAfter(long maxAgeNanos) {
        readerMaxAgeNanos = maxAgeNanos;
    }

    /** Applies a run of decision blocks received from the oracle. Only the connection's I/O thread calls this. */
    public void apply(ByteBuf blocks) {
        int v = version;
        version = v + 1;
        VarHandle.storeStoreFence(); // readers that see any of the mutations below also see the odd version
        try {
            DecisionBlockReader.readAll(blocks, this);
            trim();
        } finally {
            version = v + 2; // volatile write: publishes the mutations to readers that read v + 2
        }
    }

    /**
     * Algorithm 4 for a version written by transaction {@code writerTs}, read by the local transaction
     * {@code readerTs} (which must be registered, or have started after the replica's current T_max).
     */
    public Visibility inSnapshot(long writerTs, long readerTs) {
        if (writerTs == readerTs) {
            return Visibility.VISIBLE;
        }
        if (Timestamps.isSelfCommitted(writerTs)) {
            return writerTs < readerTs ? Visibility.VISIBLE : Visibility.INVISIBLE; // committed at its version
        }
        for (int spins = 0; ; spins++) {
            int before = version;
            if ((before & 1) == 0) {
                Visibility v = decide(writerTs, readerTs);
                VarHandle.loadLoadFence(); // the table reads above complete before the version is re-read
                if (version == before) {
                    return v;
                }
            }
            backOff(spins);
        }
    }

    /**
     * Had {@code writerTs} committed before a read that began when this replica's T_max was {@code tMaxBefore} and its
     * highest decided timestamp {@code decidedBefore}? {@link Visibility#VISIBLE}: yes, so the versions the read
     * fetched are its final ones; {@link Visibility#INVISIBLE}: it aborted; {@link Visibility#ASK_ORACLE}: not known
     * (running then, committed since, or older than this connection): the oracle must say, and a writer that
     * committed may have had versions that it overwrote after the read fetched them.
     */
    public Visibility committedBefore(long writerTs, long tMaxBefore, long decidedBefore) {
        if (Timestamps.isSelfCommitted(writerTs)) {
            return Visibility.VISIBLE; // a fast-path version is in HBase only once committed
        }
        for (int spins = 0; ; spins++) {
            int before = version;
            if ((before & 1) == 0) {
                Visibility v = decideCommittedBefore(writerTs, tMaxBefore, decidedBefore);
                VarHandle.loadLoadFence();
                if (version == before) {
                    return v;
                }
            }
            backOff(spins);
        }
    }

    private Visibility decideCommittedBefore(long writerTs, long tMaxBefore, long decidedBefore) {
        long commitTs = commits.commitOf(writerTs);
        if (commitTs != 0) {
            return commitTs <= decidedBefore ? Visibility.VISIBLE : Visibility.ASK_ORACLE;
        }
        if (aborted.contains(writerTs)) {
            return Visibility.INVISIBLE;
        }
        AbortedRange range = ranges.find(writerTs);
        if (range != null) {
            if (range.isCommitted(writerTs) || committedBeforeInit.contains(writerTs)) {
                return Visibility.VISIBLE; // before the crash that made the range
            }
            return range.committedKnown() ? Visibility.INVISIBLE : Visibility.ASK_ORACLE;
        }
        if (writerTs < tMaxBefore || committedBeforeInit.contains(writerTs)) {
            // Below T_max and not aborted: committed before T_max passed it (the oracle aborts a running
            // transaction T_max passes), so before the read began.
            return Visibility.VISIBLE;
        }
        return Visibility.ASK_ORACLE;
    }

    private static void backOff(int spins) {
        if (spins < SPINS_BEFORE_YIELD) {
            Thread.onSpinWait();
        } else {
            Thread.yield(); // the applying thread may be descheduled mid-block
        }
    }

    private Visibility decide(long writerTs, long readerTs) {
        long commitTs = commits.commitOf(writerTs);
        if (commitTs != 0) {
            return commitTs < readerTs ? Visibility.VISIBLE : Visibility.INVISIBLE;
        }
        if (aborted.contains(writerTs)) {
            return Visibility.INVISIBLE;
        }
        AbortedRange range = ranges.find(writerTs);
        if (range != null) {
            if (range.isCommitted(writerTs)) {
                // Committed before the crash that produced the range, so at or before its end.
                return readerTs > range.to() ? Visibility.VISIBLE : Visibility.ASK_ORACLE;
            }
            if (range.committedKnown()) {
                return Visibility.INVISIBLE; // running when an oracle stopped: aborted
            }
            // A range learnt from a block alone (not expected: the oracle sends them in the handshake).
            return committedBeforeInit.contains(writerTs) ? Visibility.VISIBLE : Visibility.ASK_ORACLE;
        }
        if (writerTs < tMax) {
            return Visibility.VISIBLE; // committed long ago (below T_max, not aborted, not still needed here)
        }
        if (writerTs >= tInit) {
            // Every commit after T_init reaches us before any start timestamp it precedes: not committed for us.
            return Visibility.INVISIBLE;
        }
        if (committedBeforeInit.contains(writerTs)) {
            return Visibility.VISIBLE;
        }
        return Visibility.ASK_ORACLE;
    }

    /** Records the oracle's answer that {@code writerTs} (below T_init) committed before this connection began. */
    public void rememberCommittedBeforeInit(long writerTs) {
        if (writerTs < tInit) {
            committedBeforeInit.add(writerTs);
        }
    }

    /**
     * The highest timestamp in the decisions this replica applied (commit timestamps, aborted start timestamps, ends
     * of aborted ranges), or 0 (any thread).
     */
    public long highestTimestampApplied() {
        for (int spins = 0; ; spins++) {
            int before = version;
            if ((before & 1) == 0) {
                long h = highestDecided;
                VarHandle.loadLoadFence();
                if (version == before) {
                    return h;
                }
            }
            backOff(spins);
        }
    }

    /** The aborted transactions this replica knows that started below {@code bound}, ascending (any thread). */
    public long[] abortedBelow(long bound) {
        for (int spins = 0; ; spins++) {
            int before = version;
            if ((before & 1) == 0) {
                long[] found = new long[16];
                int[] n = {0};
                long[][] out = {found};
                aborted.forEach(ts -> {
                    if (ts < bound) {
                        if (n[0] == out[0].length) {
                            out[0] = Arrays.copyOf(out[0], n[0] * 2);
                        }
                        out[0][n[0]++] = ts;
                    }
                });
                VarHandle.loadLoadFence();
                if (version == before) {
                    long[] result = Arrays.copyOf(out[0], n[0]);
                    Arrays.sort(result);
                    return result;
                }
            }
            backOff(spins);
        }
    }

    /** True if the replica knows {@code writerTs} aborted. */
    public boolean isAborted(long writerTs) {
        if (Timestamps.isSelfCommitted(writerTs)) {
            return false;
        }
        for (int spins = 0; ; spins++) {
            int before = version;
            if ((before & 1) == 0) {
                boolean a = aborted.contains(writerTs);
                VarHandle.loadLoadFence();
                if (version == before) {
                    return a;
                }
            }
            backOff(spins);
        }
    }

    /**
     * A read of the past begins: until it ends ({@link #pastReaderEnds} with the token returned), or outlives the
     * longest a read of the past may last, aborts this replica forgets stay known to {@link #pastVisibility}.
     */
    public long pastReaderBegins() {
        return pastReaders.begins();
    }

    /** The read of the past registered as {@code token} ends. */
    public void pastReaderEnds(long token) {
        pastReaders.ends(token);
    }

    /**
     * For a read of the past: is the writer {@code writerTs}, which finished before the point read at (a history
     * point says so), committed? {@link Visibility#ASK_ORACLE} for a writer in an aborted range whose commits this
     * replica does not know. Only between {@link #pastReaderBegins} and {@link #pastReaderEnds}.
     */
    public Visibility pastVisibility(long writerTs) {
        return pastReaders.visibility(writerTs, isAborted(writerTs), ranges.items());
    }

    /** Commit timestamp the replica holds for {@code writerTs}, or 0. */
    public long commitTimestampOf(long writerTs) {
        for (int spins = 0; ; spins++) {
            int before = version;
            if ((before & 1) == 0) {
                long c = commits.commitOf(writerTs);
                VarHandle.loadLoadFence();
                if (version == before) {
                    return c;
                }
            }
            backOff(spins);
        }
    }

    // ---------------------------------------------------------------- applying thread only (inside apply)

    @Override
    public void onCommit(long startTs, long commitTs) {
        if (commitTs > highestDecided) {
            highestDecided = commitTs;
        }
        commits.add(startTs, commitTs);
    }

    @Override
    public void onAbort(long startTs) {
        aborted.add(startTs);
        if (startTs > highestDecided) {
            highestDecided = startTs;
        }
    }

    @Override
    public void onForget(long startTs) {
        pastReaders.forgetting(startTs);
        aborted.remove(startTs);
    }

    /**
     * A recovered oracle's ABORT_RANGE. The oracle writes it before it serves anyone and every connection gets it,
     * with its commits, in the handshake, so normally it is known already. Otherwise it is kept without its commits:
     * writers in it that are neither aborted nor known committed are then asked about.
     */
    @Override
    public void onAbortRange(long from, long to) {
        if (to > highestDecided) {
            highestDecided = to;
        }
        ranges = ranges.with(from, to);
    }

    /**
     * The oracle forgot the range: the sweeper deleted the versions of its in-doubt writers, and every transaction
     * that started before that (local ones included: the oracle counts them) has finished.
     */
    @Override
    public void onForgetRange(long from, long to) {
        ReplicaRanges current = ranges;
        AbortedRange forgotten = current.get(from, to);
        if (forgotten != null) {
            pastReaders.forgettingRange(forgotten);
            ranges = current.without(from, to);
        }
    }

    @Override
    public void onTmax(long newTmax) {
        if (newTmax > tMax) {
            tMax = newTmax;
        }
    }

    private void trim() {
        long bound = tMax;
        long maxAge = readerMaxAgeNanos;
        long oldestReader = maxAge == 0 ? readers.oldest() : readers.oldestRegisteredSince(System.nanoTime() - maxAge);
        if (oldestReader != LocalReaders.NONE && oldestReader - 1 < bound) {
            bound = oldestReader - 1;
        }
        commits.trimThrough(bound, tMax);
        if (--appliesUntilShrinkCheck == 0) {
            appliesUntilShrinkCheck = SHRINK_CHECK_INTERVAL;
            shrinkIfSparse();
        }
        if (!committedBeforeInit.isEmpty()) {
            committedBeforeInit.removeIf(ts -> ts < tMax);
        }
    }

    /** After a burst (a long local reader, a slow T_max), gives back memory that stayed unused for a whole interval. */
    private void shrinkIfSparse() {
        commits.shrinkIfSparse();
        aborted.shrinkIfSparse();
    }

    /** Diagnostic only: the counts are read without the sequence lock (so it is safe inside {@link #apply}). */
    @Override
    public String toString() {
        return "CommitReplica{tInit=" + tInit + ", tMax=" + tMax + ", commits=" + commits.size() + ", aborted="
                + aborted.size() + ", aborted ranges=" + ranges + ", readers=" + Arrays.toString(readers.snapshot()) + "}";
    }
}
