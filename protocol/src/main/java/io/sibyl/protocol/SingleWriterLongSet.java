package io.sibyl.protocol;

/**
 * Open-addressing (linear probing) set of positive {@code long}s in one {@code long[]}, without boxing. 0 marks an
 * empty slot (timestamps start at 1).
 *
 * <p>Same threading contract and sizing as {@link SingleWriterLongLongMap}: one writer thread mutates; any thread may
 * call {@link #contains} concurrently under an external sequence lock and then never throws, never indexes out of
 * bounds and never loops forever, though its answer is meaningless if a mutation overlapped it. Resizing publishes a
 * fully built table by replacing the reference. Backward-shift deletion; grows by half above 3/4 load, and
 * {@link #shrinkIfSparse} shrinks it when it stayed below 1/8 load.
 */
public final class SingleWriterLongSet {
    private static final int MAX_SLOTS = 1 << 30;

    /** Keys, one per slot. Written only by the writer thread. */
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

    private static int slotsFor(long n) {
        if (n > MAX_SLOTS / 2) {
            throw new IllegalArgumentException("too many keys: " + n);
        }
        return (int) Math.max(16, 2 * n); // 1/2 load
    }

    private static int growThreshold(int slots) {
        return (int) (slots * 3L / 4);
    }

    // ------------------------------------------------------------------------------------------- any thread

    /** Whether {@code key} is present. Safe concurrently with the writer under a sequence lock (class comment). */
    public boolean contains(long key) {
        if (key == 0) {
            return false;
        }
        long[] t = table;
        int slots = t.length;
        int i = SingleWriterLongLongMap.home(key, slots);
        for (int probes = 0; probes < slots; probes++) {
            long k = t[i];
            if (k == key) {
                return true;
            }
            if (k == 0) {
                return false;
            }
            if (++i == slots) {
                i = 0;
            }
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

    /** Current slot count; the table takes {@code 8 * slots()} bytes. */
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
        int slots = t.length;
        int i = SingleWriterLongLongMap.home(key, slots);
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
                    resize(slots + (slots >>> 1));
                }
                return true;
            }
            if (++i == slots) {
                i = 0;
            }
        }
    }

    /** Removes {@code key} (backward-shift deletion); returns true if it was present. Writer only. */
    public boolean remove(long key) {
        if (key == 0) {
            return false;
        }
        long[] t = table;
        int slots = t.length;
        int i = SingleWriterLongLongMap.home(key, slots);
        while (true) {
            long k = t[i];
            if (k == 0) {
                return false;
            }
            if (k == key) {
                break;
            }
            if (++i == slots) {
                i = 0;
            }
        }
        int hole = i;
        int j = i;
        while (true) {
            if (++j == slots) {
                j = 0;
            }
            long k = t[j];
            if (k == 0) {
                break;
            }
            int home = SingleWriterLongLongMap.home(k, slots);
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
     * Shrinks the table if it stayed under 1/8 load since the previous call (see
     * {@link SingleWriterLongLongMap#shrinkIfSparse}); returns true if it did. Writer only.
     */
    public boolean shrinkIfSparse() {
        int slots = table.length;
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
            throw new IllegalStateException("set too large: " + size + " keys");
        }
        long[] old = table;
        long[] t = new long[newSlots];
        for (long k : old) {
            if (k != 0) {
                int i = SingleWriterLongLongMap.home(k, newSlots);
                while (t[i] != 0) {
                    if (++i == newSlots) {
                        i = 0;
                    }
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
