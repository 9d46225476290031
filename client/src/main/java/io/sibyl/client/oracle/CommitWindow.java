package io.sibyl.client.oracle;

import io.sibyl.protocol.SingleWriterLongLongMap;
import io.sibyl.protocol.Timestamps;

/**
 * The start-to-commit timestamps a {@link CommitReplica} holds, in about 2 bytes per oracle timestamp of the window
 * they span rather than 29-44 bytes per commit.
 *
 * <p><b>Layout.</b> The oracle hands out every multiple of {@link Timestamps#STEP} in turn, to begins and commits
 * alike, and a held commit started at most a window ago: so the starts of held commits are dense in a short range.
 * A ring of {@code char}s indexed by start timestamp ({@code (start - low) / STEP} slots after {@code head}) holds
 * each commit's distance {@code (commit - start) / STEP}; 0 means no commit. With two timestamps per transaction (a
 * begin and a commit, the so-bench load) that is 4 bytes per commit. A commit the ring cannot hold goes to a hash map
 * ({@code far}, 16 bytes per slot): a distance above {@link #DEFAULT_MAX_DISTANCE} steps (a transaction that ran
 * while more than 32,767 others began and committed), a start below the ring, a timestamp that is not a multiple of
 * {@code STEP} (tests), or an entry pushed out of a ring that would be too sparse to grow (see {@link #makeRoom}).
 *
 * <p><b>Trimming.</b> The replica forgets commits at or below a bound that only rises ({@link #trimThrough}); here a
 * commit at or below {@link #trimmedThrough} reads as absent wherever it still sits, so the answer is exactly that
 * of a table that removed it, and the slots are cleared when the ring's start moves past them. Its start moves past
 * a slot that is empty or forgotten, up to the replica's T_max: a transaction that commits later started at or
 * above T_max (the oracle aborts those T_max passes), so no later commit lands below it. The ring thus spans from
 * the oldest held commit's start to the newest start: the window between T_max (or the oldest running local
 * reader) and the newest timestamp, plus the duration of the transactions that straddle its lower end.
 *
 * <p><b>Threading.</b> Only the replica's applying thread mutates; any thread calls {@link #commitOf} and
 * {@link #size} under the replica's sequence lock, which discards answers read while the applying thread mutated.
 * Racing reads never throw: every index is checked against the array it reads, and the map tolerates races.
 */
final class CommitWindow {
    /** Largest distance, in steps, a ring slot holds. */
    static final int DEFAULT_MAX_DISTANCE = Character.MAX_VALUE;
    /** Slots of a new ring (it grows with the window and shrinks back after bursts). */
    static final int DEFAULT_INITIAL_SLOTS = 1024;
    /** A ring grows only if it stays at least this dense (commits per slot), i.e. at most 32 bytes per commit. */
    private static final int GROW_MIN_DENSITY_DIVISOR = 16;
    private static final int STEP_SHIFT = Long.numberOfTrailingZeros(Timestamps.STEP);

    static {
        if (Timestamps.STEP != 1L << STEP_SHIFT) {
            throw new ExceptionInInitializerError("Timestamps.STEP must be a power of two");
        }
    }

    private final int maxDistance;
    private final int initialSlots;
    /** Distances in steps, by start timestamp; 0: no commit. */
    private char[] ring;
    /** Index in {@link #ring} of the slot of start timestamp {@link #low}. */
    private int head;
    /** Start timestamp of the ring's first slot: a multiple of {@code STEP}, may be 0 or negative. */
    private long low;
    /** Slots in use from {@link #head}: they cover starts {@code [low, low + used * STEP)}; later ones are 0. */
    private int used;
    /** Non-zero slots (forgotten ones included until cleared). */
    private int occupied;
    /** Largest {@link #used} since the last {@link #shrinkIfSparse}. */
    private int peakUsed;
    /** Commits the ring cannot hold: start to commit timestamp. */
    private final SingleWriterLongLongMap far = new SingleWriterLongLongMap(16);
    /** Smallest commit timestamp that may be in {@link #far}, to know when a purge would find anything. */
    private long farLeastCommit = Long.MAX_VALUE;
    /** Size of {@link #far} after its last purge: it is purged again once it doubled. */
    private int farSizeAfterPurge;
    /** Commits at or below this are forgotten. */
    private long trimmedThrough;
    /** No commit applied from now on starts below this (the replica's T_max at the last trim). */
    private long noStartBelow;

