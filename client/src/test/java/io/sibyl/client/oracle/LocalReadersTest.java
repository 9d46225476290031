package io.sibyl.client.oracle;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.TreeMap;

import static org.junit.jupiter.api.Assertions.assertEquals;

class LocalReadersTest {
    @ParameterizedTest
    @ValueSource(ints = {1, 2, 3, 4})
    void oldestMatchesASortedMultisetUnderRandomRegistrationsAndFinishes(int seed) {
        Random random = new Random(seed);
        LocalReaders readers = new LocalReaders();
        TreeMap<Long, Integer> model = new TreeMap<>();
        List<Long> registered = new ArrayList<>();
        long clock = 1;
        for (int step = 0; step < 100_000; step++) {
            int op = random.nextInt(10);
            if (op < 5 || registered.isEmpty()) {
                long ts;
                if (random.nextInt(20) == 0 && !registered.isEmpty()) {
                    ts = registered.get(random.nextInt(registered.size())); // registered twice
                } else if (random.nextInt(50) == 0) {
                    ts = Math.max(1, clock - random.nextInt(100)); // out of order
                } else {
                    ts = clock += 1 + random.nextInt(3);
                }
                readers.register(ts);
                model.merge(ts, 1, Integer::sum);
                registered.add(ts);
            } else if (op < 9) {
                long ts = registered.remove(random.nextInt(registered.size()));
                readers.unregister(ts);
                model.computeIfPresent(ts, (k, n) -> n == 1 ? null : n - 1);
            } else {
                readers.unregister(clock + 1000); // never registered: ignored
            }
            assertEquals(model.isEmpty() ? LocalReaders.NONE : model.firstKey(), readers.oldest(), "step " + step);
        }
    }

    @Test
    void entriesRegisteredBeforeTheCutoffStopCountingAndLaterFinishesAreIgnored() {
        LocalReaders readers = new LocalReaders();
        readers.register(10, 1_000);
        readers.register(12, 2_000);
        readers.register(11, 3_000); // out of order: expires behind the younger 12
        readers.register(15, 4_000);
        assertEquals(10, readers.oldestRegisteredSince(1_000));
        assertEquals(11, readers.oldestRegisteredSince(1_001), "10 expired");
        assertEquals(11, readers.oldestRegisteredSince(2_500), "11 is younger than the cutoff");
        assertEquals(15, readers.oldestRegisteredSince(3_500));
        readers.unregister(10); // finished after it expired: nothing left to do
        readers.unregister(11);
        assertEquals(15, readers.oldest());
        readers.unregister(15);
        assertEquals(LocalReaders.NONE, readers.oldestRegisteredSince(0));
    }
}
