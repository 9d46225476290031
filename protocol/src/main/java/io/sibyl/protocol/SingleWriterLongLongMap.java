package io.sibyl.protocol;

/**
 * Open-addressing (linear probing) map from positive {@code long} keys to {@code long} values, without boxing: keys
 * and values are interleaved in one {@code long[]} ({@code [k0, v0, k1, v1, ...]}), so an entry costs 16 bytes per
 * slot and a lookup usually touches one cache line. Key 0 marks an empty slot (timestamps start at 1).
 *
 * <p><b>Threading.</b> One thread mutates the map. Other threads may call {@link #get} and {@link #containsKey} at any
 * time, under an external sequence lock that tells them whether what they read was consistent: while the writer is
 * mutating, a reader may get a stale or wrong answer, but it never throws, never indexes out of bounds and never
 * loops forever. Readers read the table reference once, derive the mask from that array's length and bound every
 * probe by its slot count; growth and shrinking publish a new, fully built table by replacing the reference, so a
 * reader still on the old one sees stale (then rejected) data. The sequence lock supplies the happens-before edges;
 * this class itself has no fences.
 *
 * <p>Deletion is by backward shift, so no tombstones accumulate. Mutations never allocate except when the table is
 * resized: it doubles above 3/4 load, and {@link #shrinkIfSparse} shrinks it when it stayed below 1/8 load.
 */
public final class SingleWriterLongLongMap {
    private static final int MIN_SLOTS = 16;

    /** Interleaved keys and values; its length is twice a power of two. Written only by the writer thread. */
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

    /** Smallest power-of-two slot count holding {@code n} entries at no more than 1/2 load. */
    private static int slotsFor(int n) {
        if (n > 1 << 28) {
            throw new IllegalArgumentException("too many entries: " + n);
        }
        int slots = MIN_SLOTS;
        while (slots < 2 * n) {
            slots <<= 1;
        }
        return slots;
    }

    private static int growThreshold(int slots) {
        return slots - (slots >>> 2);
    }

    static int spread(long key) {
        long h = key * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32));
    }

    // ------------------------------------------------------------------------------------------- any thread

    /**
     * Value for {@code key}, or {@code missing}. Safe to call concurrently with the writer (see the class comment):
     * the answer is only meaningful if the caller's sequence lock confirms no mutation overlapped it.
     */
    public long get(long key, long missing) {
        if (key == 0) {
            return missing;
        }
        long[] t = table;
        int slots = t.length >>> 1;
        int mask = slots - 1;
        int i = spread(key) & mask;
        for (int probes = 0; probes < slots; probes++) {
            int p = i << 1;
            long k = t[p];
            if (k == key) {
                return t[p + 1];
            }
            if (k == 0) {
                return missing;
            }
            i = (i + 1) & mask;
        }
        return missing;
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

    /** Current slot count (a power of two); {@code 16 * slots()} bytes of table. */
    public int slots() {
        return table.length >>> 1;
    }

    /** Array index of {@code key}'s key cell in {@code t}, or -1. Bounded and in range even on a torn table. */
    private static int indexIn(long[] t, long key) {
        if (key == 0) {
            return -1;
        }
        int slots = t.length >>> 1;
        int mask = slots - 1;
        int i = spread(key) & mask;
        for (int probes = 0; probes < slots; probes++) {
            int p = i << 1;
            long k = t[p];
            if (k == key) {
                return p;
            }
            if (k == 0) {
                return -1;
            }
            i = (i + 1) & mask;
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
        int mask = (t.length >>> 1) - 1;
        int i = spread(key) & mask;
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
                    resize((mask + 1) << 1);
                }
                return true;
            }
            i = (i + 1) & mask;
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
        int mask = (t.length >>> 1) - 1;
        int hole = index >>> 1;
        int j = hole;
        while (true) {
            j = (j + 1) & mask;
            long k = t[j << 1];
            if (k == 0) {
                break;
            }
            int home = spread(k) & mask;
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
     * Shrinks the table if it stayed under 1/8 load since the previous call (its peak size, not just its current size,
     * decides, so a size that swings up and down does not make it shrink and regrow); the new table holds that peak at
     * no more than 1/2 load and is never smaller than the constructor's. Returns true if it resized. Call it now and
     * then, e.g. every few thousand batches of mutations. Writer only.
     */
    public boolean shrinkIfSparse() {
        int slots = table.length >>> 1;
        int high = peak;
        peak = size;
        if (slots <= minSlots || high >= slots >>> 3) {
            return false;
        }
        int target = Math.max(minSlots, slotsFor(high));
        if (target >= slots) {
            return false;
        }
        resize(target);
        return true;
    }

    private void resize(int newSlots) {
        long[] old = table;
        long[] t = new long[newSlots * 2];
        int mask = newSlots - 1;
        for (int p = 0; p < old.length; p += 2) {
            long k = old[p];
            if (k != 0) {
                int i = spread(k) & mask;
                while (t[i << 1] != 0) {
                    i = (i + 1) & mask;
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
