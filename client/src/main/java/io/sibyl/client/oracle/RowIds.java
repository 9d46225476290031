package io.sibyl.client.oracle;

import java.nio.charset.StandardCharsets;

/**
 * 64-bit row identity for conflict detection: a hash of (table, row). Two rows that collide can only cause a
 * spurious abort, never a missed conflict, so a fast non-cryptographic hash is enough.
 */
public final class RowIds {
    private static final long PRIME = 0x100000001B3L;

    private RowIds() {
    }

    public static long of(byte[] table, byte[] row) {
        long h = 0xCBF29CE484222325L;
        h = mixIn(h, table);
        h = (h ^ 0xFF) * PRIME; // separator: ("ab","c") and ("a","bc") differ
        h = mixIn(h, row);
        return finish(h ^ ((long) table.length << 32 | row.length));
    }

    public static long of(String table, byte[] row) {
        return of(table.getBytes(StandardCharsets.UTF_8), row);
    }

    private static long mixIn(long h, byte[] bytes) {
        for (byte b : bytes) {
            h = (h ^ (b & 0xFF)) * PRIME;
        }
        return h;
    }

    private static long finish(long h) {
        h ^= h >>> 33;
        h *= 0xFF51AFD7ED558CCDL;
        h ^= h >>> 33;
        h *= 0xC4CEB9FE1A85EC53L;
        h ^= h >>> 33;
        return h;
    }
}
