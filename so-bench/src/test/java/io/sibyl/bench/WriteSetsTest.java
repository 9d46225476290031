package io.sibyl.bench;

import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

class WriteSetsTest {
    @Test
    void rowsAreDistinctEvenWhenKeysRepeat() {
        ThreadLocalRandom random = ThreadLocalRandom.current();
        for (int size : new int[] {1, 8, 64, 65, 200}) {
            WriteSets sets = new WriteSets(new KeyChooser.UniformKeys(size), // forces many repeated draws
                    new WriteSetSizes(BenchOptions.SizeDistribution.FIXED, size));
            long[] rows = sets.next(random);
            assertEquals(size, rows.length);
            assertEquals(size, Arrays.stream(rows).distinct().count());
        }
    }

    @Test
    void uniformSizesAverageK() {
        WriteSetSizes sizes = new WriteSetSizes(BenchOptions.SizeDistribution.UNIFORM, 8);
        ThreadLocalRandom random = ThreadLocalRandom.current();
        long sum = 0;
        int min = Integer.MAX_VALUE;
        int max = 0;
        for (int i = 0; i < 200_000; i++) {
            int s = sizes.next(random);
            sum += s;
            min = Math.min(min, s);
            max = Math.max(max, s);
        }
        assertEquals(1, min);
        assertEquals(15, max);
        assertEquals(8.0, sum / 200_000.0, 0.05);
    }

    @Test
    void rowIdsAreABijectionOfKeys() {
        Set<Long> ids = new HashSet<>();
        for (long k = 0; k < 100_000; k++) {
            assertTrue(ids.add(WriteSets.rowId(k)));
        }
        assertNotEquals(0L, WriteSets.rowId(0));
    }
}