    /** A window with the default ring: distances up to 65,535 steps, 1,024 slots to start with. */
    CommitWindow() {
        this(DEFAULT_MAX_DISTANCE, DEFAULT_INITIAL_SLOTS);
    }

    /** A window whose ring holds distances up to {@code maxDistance} steps, from {@code initialSlots} slots (tests). */
    CommitWindow(int maxDistance, int initialSlots) {
        if (maxDistance < 1 || maxDistance > Character.MAX_VALUE || initialSlots < 4) {
            throw new IllegalArgumentException("max distance " + maxDistance + ", initial slots " + initialSlots);
        }
        this.maxDistance = maxDistance;
        this.initialSlots = initialSlots;
        this.ring = new char[initialSlots];
    }

    // ------------------------------------------------------------------------------------------- any thread

    /** Commit timestamp of the transaction that started at {@code start}, or 0 if none is held. */
    long commitOf(long start) {
        long commit = inRing(start);
        if (commit > trimmedThrough) {
            return commit;
        }
        if (!far.isEmpty()) {
            commit = far.get(start, 0);
            if (commit > trimmedThrough) {
                return commit;
            }
        }
        return 0;
    }

    private long inRing(long start) {
        char[] r = ring;
        long fromLow = start - low;
        long offset = fromLow >> STEP_SHIFT;
        if ((fromLow & (Timestamps.STEP - 1)) != 0 || offset < 0 || offset >= r.length) {
            return 0;
        }
        int i = head + (int) offset;
        if (i >= r.length) {
            i -= r.length;
        }
        if (i < 0 || i >= r.length) {
            return 0; // head and ring read while a resize replaced them; the sequence lock discards this answer
        }
        int distance = r[i];
        return distance == 0 ? 0 : start + ((long) distance << STEP_SHIFT);
    }

    /** Number of commits held (a scan of the ring: for tests and diagnostics). */
    int size() {
        int n = 0;
        char[] r = ring;
        int count = Math.min(used, r.length);
        for (int k = 0, i = head; k < count && i < r.length; k++) {
            int distance = r[i];
            if (distance != 0 && low + ((long) k << STEP_SHIFT) + ((long) distance << STEP_SHIFT) > trimmedThrough) {
                n++;
            }
            if (++i == r.length) {
                i = 0;
            }
        }
        long[] farLive = {0};
        long bound = trimmedThrough;
        far.forEach((start, commit) -> {
            if (commit > bound) {
                farLive[0]++;
            }
        });
        return n + (int) farLive[0];
    }

    /** Bytes of the ring and the map, by their capacities. */
    long bytes() {
        return 2L * ring.length + 16L * far.slots();
    }

    // ------------------------------------------------------------------------------------------- applying thread

    /** Holds {@code start -> commit} unless a commit of {@code start} is held already. */
    void add(long start, long commit) {
        long distance = (commit - start) >> STEP_SHIFT;
        boolean fitsRing = ((start | commit) & (Timestamps.STEP - 1)) == 0 && commit > start
                && distance <= maxDistance;
        if (fitsRing && makeRoom(start)) {
            if (!far.isEmpty() && far.get(start, 0) > trimmedThrough) {
                return; // held already, in the map (a block delivered twice)
            }
            int i = slotOf(start);
            int held = ring[i];
            if (held != 0) {
                if (start + ((long) held << STEP_SHIFT) > trimmedThrough) {
                    return; // held already
                }
            } else {
                occupied++;
            }
            ring[i] = (char) distance;
            return;
        }
        if (commitOf(start) == 0) {
            far.put(start, commit);
            farLeastCommit = Math.min(farLeastCommit, commit);
        }
    }

