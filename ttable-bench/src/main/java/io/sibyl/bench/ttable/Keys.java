package io.sibyl.bench.ttable;

/** Row keys of the bench tables. */
final class Keys {
    private Keys() {
    }

    /** "row" and the number in 9 digits, zero-padded: keys sort like their numbers. */
    static byte[] key(int i) {
        byte[] k = {'r', 'o', 'w', '0', '0', '0', '0', '0', '0', '0', '0', '0'};
        for (int p = k.length - 1; i > 0 && p >= 3; p--, i /= 10) {
            k[p] = (byte) ('0' + i % 10);
        }
        return k;
    }
}
