package io.sibyl.bench;

import java.util.HashSet;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Builds the write set of one transaction: a size from the size distribution, then that many distinct keys drawn
 * from the key chooser, sent as row ids. A row id is a bijective 64-bit mix of the key number, so distinct keys
 * never collide and the ids look random to the oracle's hash table.
 */
final class WriteSets {
    private static final int LINEAR_CHECK_LIMIT = 64;

    private final KeyChooser keys;
    private final WriteSetSizes sizes;

    WriteSets(KeyChooser keys, WriteSetSizes sizes) {
        this.keys = keys;
        this.sizes = sizes;
    }

    /** A fresh array of row ids (the client keeps it until the request is written). */
    long[] next(ThreadLocalRandom random) {
        return rowIds(nextKeys(random));
    }

    /** The key numbers of a fresh write set, distinct (a serializable slot also derives the granules from them). */
    long[] nextKeys(ThreadLocalRandom random) {
        return distinctKeys(keys, sizes.next(random), random);
    }

    /** {@code size} distinct key numbers drawn from {@code keys}. */
    static long[] distinctKeys(KeyChooser keys, int size, ThreadLocalRandom random) {
        long[] drawn = new long[size];
        if (size <= LINEAR_CHECK_LIMIT) {
            int n = 0;
            while (n < size) {
                long key = keys.next(random);
                if (!contains(drawn, n, key)) {
                    drawn[n++] = key;
                }
            }
        } else {
            HashSet<Long> seen = new HashSet<>(size * 2);
            int n = 0;
            while (n < size) {
                long key = keys.next(random);
                if (seen.add(key)) {
                    drawn[n++] = key;
                }
            }
        }
        return drawn;
    }

    /** The row ids of {@code keys}, in a fresh array. */
    static long[] rowIds(long[] keys) {
        long[] rows = new long[keys.length];
        for (int i = 0; i < keys.length; i++) {
            rows[i] = rowId(keys[i]);
        }
        return rows;
    }

    private static boolean contains(long[] drawn, int n, long key) {
        for (int i = 0; i < n; i++) {
            if (drawn[i] == key) {
                return true;
            }
        }
        return false;
    }

    /** Bijective mix of a key number (splitmix64 finaliser of key + golden gamma): distinct keys, distinct ids. */
    static long rowId(long key) {
        long z = key + 0x9E3779B97F4A7C15L;
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }
}
