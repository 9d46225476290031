package io.sibyl.protocol;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SingleWriterLongLongMapTest {
    private static final long MISSING = -7;

    @Test
    void randomOperationsMatchAHashMap() {
        for (long seed = 1; seed <= 20; seed++) {
            Random random = new Random(seed);
            SingleWriterLongLongMap map = new SingleWriterLongLongMap(random.nextInt(40));
            Map<Long, Long> model = new HashMap<>();
            int keySpace = 1 + random.nextInt(seed % 2 == 0 ? 50 : 5000);
            for (int op = 0; op < 30_000; op++) {
                long key = 1 + random.nextInt(keySpace);
                long value = random.nextLong();
                switch (random.nextInt(6)) {
                    case 0 -> assertEquals(model.put(key, value) == null, map.put(key, value));
                    case 1 -> assertEquals(model.putIfAbsent(key, value) == null, map.putIfAbsent(key, value));
                    case 2, 3 -> assertEquals(model.remove(key) != null, map.remove(key));
                    case 4 -> {
                        int index = map.indexOf(key);
                        assertEquals(model.containsKey(key), index >= 0);
                        if (index >= 0) {
                            assertEquals(model.get(key), map.valueAt(index));
                            map.removeAt(index);
                            model.remove(key);
                        }
                    }
                    default -> map.shrinkIfSparse();
                }
                assertEquals(model.size(), map.size());
                long probe = 1 + random.nextInt(keySpace);
                assertEquals(model.getOrDefault(probe, MISSING), map.get(probe, MISSING));
                assertEquals(model.containsKey(probe), map.containsKey(probe));
            }
            assertSameContents(model, map);
        }
    }

    @Test
    void growsAndShrinksBackAfterABurst() {
        SingleWriterLongLongMap map = new SingleWriterLongLongMap(8);
        int initialSlots = map.slots();
        Map<Long, Long> model = new HashMap<>();
        for (long k = 1; k <= 100_000; k++) {
            assertTrue(map.putIfAbsent(k * 7919, k));
            model.put(k * 7919, k);
            assertTrue(map.size() <= map.slots() * 3L / 4, "load above 3/4");
            assertTrue(map.size() * 2L >= map.slots() || map.slots() == 16, "load below 1/2 while growing");
        }
        assertSameContents(model, map);
        for (long k = 1; k <= 99_990; k++) {
            assertTrue(map.remove(k * 7919));
            model.remove(k * 7919);
        }
        assertFalse(map.shrinkIfSparse(), "it held 100000 entries since the last call");
        assertTrue(map.shrinkIfSparse());
        assertEquals(20, map.slots(), "10 entries at 1/2 load");
        assertSameContents(model, map);
        for (long k = 99_991; k <= 100_000; k++) {
            assertTrue(map.remove(k * 7919));
        }
        map.shrinkIfSparse();
        map.shrinkIfSparse();
        assertEquals(initialSlots, map.slots(), "never below the constructor's size");
        assertTrue(map.isEmpty());
    }

    @Test
    void aSizeThatSwingsDoesNotMakeItShrinkAndRegrow() {
        SingleWriterLongLongMap map = new SingleWriterLongLongMap(8);
        long key = 1;
        int slotsAfterFirstCycle = 0;
        for (int cycle = 0; cycle < 50; cycle++) {
            for (int i = 0; i < 1000; i++) {
                map.put(key + i, i);
            }
            for (int i = 0; i < 1000; i++) {
                map.remove(key + i);
            }
            key += 1000;
            assertFalse(map.shrinkIfSparse(), "cycle " + cycle);
            if (cycle == 0) {
                slotsAfterFirstCycle = map.slots();
                assertTrue(slotsAfterFirstCycle >= 1334 && slotsAfterFirstCycle <= 2000, "" + slotsAfterFirstCycle);
            }
            assertEquals(slotsAfterFirstCycle, map.slots(), "no shrink and regrow");
        }
        assertTrue(map.shrinkIfSparse(), "empty for a whole period");
        assertEquals(16, map.slots());
    }

    @Test
    void collidingKeysWrapAroundTheTable() {
        // Keys whose home is one of the last two slots of a 16-slot table: probes and backward shifts wrap.
        List<Long> keys = new ArrayList<>();
        for (long k = 1; keys.size() < 10; k++) {
            if (SingleWriterLongLongMap.home(k, 16) >= 14) {
                keys.add(k);
            }
        }
        for (int victim = 0; victim < keys.size(); victim++) {
            SingleWriterLongLongMap map = new SingleWriterLongLongMap(8);
            assertEquals(16, map.slots());
            for (long k : keys) {
                map.put(k, k * 10);
            }
            assertEquals(16, map.slots());
            assertTrue(map.remove(keys.get(victim)));
            for (long k : keys) {
                assertEquals(k == keys.get(victim) ? MISSING : k * 10, map.get(k, MISSING), "key " + k);
            }
        }
    }

    @Test
    void homeSlotsAreInRangeAndSpread() {
        for (int slots : new int[] {16, 48, 1008, 1 << 20, 3 << 20, 1 << 29}) {
            int[] counts = new int[16];
            for (long k = 1; k <= 160_000; k++) {
                int home = SingleWriterLongLongMap.home(k, slots);
                assertTrue(home >= 0 && home < slots, home + " outside " + slots);
                counts[(int) ((long) home * 16 / slots)]++;
            }
            for (int c : counts) {
                assertTrue(c > 9_000 && c < 11_000, "uneven spread over " + slots + " slots: " + c);
            }
        }
        assertEquals(0, SingleWriterLongLongMap.home(Long.MAX_VALUE, 1) + SingleWriterLongLongMap.home(1, 1));
    }

    @Test
    void keyZeroAndNegativeKeys() {
        SingleWriterLongLongMap map = new SingleWriterLongLongMap(4);
        assertEquals(MISSING, map.get(0, MISSING));
        assertFalse(map.containsKey(0));
        assertTrue(map.indexOf(0) < 0);
        assertFalse(map.remove(0));
        assertThrows(IllegalArgumentException.class, () -> map.put(0, 1));
        assertThrows(IllegalArgumentException.class, () -> map.putIfAbsent(-5, 1));
        assertEquals(MISSING, map.get(-5, MISSING));
        assertEquals(0, map.size());
    }

    /**
     * Readers racing with an unsynchronised writer (no sequence lock at all) get stale answers, but never an
     * exception or an endless probe, and never find a key that was never inserted.
     */
    @Test
    void readersRacingTheWriterNeverFailOrHang() throws Exception {
        SingleWriterLongLongMap map = new SingleWriterLongLongMap(4);
        AtomicBoolean done = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        AtomicLong reads = new AtomicLong();
        List<Thread> readers = new ArrayList<>();
        for (int r = 0; r < 2; r++) {
            long seed = r;
            Thread t = new Thread(() -> {
                Random random = new Random(seed);
                try {
                    long n = 0;
                    while (!done.get()) {
                        long key = 1 + random.nextInt(20_000);
                        long v = map.get(key, MISSING);
                        if (key % 2 == 1 && v != MISSING) {
                            throw new AssertionError("found odd key " + key + " that was never inserted");
                        }
                        if (v != MISSING && v != key * 3) {
                            // torn: another key's value (a shift moved it here) or 0 (the slot was just cleared)
                            if (v < 0 || v % 6 != 0) {
                                throw new AssertionError("impossible value " + v + " for " + key);
                            }
                        }
                        map.containsKey(key);
                        n++;
                    }
                    reads.addAndGet(n);
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, "map-reader-" + r);
            t.setDaemon(true);
            t.start();
            readers.add(t);
        }
        Random random = new Random(42);
        for (int round = 0; round < 60; round++) {
            int n = 1 + random.nextInt(10_000);
            for (int i = 0; i < n; i++) {
                long key = 2 + 2L * random.nextInt(10_000);
                map.put(key, key * 3);
            }
            for (int i = 0; i < n; i++) {
                map.remove(2 + 2L * random.nextInt(10_000));
            }
            if (round % 3 == 0) {
                for (long k = 2; k <= 20_000; k += 2) {
                    map.remove(k);
                }
                map.shrinkIfSparse();
                map.shrinkIfSparse();
            }
        }
        done.set(true);
        for (Thread t : readers) {
            t.join(10_000);
            assertFalse(t.isAlive(), t.getName() + " still running (endless probe?)");
        }
        assertNull(failure.get());
        assertTrue(reads.get() > 0);
    }

    private static void assertSameContents(Map<Long, Long> model, SingleWriterLongLongMap map) {
        Map<Long, Long> seen = new HashMap<>();
        map.forEach((k, v) -> assertNull(seen.put(k, v), "duplicate key " + k));
        assertEquals(model, seen);
        for (Map.Entry<Long, Long> e : model.entrySet()) {
            assertEquals(e.getValue(), map.get(e.getKey(), MISSING));
        }
    }

    /** Removal by value shifts entries back into visited slots, also across the table's end: none may be skipped. */
    @Test
    void removeValuesAtMostKeepsExactlyTheLargerValuesAndReturnsTheLeast() {
        for (long seed = 1; seed <= 30; seed++) {
            Random random = new Random(seed);
            SingleWriterLongLongMap map = new SingleWriterLongLongMap(8);
            Map<Long, Long> model = new HashMap<>();
            int keySpace = 1 + random.nextInt(2000);
            for (int round = 0; round < 50; round++) {
                for (int k = random.nextInt(300); k > 0; k--) {
                    long key = 1 + random.nextInt(keySpace);
                    long value = random.nextInt(1000);
                    map.put(key, value);
                    model.put(key, value);
                }
                long max = random.nextInt(1000);
                long least = map.removeValuesAtMost(max);
                model.values().removeIf(v -> v <= max);
                assertEquals(model.size(), map.size(), "seed " + seed);
                assertEquals(model.values().stream().mapToLong(Long::longValue).min().orElse(Long.MAX_VALUE), least);
                for (long key = 1; key <= keySpace; key++) {
                    assertEquals(model.getOrDefault(key, MISSING), map.get(key, MISSING),
                            "seed " + seed + " key " + key);
                }
            }
        }
    }
}
