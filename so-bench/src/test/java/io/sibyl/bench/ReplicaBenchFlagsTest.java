package io.sibyl.bench;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** bin/so-bench-replica's flags: both forms, the defaults, help and a mistake. */
class ReplicaBenchFlagsTest {

    @Test
    void flagsParseInBothFormsOverTheDefaults() throws UsageException {
        ReplicaBench.Flags f = new ReplicaBench.Flags();
        BenchCommandLine.parse(f, "--transactions", "1000", "--keys=5000");
        assertEquals(1000, f.transactions);
        assertEquals(5000, f.keys);
        assertEquals(256, f.window);
        assertEquals(128, f.block);
        assertEquals(3, f.rounds);
    }

    @Test
    void helpAndABadFlag() throws UsageException {
        assertTrue(BenchCommandLine.parse(new ReplicaBench.Flags(), "--rounds", "x", "--help"));
        assertTrue(BenchCommandLine.usage(new ReplicaBench.Flags()).contains("--block=B"));
        UsageException e = assertThrows(UsageException.class,
                () -> BenchCommandLine.parse(new ReplicaBench.Flags(), "--rounds", "x"));
        assertEquals("Invalid value for option '--rounds': 'x' is not an int", e.getMessage());
        e = assertThrows(UsageException.class, () -> BenchCommandLine.parse(new ReplicaBench.Flags(), "--round", "3"));
        assertEquals("Unknown options: '--round', '3'", e.getMessage());
    }
}
