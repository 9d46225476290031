package io.sibyl.protocol;

/**
 * Open-addressing (linear probing) set of positive {@code long}s in one {@code long[]}, without boxing. 0 marks an
 * empty slot (timestamps start at 1).
 *
 * <p>Same threading contract as {@link SingleWriterLongLongMap}: one writer thread mutates; any thread may call
 * {@link #contains} concurrently under an external sequence lock and then never throws, never indexes out of bounds
 * and never loops forever, though its answer is meaningless if a mutation overlapped it. Resizing publishes a fully
 * built table by replacing the reference. Backward-shift deletion; doubles above 3/4 load, and
 * {@link #shrinkIfSparse} shrinks it when it stayed below 1/8 load.
 */
public final class SingleWriterLongSet {
    private static final int MIN_SLOTS = 16;

    /** Keys; its length is a power of two. Written only by the writer thread. */
    private long[] table;
    private final int minSlots;
    private int size;
    private int growAt;
    /** Largest size since the last {@link #shrinkIfSparse} call. */
    private int peak;

    /** A set sized so that {@code expected} keys fit without resizing (and it never shrinks below that). */
    public SingleWriterLongSet(int expected) {
        minSlots = slotsFor(expected);
        table = new long[minSlots];
        growAt = growThreshold(minSlots);
    }

    private static int slotsFor(int n) {
        if (n > 1 << 29) {
            throw new IllegalArgumentException("too many keys: " + n);
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

    // ------------------------------------------------------------------------------------------- any thread

    /** Whether {@code key} is present. Safe concurrently with the writer under a sequence lock (class comment). */
    public boolean contains(long key) {
        if (key == 0) {
            return false;
        }
        long[] t = table;
        int mask = t.length - 1;
        int i = SingleWriterLongLongMap.spread(key) & mask;
        for (int probes = 0; probes < t.length; probes++) {
            long k = t[i];
            if (k == key) {
                return true;
            }
            if (k == 0) {
                return false;
            }
            i = (i + 1) & mask;
        }
        return false;
    }

    /** Number of keys. Readers need the sequence lock for a consistent value. */
    public int size() {
        return size;
    }

    public boolean isEmpty() {
        return size == 0;
    }

    /** Current slot count (a power of two); {@code 8 * slots()} bytes of table. */
    public int slots() {
        return table.length;
    }

    // ------------------------------------------------------------------------------------------- writer only

    /** Adds {@code key}; returns true if it was new. Writer only. */
    public boolean add(long key) {
        if (key <= 0) {
            throw new IllegalArgumentException("keys must be positive: " + key);
        }
        long[] t = table;
        int mask = t.length - 1;
        int i = SingleWriterLongLongMap.spread(key) & mask;
        while (true) {
            long k = t[i];
            if (k == key) {
                return false;
            }
            if (k == 0) {
                t[i] = key;
                if (++size > peak) {
                    peak = size;
                }
                if (size > growAt) {
                    resize(t.length << 1);
                }
                return true;
            }
            i = (i + 1) & mask;
        }
    }

    /** Removes {@code key} (backward-shift deletion); returns true if it was present. Writer only. */
    public boolean remove(long key) {
        if (key == 0) {
            return false;
        }
        long[] t = table;
        int mask = t.length - 1;
        int i = SingleWriterLongLongMap.spread(key) & mask;
        while (true) {
            long k = t[i];
            if (k == 0) {
                return false;
            }
            if (k == key) {
                break;
            }
            i = (i + 1) & mask;
        }
        int hole = i;
        int j = i;
        while (true) {
            j = (j + 1) & mask;
            long k = t[j];
            if (k == 0) {
                break;
            }
            int home = SingleWriterLongLongMap.spread(k) & mask;
            boolean homeBetween = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
            if (!homeBetween) {
                t[hole] = k;
                hole = j;
            }
        }
        t[hole] = 0;
        size--;
        return true;
    }

    /**
     * Shrinks the table if it stayed under 1/8 load since the previous call (its peak size, not just its current size,
     * decides, so a size that swings up and down does not make it shrink and regrow); the new table holds that peak at
     * no more than 1/2 load and is never smaller than the constructor's. Returns true if it resized. Call it now and
     * then, e.g. every few thousand batches of mutations. Writer only.
     */
    public boolean shrinkIfSparse() {
        int slots = table.length;
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
        long[] t = new long[newSlots];
        int mask = newSlots - 1;
        for (long k : old) {
            if (k != 0) {
                int i = SingleWriterLongLongMap.spread(k) & mask;
                while (t[i] != 0) {
                    i = (i + 1) & mask;
                }
                t[i] = k;
            }
        }
        growAt = growThreshold(newSlots);
        table = t;
    }

    /** Calls {@code action} for every key, in no particular order. Writer only. */
    public void forEach(java.util.function.LongConsumer action) {
        for (long k : table) {
            if (k != 0) {
                action.accept(k);
            }
        }
    }
}
