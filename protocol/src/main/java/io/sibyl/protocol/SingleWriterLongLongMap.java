package io.sibyl.protocol;

/**
 * Open-addressing (linear probing) map from positive {@code long} keys to {@code long} values, without boxing: keys
 * and values are interleaved in one {@code long[]} ({@code [k0, v0, k1, v1, ...]}), so an entry costs 16 bytes per
 * slot and a lookup usually touches one cache line. Key 0 marks an empty slot (timestamps start at 1).
 *
 * <p><b>Threading.</b> One thread mutates the map. Other threads may call {@link #get} and {@link #containsKey} at any
 * time, under an external sequence lock that tells them whether what they read was consistent: while the writer is
 * mutating, a reader may get a stale or wrong answer, but it never throws, never indexes out of bounds and never
 * loops forever. Readers read the table reference once, derive the slot count from that array's length (every slot
 * index is reduced into it) and bound every probe by it; growth and shrinking publish a new, fully built table by
 * replacing the reference, so a reader still on the old one sees stale (then rejected) data. The sequence lock
 * supplies the happens-before edges; this class itself has no fences.
 *
 * <p><b>Sizing.</b> The slot count need not be a power of two (a key's home slot is its Fibonacci hash scaled into the
 * slot count), so the table grows by half above 3/4 load: it stays between 1/2 and 3/4 full while it grows, 21 to 32
 * bytes per entry, even when the entry count settles just above a power of two. {@link #shrinkIfSparse} shrinks it
 * when it stayed below 1/8 load. Deletion is by backward shift, so no tombstones accumulate. Mutations never allocate
 * except when the table is resized.
 */
public final class SingleWriterLongLongMap {
    private static final int MIN_SLOTS = 16;
    /** Largest slot count: the table's length must stay an array length. */
    private static final int MAX_SLOTS = 1 << 29;

    /** Interleaved keys and values ({@code 2 * slots} longs). Written only by the writer thread. */
    private long[] table;
    private final int minSlots;
    private int size;
    private int growAt;
    /** Largest size since the last {@link #shrinkIfSparse} call. */
    private int peak;

    /** A map sized so that {@code expected} entries fit without resizing (and it never shrinks below that). */
    public SingleWriterLongLongMap(int expected) {
        minSlots = slotsFor(expected);
        table = new long[minSlots * 2];
        growAt = growThreshold(minSlots);
    }

    /** Slot count holding {@code n} entries at 1/2 load. */
    static int slotsFor(long n) {
        if (n > MAX_SLOTS / 2) {
            throw new IllegalArgumentException("too many entries: " + n);
        }
        return (int) Math.max(MIN_SLOTS, 2 * n);
    }

    private static int growThreshold(int slots) {
        return (int) (slots * 3L / 4);
    }

    /** Home slot of {@code key} in a table of {@code slots} slots: always in {@code [0, slots)}. */
    static int home(long key, int slots) {
        long h = (key * 0x9E3779B97F4A7C15L) >>> 32; // the well-mixed high half of a Fibonacci hash
        return (int) ((h * slots) >>> 32);
    }

    // ------------------------------------------------------------------------------------------- any thread

    /**
     * Value for {@code key}, or {@code missing}. Safe to call concurrently with the writer (see the class comment):
     * the answer is only meaningful if the caller's sequence lock confirms no mutation overlapped it.
     */
    public long get(long key, long missing) {
        long[] t = table;
        int index = indexIn(t, key);
        return index < 0 ? missing : t[index + 1];
    }

    /** Same threading contract as {@link #get}. */
    public boolean containsKey(long key) {
        return indexIn(table, key) >= 0;
    }

    /** Number of entries. Readers need the sequence lock for a consistent value. */
    public int size() {
        return size;
    }

    public boolean isEmpty() {
        return size == 0;
    }

    /** Current slot count; the table takes {@code 16 * slots()} bytes. */
    public int slots() {
        return table.length >>> 1;
    }

    /**
     * Array index of {@code key}'s key cell in {@code t}, or -1. Bounded and in range even on a table being
     * mutated: {@code i} stays in {@code [0, slots)} and {@code 2 * slots <= t.length}.
     */
    private static int indexIn(long[] t, long key) {
        if (key == 0) {
            return -1;
        }
        int slots = t.length >>> 1;
        int i = home(key, slots);
        for (int probes = 0; probes < slots; probes++) {
            int p = i << 1;
            long k = t[p];
            if (k == key) {
                return p;
            }
            if (k == 0) {
                return -1;
            }
            if (++i == slots) {
                i = 0;
            }
        }
        return -1;
    }

    // ------------------------------------------------------------------------------------------- writer only

    /**
     * Position of {@code key} for {@link #valueAt} and {@link #removeAt}, or a negative number when absent. Valid
     * until the next mutation. Writer thread only.
     */
    public int indexOf(long key) {
        return indexIn(table, key);
    }

