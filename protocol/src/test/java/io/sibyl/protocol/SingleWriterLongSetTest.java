package io.sibyl.protocol;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class SingleWriterLongSetTest {
    @Test
    void randomOperationsMatchAHashSet() {
        for (long seed = 1; seed <= 20; seed++) {
            Random random = new Random(seed);
            SingleWriterLongSet set = new SingleWriterLongSet(random.nextInt(40));
            Set<Long> model = new HashSet<>();
            int keySpace = 1 + random.nextInt(seed % 2 == 0 ? 50 : 5000);
            for (int op = 0; op < 30_000; op++) {
                long key = 1 + random.nextInt(keySpace);
                switch (random.nextInt(5)) {
                    case 0, 1 -> assertEquals(model.add(key), set.add(key));
                    case 2, 3 -> assertEquals(model.remove(key), set.remove(key));
                    default -> set.shrinkIfSparse();
                }
                assertEquals(model.size(), set.size());
                long probe = 1 + random.nextInt(keySpace);
                assertEquals(model.contains(probe), set.contains(probe));
            }
            Set<Long> seen = new HashSet<>();
            set.forEach(k -> assertTrue(seen.add(k), "duplicate " + k));
            assertEquals(model, seen);
        }
    }

    @Test
    void growsAndShrinksBack() {
        SingleWriterLongSet set = new SingleWriterLongSet(0);
        int initialSlots = set.slots();
        for (long k = 1; k <= 50_000; k++) {
            assertTrue(set.add(k));
            assertTrue(set.size() <= set.slots() * 3L / 4);
        }
        assertFalse(set.add(17));
        for (long k = 1; k <= 50_000; k++) {
            assertTrue(set.remove(k));
        }
        assertFalse(set.shrinkIfSparse(), "it held 50000 keys since the last call");
        assertTrue(set.shrinkIfSparse());
        assertEquals(initialSlots, set.slots());
        assertTrue(set.isEmpty());
    }

    @Test
    void keyZeroAndNegativeKeys() {
        SingleWriterLongSet set = new SingleWriterLongSet(4);
        assertFalse(set.contains(0));
        assertFalse(set.remove(0));
        assertFalse(set.contains(-3));
        assertThrows(IllegalArgumentException.class, () -> set.add(0));
        assertThrows(IllegalArgumentException.class, () -> set.add(-3));
    }

    @Test
    void readersRacingTheWriterNeverFailOrHang() throws Exception {
        SingleWriterLongSet set = new SingleWriterLongSet(4);
        AtomicBoolean done = new AtomicBoolean();
        AtomicReference<Throwable> failure = new AtomicReference<>();
        List<Thread> readers = new ArrayList<>();
        for (int r = 0; r < 2; r++) {
            long seed = r;
            Thread t = new Thread(() -> {
                Random random = new Random(seed);
                try {
                    while (!done.get()) {
                        long key = 1 + random.nextInt(20_000);
                        if (set.contains(key) && key % 2 == 1) {
                            throw new AssertionError("found odd key " + key + " that was never added");
                        }
                    }
                } catch (Throwable e) {
                    failure.compareAndSet(null, e);
                }
            }, "set-reader-" + r);
            t.setDaemon(true);
            t.start();
            readers.add(t);
        }
        Random random = new Random(7);
        for (int round = 0; round < 60; round++) {
            int n = 1 + random.nextInt(10_000);
            for (int i = 0; i < n; i++) {
                set.add(2 + 2L * random.nextInt(10_000));
            }
            for (int i = 0; i < n; i++) {
                set.remove(2 + 2L * random.nextInt(10_000));
            }
            if (round % 3 == 0) {
                for (long k = 2; k <= 20_000; k += 2) {
                    set.remove(k);
                }
                set.shrinkIfSparse();
                set.shrinkIfSparse();
            }
        }
        done.set(true);
        for (Thread t : readers) {
            t.join(10_000);
            assertFalse(t.isAlive(), t.getName() + " still running (endless probe?)");
        }
        assertNull(failure.get());
    }
}
