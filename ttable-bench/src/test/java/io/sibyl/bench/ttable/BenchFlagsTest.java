package io.sibyl.bench.ttable;

import org.junit.jupiter.api.Test;

import java.util.EnumSet;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BenchFlagsTest {
    @Test
    void defaultsKeepTheDefaultRunShort() throws Exception {
        BenchFlags f = BenchFlags.parse();
        assertEquals(EnumSet.allOf(BenchFlags.Group.class), f.ops);
        // 10 variants (3 get, 3 scan, 4 put) measured for rounds x round-seconds, plus the warm-up
        assertTrue(10 * f.rounds * f.roundSeconds + f.warmupSeconds <= 150, "default run too long");
    }

    @Test
    void parsesBothFlagForms() throws Exception {
        BenchFlags f = BenchFlags.parse("--rows", "500", "--threads=2", "--rounds", "1", "--round-seconds=0.5",
                "--puts-per-tx", "5", "--reads-per-tx=3", "--versions", "1", "--ops", "get,put", "--explain",
                "--only", "raw Table.get|1 get per tx");
        assertEquals(500, f.rows);
        assertEquals(2, f.threads);
        assertEquals(1, f.rounds);
        assertEquals(0.5, f.roundSeconds);
        assertEquals(5, f.putsPerTx);
        assertEquals(3, f.readsPerTx);
        assertEquals(1, f.versions);
        assertEquals(EnumSet.of(BenchFlags.Group.GET, BenchFlags.Group.PUT), f.ops);
        assertTrue(f.explain);
        assertEquals(List.of("raw Table.get", "1 get per tx"), f.only);
    }

    @Test
    void rejectsBadFlags() {
        assertThrows(BenchFlags.UsageException.class, () -> BenchFlags.parse("--rows"));
        assertThrows(BenchFlags.UsageException.class, () -> BenchFlags.parse("--rows", "x"));
        assertThrows(BenchFlags.UsageException.class, () -> BenchFlags.parse("--threads", "0"));
        assertThrows(BenchFlags.UsageException.class, () -> BenchFlags.parse("--nope"));
        assertThrows(BenchFlags.UsageException.class, () -> BenchFlags.parse("--ops", "delete"));
        assertThrows(BenchFlags.UsageException.class, () -> BenchFlags.parse("--rows", "50", "--scan-rows", "100"));
    }

    @Test
    void keysAreFixedWidthAndSortLikeTheirNumbers() {
        assertArrayEquals("row000000000".getBytes(), Keys.key(0));
        assertArrayEquals("row000001234".getBytes(), Keys.key(1234));
        assertArrayEquals("row999999999".getBytes(), Keys.key(999_999_999));
    }
}
