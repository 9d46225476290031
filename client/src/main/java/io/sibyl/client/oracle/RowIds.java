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

    /** Number of two-byte row-key prefixes, the range granules of a table. */
    public static final int PREFIXES = 1 << 16;

    /**
     * The two-byte prefix of {@code row} as a number, in the order of rows (a shorter row counts as padded with
     * zeros): every row of a range {@code [a, b]} has a prefix in {@code [prefixOf(a), prefixOf(b)]}.
     */
    public static int prefixOf(byte[] row) {
        int first = row.length > 0 ? row[0] & 0xFF : 0;
        int second = row.length > 1 ? row[1] & 0xFF : 0;
        return first << 8 | second;
    }

    /** The range granule of {@code table}'s rows with prefix {@code prefix} ({@link #prefixOf}). */
    public static long granule(byte[] table, int prefix) {
        long h = 0x9AE16A3B2F90404FL;
        h = mixIn(h, table);
        return finish((h ^ 0xA5A5_0000_0000L ^ prefix) * PRIME);
    }

    /** The granule of a whole table: written with every write to it, read by scans too wide to list prefixes. */
    public static long tableGranule(byte[] table) {
        return granule(table, PREFIXES);
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
