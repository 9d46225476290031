package io.sibyl.oracle;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LongLongHashMapTest {

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4, 5})
    void behavesLikeHashMapUnderRandomPutsGetsAndRemoves(int seed) {
        Random random = new Random(seed);
        LongLongHashMap map = new LongLongHashMap(4); // starts tiny: grows many times
        Map<Long, Long> model = new HashMap<>();
        // A small key range makes long probe chains and exercises backward-shift deletion across them; the
        // occasional huge key checks that hashing does not depend on keys being small.
        int range = 50 + random.nextInt(2000);
        for (int step = 0; step < 100_000; step++) {
            long key = random.nextInt(20) == 0 ? 1 + (random.nextLong() >>> 2) : 1 + random.nextInt(range);
            switch (random.nextInt(6)) {
                case 0, 1 -> {
                    long value = random.nextLong();
                    assertEquals(!model.containsKey(key), map.put(key, value), "put(" + key + ") newness");
                    model.put(key, value);
                }
                case 2, 3 -> assertEquals(model.remove(key) != null, map.remove(key), "remove(" + key + ")");
                case 4 -> assertEquals(model.getOrDefault(key, -7L), map.get(key, -7L), "get(" + key + ")");
                default -> assertEquals(model.containsKey(key), map.containsKey(key), "containsKey(" + key + ")");
            }
            assertEquals(model.size(), map.size());
            if (step % 5_000 == 0) {
                assertSameContents(model, map);
            }
        }
        assertSameContents(model, map);
        for (Long key : model.keySet().toArray(new Long[0])) {
            assertTrue(map.remove(key));
            model.remove(key);
        }
        assertEquals(0, map.size());
        assertSameContents(model, map);
    }

    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3})
    void clusteredMapBehavesLikeHashMapForASlidingWindowOfTimestamps(int seed) {
        Random random = new Random(seed);
        LongLongHashMap map = new LongLongHashMap(64, true);
        Map<Long, Long> reference = new HashMap<>();
        java.util.ArrayDeque<Long> window = new java.util.ArrayDeque<>();
        long clock = 1;
        for (int step = 0; step < 200_000; step++) {
            clock += 1 + random.nextInt(5); // gaps, like begins and read-only transactions between commits
            map.put(clock, clock + 7);
            reference.put(clock, clock + 7);
            window.add(clock);
            while (window.size() > 100 + random.nextInt(50)) { // FIFO trimming, as RecentCommits does
                long old = window.poll();
                assertTrue(map.remove(old));
                reference.remove(old);
            }
            if (step % 1000 == 0) {
                assertEquals(reference.size(), map.size());
                for (Map.Entry<Long, Long> e : reference.entrySet()) {
                    assertEquals(e.getValue(), map.get(e.getKey(), -1));
                }
                assertEquals(-1, map.get(clock + 1, -1));
            }
        }
    }

    @Test
    void removingFromTheMiddleOfAWrappedProbeChainKeepsEveryOtherKeyReachable() {
        LongLongHashMap map = new LongLongHashMap(8); // 16 slots
        // Fill the table to its growth limit again and again and remove keys in every order.
        Random random = new Random(3);
        for (int round = 0; round < 2_000; round++) {
            map = new LongLongHashMap(8);
            Map<Long, Long> model = new HashMap<>();
            for (int i = 0; i < 8; i++) {
                long key = 1 + random.nextInt(64);
                map.put(key, key * 10);
                model.put(key, key * 10);
            }
            Long[] keys = model.keySet().toArray(new Long[0]);
            java.util.Collections.shuffle(java.util.Arrays.asList(keys), random);
            for (Long k : keys) {
                assertTrue(map.remove(k));
                model.remove(k);
                for (Map.Entry<Long, Long> e : model.entrySet()) {
                    assertEquals(e.getValue(), map.get(e.getKey(), -1), "lost " + e.getKey() + " after removing " + k);
                }
                assertFalse(map.containsKey(k));
            }
        }
    }

    @Test
    void nonPositiveKeysAreRejected() {
        LongLongHashMap map = new LongLongHashMap(16);
        assertThrows(IllegalArgumentException.class, () -> map.put(0, 1));
        assertThrows(IllegalArgumentException.class, () -> map.put(-3, 1));
        assertFalse(map.remove(-3));
        assertEquals(5, map.get(-3, 5));
    }

    /** Key 0 marks empty slots, so it can never be stored; asking for it must not find an empty slot's value. */
    @Test
    void zeroIsNeverContained() {
        LongLongHashMap map = new LongLongHashMap(16);
        assertFalse(map.containsKey(0), "empty map");
        assertEquals(-1, map.get(0, -1));
        map.put(5, 50);
        assertFalse(map.containsKey(0));
        assertFalse(map.remove(0));
        assertEquals(1, map.size());
    }

    @Test
    void putReplacesTheValueOfAnExistingKey() {
        LongLongHashMap map = new LongLongHashMap(16);
        assertTrue(map.put(9, 1));
        assertFalse(map.put(9, 2));
        assertEquals(2, map.get(9, 0));
        assertEquals(1, map.size());
    }

    private static void assertSameContents(Map<Long, Long> model, LongLongHashMap map) {
        Map<Long, Long> seen = new HashMap<>();
        map.forEach((k, v) -> assertEquals(null, seen.put(k, v), "forEach visited " + k + " twice"));
        assertEquals(model, seen);
    }
}