    /** Value at a position returned by {@link #indexOf}. Writer thread only. */
    public long valueAt(int index) {
        return table[index + 1];
    }

    /** Inserts {@code key -> value} unless {@code key} is present; returns true if it inserted. Writer only. */
    public boolean putIfAbsent(long key, long value) {
        return insert(key, value, false);
    }

    /** Inserts or replaces; returns true if {@code key} was new. Writer only. */
    public boolean put(long key, long value) {
        return insert(key, value, true);
    }

    private boolean insert(long key, long value, boolean replace) {
        if (key <= 0) {
            throw new IllegalArgumentException("keys must be positive: " + key);
        }
        long[] t = table;
        int slots = t.length >>> 1;
        int i = home(key, slots);
        while (true) {
            int p = i << 1;
            long k = t[p];
            if (k == key) {
                if (replace) {
                    t[p + 1] = value;
                }
                return false;
            }
            if (k == 0) {
                t[p + 1] = value;
                t[p] = key;
                if (++size > peak) {
                    peak = size;
                }
                if (size > growAt) {
                    resize(slots + (slots >>> 1));
                }
                return true;
            }
            if (++i == slots) {
                i = 0;
            }
        }
    }

    /** Removes {@code key}; returns true if it was present. Writer only. */
    public boolean remove(long key) {
        int index = indexOf(key);
        if (index < 0) {
            return false;
        }
        removeAt(index);
        return true;
    }

    /** Removes the entry at a position returned by {@link #indexOf} (backward-shift deletion). Writer only. */
    public void removeAt(int index) {
        long[] t = table;
        int slots = t.length >>> 1;
        int hole = index >>> 1;
        int j = hole;
        while (true) {
            if (++j == slots) {
                j = 0;
            }
            long k = t[j << 1];
            if (k == 0) {
                break;
            }
            int home = home(k, slots);
            // k may move back into the hole unless its home lies cyclically in (hole, j].
            boolean homeBetween = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
            if (!homeBetween) {
                t[(hole << 1) + 1] = t[(j << 1) + 1];
                t[hole << 1] = k;
                hole = j;
            }
        }
        t[hole << 1] = 0;
        t[(hole << 1) + 1] = 0;
        size--;
    }

    /**
     * Removes every entry whose value is at most {@code max}, without allocating, and returns the smallest value left
     * ({@link Long#MAX_VALUE} if none). Writer only.
     */
    public long removeValuesAtMost(long max) {
        long[] t = table;
        int slots = t.length >>> 1;
        long least = Long.MAX_VALUE;
        for (int i = 0; i < slots; i++) {
            // A removal shifts a later entry back into slot i, so look at slot i again until it keeps its entry. An
            // entry shifted from the start of the table to its end is only looked at twice.
            while (t[i << 1] != 0 && t[(i << 1) + 1] <= max) {
                removeAt(i << 1);
            }
            if (t[i << 1] != 0 && t[(i << 1) + 1] < least) {
                least = t[(i << 1) + 1];
            }
        }
        return least;
    }

    /**
     * Shrinks the table if it stayed under 1/8 load since the previous call (its peak size, not just its current size,
     * decides, so a size that swings up and down does not make it shrink and regrow); the new table holds that peak at
     * 1/2 load and is never smaller than the constructor's. Returns true if it resized. Call it now and then, e.g.
     * every few thousand batches of mutations. Writer only.
     */
    public boolean shrinkIfSparse() {
        int slots = table.length >>> 1;
        int high = peak;
        peak = size;
        if (slots <= minSlots || high >= slots >>> 3) {
            return false;
        }
        resize(Math.max(minSlots, slotsFor(high)));
        return true;
    }

    private void resize(int newSlots) {
        if (newSlots > MAX_SLOTS) {
            throw new IllegalStateException("map too large: " + size + " entries");
        }
        long[] old = table;
        long[] t = new long[newSlots * 2];
        for (int p = 0; p < old.length; p += 2) {
            long k = old[p];
            if (k != 0) {
                int i = home(k, newSlots);
                while (t[i << 1] != 0) {
                    if (++i == newSlots) {
                        i = 0;
                    }
                }
                t[i << 1] = k;
                t[(i << 1) + 1] = old[p + 1];
            }
        }
        growAt = growThreshold(newSlots);
        table = t; // readers switch to the complete new table; the old one stays intact for readers still on it
    }

    /** Calls {@code action} for every entry, in no particular order. Writer only. */
    public void forEach(LongLongConsumer action) {
        long[] t = table;
        for (int p = 0; p < t.length; p += 2) {
            if (t[p] != 0) {
                action.accept(t[p], t[p + 1]);
            }
        }
    }

    /** Receives one entry. */
    @FunctionalInterface
    public interface LongLongConsumer {
        void accept(long key, long value);
    }
}
