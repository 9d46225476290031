package io.sibyl.ycsb;

import org.junit.jupiter.api.Test;
import site.ycsb.generator.NumberGenerator;

import java.util.HashSet;
import java.util.List;
import java.util.Properties;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** The closed economy takes every request distribution CoreWorkload does, so one -p suits all workloads of a run. */
class ClosedEconomyPickerTest {

    @Test
    void everyCoreWorkloadDistributionPicksAccountsInRange() throws Exception {
        for (String d : List.of("uniform", "zipfian", "latest", "hotspot", "sequential", "exponential")) {
            Properties p = new Properties();
            p.setProperty("requestdistribution", d);
            NumberGenerator picker = ClosedEconomyWorkload.picker(p, 10);
            Set<Long> seen = new HashSet<>();
            for (int i = 0; i < 2000; i++) {
                long v = picker.nextValue().longValue();
                assertTrue(v >= 0 && v < 10, d + " picked account " + v);
                seen.add(v);
            }
            assertTrue(seen.size() > 1, d + " picked only " + seen);
        }
    }

    @Test
    void latestFavoursTheLastAccounts() throws Exception {
        Properties p = new Properties();
        p.setProperty("requestdistribution", "latest");
        NumberGenerator picker = ClosedEconomyWorkload.picker(p, 1000);
        int high = 0;
        for (int i = 0; i < 1000; i++) {
            high += picker.nextValue().longValue() >= 900 ? 1 : 0;
        }
        assertTrue(high > 500, "picks among the last 100 accounts: " + high);
    }
}