    /** Forgets every commit at or below {@code bound}; no commit applied later starts below {@code tMax}. */
    void trimThrough(long bound, long tMax) {
        if (bound > trimmedThrough) {
            trimmedThrough = bound;
        }
        if (tMax > noStartBelow) {
            noStartBelow = tMax;
        }
        advancePastForgotten();
        if (trimmedThrough >= farLeastCommit && far.size() >= 2 * farSizeAfterPurge + 16) {
            purgeFar();
        }
    }

    /** After a burst (a long local reader, a slow T_max), gives back memory that stayed unused for a whole interval. */
    void shrinkIfSparse() {
        int peak = peakUsed;
        peakUsed = used;
        if (ring.length > initialSlots && peak < ring.length >>> 3) {
            resize(Math.max(initialSlots, 2 * peak));
        }
        if (trimmedThrough >= farLeastCommit) {
            purgeFar();
        }
        far.shrinkIfSparse();
    }

    private void purgeFar() {
        farLeastCommit = far.removeValuesAtMost(trimmedThrough);
        farSizeAfterPurge = far.size();
    }

    private int slotOf(long start) {
        int i = head + (int) ((start - low) >> STEP_SHIFT);
        return i >= ring.length ? i - ring.length : i;
    }

    /**
     * Makes the ring cover {@code start}; false if {@code start} lies below it (it goes to the map then). Past the
     * ring's end it first drops forgotten slots at its start, then grows the ring if it stays dense enough, and
     * otherwise moves the oldest slots' commits to the map.
     */
    private boolean makeRoom(long start) {
        if (used == 0 && (start < low || start - low >= ((long) ring.length << STEP_SHIFT))) {
            // Empty: start over around this commit, with room for starts a little below it.
            low = start - ((long) (ring.length >>> 2) << STEP_SHIFT);
        }
        long offset = (start - low) >> STEP_SHIFT;
        if (offset < 0) {
            return false;
        }
        if (offset >= ring.length) {
            advancePastForgotten();
            offset = (start - low) >> STEP_SHIFT;
        }
        if (offset >= ring.length) {
            long wanted = Math.max(ring.length + (ring.length >>> 1), offset + 1);
            if (wanted <= Integer.MAX_VALUE - 8 && occupied >= wanted / GROW_MIN_DENSITY_DIVISOR) {
                resize((int) wanted);
            } else {
                moveToFarBelow(start - ((long) (ring.length - 1) << STEP_SHIFT));
            }
            offset = (start - low) >> STEP_SHIFT;
        }
        if (offset >= used) {
            used = (int) offset + 1;
            if (used > peakUsed) {
                peakUsed = used;
            }
        }
        return true;
    }

    /** Moves the ring's start past slots that are empty or forgotten, up to {@link #noStartBelow}, clearing them. */
    private void advancePastForgotten() {
        while (used > 0 && low < noStartBelow) {
            int distance = ring[head];
            if (distance != 0 && low + ((long) distance << STEP_SHIFT) > trimmedThrough) {
                return; // the oldest held start
            }
            dropFirstSlot();
        }
    }

    /** Moves the ring's start up to {@code newLow}, moving held commits below it to the map. */
    private void moveToFarBelow(long newLow) {
        while (used > 0 && low < newLow) {
            int distance = ring[head];
            long commit = low + ((long) distance << STEP_SHIFT);
            if (distance != 0 && commit > trimmedThrough) {
                far.put(low, commit);
                farLeastCommit = Math.min(farLeastCommit, commit);
            }
            dropFirstSlot();
        }
        if (low < newLow) {
            low = newLow; // the ring is empty
        }
    }

    /** Clears the ring's first slot and moves its start one step on. */
    private void dropFirstSlot() {
        if (ring[head] != 0) {
            ring[head] = 0;
            occupied--;
        }
        if (++head == ring.length) {
            head = 0;
        }
        low += Timestamps.STEP;
        used--;
    }

    private void resize(int slots) {
        char[] r = ring;
        char[] next = new char[slots];
        for (int k = 0, i = head; k < used; k++) {
            next[k] = r[i];
            if (++i == r.length) {
                i = 0;
            }
        }
        ring = next;
        head = 0;
    }
}
