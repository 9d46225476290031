package io.sibyl.bench;

import java.util.HashSet;
import java.util.concurrent.ThreadLocalRandom;

/**
 * Builds the write set of one transaction: a size from the size distribution, then that many distinct row ids
 * drawn from the key chooser. A row id is a bijective 64-bit mix of the key number, so distinct keys never collide
 * and the ids look random to the oracle's hash table.
 */
final class WriteSets {
    private static final int LINEAR_CHECK_LIMIT = 64;

    private final KeyChooser keys;
    private final WriteSetSizes sizes;

    WriteSets(KeyChooser keys, WriteSetSizes sizes) {
        this.keys = keys;
        this.sizes = sizes;
    }

    /** A fresh array (the client keeps it until the request is written). */
    long[] next(ThreadLocalRandom random) {
        int size = sizes.next(random);
        long[] rows = new long[size];
        if (size <= LINEAR_CHECK_LIMIT) {
            int n = 0;
            while (n < size) {
                long row = rowId(keys.next(random));
                if (!contains(rows, n, row)) {
                    rows[n++] = row;
                }
            }
        } else {
            HashSet<Long> seen = new HashSet<>(size * 2);
            int n = 0;
            while (n < size) {
                long row = rowId(keys.next(random));
                if (seen.add(row)) {
                    rows[n++] = row;
                }
            }
        }
        return rows;
    }

    private static boolean contains(long[] rows, int n, long row) {
        for (int i = 0; i < n; i++) {
            if (rows[i] == row) {
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
