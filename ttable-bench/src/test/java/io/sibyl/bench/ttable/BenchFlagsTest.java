package io.sibyl.bench.ttable;

import org.junit.jupiter.api.Test;
import picocli.CommandLine.ParameterException;

import java.util.EnumSet;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BenchFlagsTest {
    @Test
    void defaultsKeepTheDefaultRunShort() {
        BenchFlags f = BenchFlags.parse();
        assertEquals(EnumSet.allOf(BenchFlags.Group.class), f.ops);
        // 10 variants (3 get, 3 scan, 4 put), each warmed up and measured for rounds x round-seconds
        assertTrue(10 * (f.rounds * f.roundSeconds + f.warmupSeconds) <= 240, "default run too long");
    }

    @Test
    void parsesBothFlagForms() {
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
    void readsUnderscoresInWholeNumbersAndSpacesAroundOperations() {
        BenchFlags f = BenchFlags.parse("--rows=20_000", "--write-rows", "2_000_000", "--ops", "GET, scan");
        assertEquals(20_000, f.rows);
        assertEquals(2_000_000, f.writeRows);
        assertEquals(EnumSet.of(BenchFlags.Group.GET, BenchFlags.Group.SCAN), f.ops);
    }

    @Test
    void helpIsRecognisedAndTheUsageNamesEveryFlag() {
        assertTrue(BenchFlags.parse("--rows", "5", "--help").help);
        assertTrue(BenchFlags.parse("-h", "--rows", "0").help, "help wins over the range checks");
        for (String flag : List.of("--rows", "--write-rows", "--threads", "--rounds", "--round-seconds",
                "--warmup-seconds", "--puts-per-tx", "--reads-per-tx", "--versions", "--load-versions",
                "--value-size", "--columns", "--scan-rows", "--ops", "--seed", "--only", "--staleness-seconds",
                "--explain", "--help")) {
            assertTrue(BenchFlags.usage().contains(flag), flag);
        }
    }

    @Test
    void rejectsBadFlagsNamingThem() {
        assertMessage("Missing required parameter for option '--rows'", "--rows");
        assertMessage("'--rows': not an integer: x", "--rows", "x");
        assertMessage("'--round-seconds': 'soon' is not a double", "--round-seconds=soon");
        assertMessage("--threads must be >= 1", "--threads", "0");
        assertMessage("--round-seconds must be > 0", "--round-seconds", "0");
        assertMessage("Unknown option: '--nope'", "--nope");
        assertMessage("Unmatched argument at index 0: 'rows'", "rows");
        assertMessage("unknown operation 'delete' (get, scan, put)", "--ops", "delete");
        assertMessage("--scan-rows must not exceed --rows", "--rows", "50", "--scan-rows", "100");
    }

    private static void assertMessage(String expected, String... args) {
        ParameterException e = assertThrows(ParameterException.class, () -> BenchFlags.parse(args));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    @Test
    void keysAreFixedWidthAndSortLikeTheirNumbers() {
        assertArrayEquals("row000000000".getBytes(), Keys.key(0));
        assertArrayEquals("row000001234".getBytes(), Keys.key(1234));
        assertArrayEquals("row999999999".getBytes(), Keys.key(999_999_999));
    }
}
