package io.sibyl.oracle;

/**
 * Open-addressing map from positive long keys to long values, without boxing. Key 0 marks an empty slot, which
 * is safe because timestamps start at 1. Single-threaded.
 */
public final class LongLongHashMap {
    private static final long NO_VALUE = Long.MIN_VALUE;
    private long[] keys;
    private long[] values;
    private int mask;
    private int size;
    private final boolean clustered;

    /** A map for keys with no useful order. */
    public LongLongHashMap(int expected) {
        this(expected, false);
    }

    /**
     * @param clustered keys arrive as nearby, mostly increasing values (recent timestamps): place them by value, so
     *                  consecutive keys share cache lines instead of costing a cache miss each
     */
    public LongLongHashMap(int expected, boolean clustered) {
        this.clustered = clustered;
        int capacity = Integer.highestOneBit(Math.max(16, expected * 2 - 1)) << 1;
        keys = new long[capacity];
        values = new long[capacity];
        mask = capacity - 1;
    }

    /** Heap bytes a map sized for {@code expected} keys allocates before it grows. */
    static long footprintBytes(int expected) {
        int capacity = Integer.highestOneBit(Math.max(16, expected * 2 - 1)) << 1;
        return 2L * capacity * Long.BYTES;
    }

    private int spread(long key) {
        if (clustered) {
            return (int) key;
        }
        long h = key * 0x9E3779B97F4A7C15L;
        return (int) (h ^ (h >>> 32));
    }

    /** Returns the value for {@code key}, or {@code missing} when absent. */
    public long get(long key, long missing) {
        if (key == 0) {
            return missing;
        }
        int i = spread(key) & mask;
        while (true) {
            long k = keys[i];
            if (k == key) {
                return values[i];
            }
            if (k == 0) {
                return missing;
            }
            i = (i + 1) & mask;
        }
    }

    public boolean containsKey(long key) {
        return get(key, NO_VALUE) != NO_VALUE;
    }

    /** Inserts or replaces; returns true if the key was new. */
    public boolean put(long key, long value) {
        if (key <= 0) {
            throw new IllegalArgumentException("keys must be positive: " + key);
        }
        int i = spread(key) & mask;
        while (true) {
            long k = keys[i];
            if (k == key) {
                values[i] = value;
                return false;
            }
            if (k == 0) {
                keys[i] = key;
                values[i] = value;
                if (++size * 2 > keys.length) {
                    grow();
                }
                return true;
            }
            i = (i + 1) & mask;
        }
    }

    /** Removes {@code key}; returns true if it was present. Uses backward-shift deletion, so no tombstones pile up. */
    public boolean remove(long key) {
        int i = spread(key) & mask;
        while (true) {
            long k = keys[i];
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
            long k = keys[j];
            if (k == 0) {
                break;
            }
            int home = spread(k) & mask;
            // Move k back into the hole unless its home lies cyclically in (hole, j].
            boolean homeBetween = hole <= j ? (home > hole && home <= j) : (home > hole || home <= j);
            if (!homeBetween) {
                keys[hole] = k;
                values[hole] = values[j];
                hole = j;
            }
        }
        keys[hole] = 0;
        values[hole] = 0;
        size--;
        return true;
    }

    public int size() {
        return size;
    }

    /** Calls {@code action} for every entry, in no particular order. */
    public void forEach(LongLongConsumer action) {
        for (int i = 0; i < keys.length; i++) {
            if (keys[i] != 0) {
                action.accept(keys[i], values[i]);
            }
        }
    }

    private void grow() {
        long[] oldKeys = keys;
        long[] oldValues = values;
        keys = new long[oldKeys.length * 2];
        values = new long[oldKeys.length * 2];
        mask = keys.length - 1;
        size = 0;
        for (int i = 0; i < oldKeys.length; i++) {
            if (oldKeys[i] != 0) {
                put(oldKeys[i], oldValues[i]);
            }
        }
    }

    /** Receives one entry. */
    @FunctionalInterface
    public interface LongLongConsumer {
        void accept(long key, long value);
    }
}
