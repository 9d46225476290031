package io.sibyl.bench.fuzz;

import io.sibyl.bench.UsageException;
import org.junit.jupiter.api.Test;

import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** so-fuzz's flags as bin/so-fuzz passes them, the check before an oracle exists, help and mistakes. */
class FuzzOptionsTest {

    @Test
    void theScriptsFlagsParse() throws UsageException {
        FuzzOptions o = FuzzOptions.parse("--oracle", "127.0.0.1:24680", "--server-pid", "42", "--admin-secret-file",
                "/tmp/s", "--oracle-log", "/tmp/l", "--frames=2M", "--seed", "-7", "--connections", "1_000");
        assertEquals("127.0.0.1", o.oracleHost);
        assertEquals(24680, o.oraclePort);
        assertEquals(42, o.serverPid);
        assertEquals(Path.of("/tmp/s"), o.adminSecretFile);
        assertEquals(Path.of("/tmp/l"), o.oracleLog);
        assertEquals(2_000_000, o.frames);
        assertEquals(-7, o.seed);
        assertEquals(1000, o.connections);
    }

    @Test
    void theCheckBeforeTheOracleStartsNeedsNoOracle() throws UsageException {
        assertTrue(FuzzOptions.parse("--check", "--frames", "10k").check);
        assertMessage("--frames must be a whole number from 1 to", "--check", "--frames", "0");
        assertMessage("--oracle HOST:PORT is required", "--frames", "10k");
    }

    @Test
    void helpWinsAndTheUsageNamesEveryFlag() throws UsageException {
        assertTrue(FuzzOptions.parse("--help").help, "no --oracle needed");
        assertTrue(FuzzOptions.parse("--frames", "none", "-h").help);
        String usage = FuzzOptions.usage();
        for (String flag : List.of("--frames", "--connections", "--good-clients", "--seed", "--oracle",
                "--server-pid", "--admin-secret-file", "--oracle-log", "--max-rss-mb", "--session-frames",
                "--good-rows", "--progress", "--help")) {
            assertTrue(usage.contains(flag), flag);
        }
    }

    @Test
    void aBadFlagIsRefusedNamingIt() {
        assertMessage("Unknown option: '--frame'", "--oracle=h:1", "--frame", "--seed=1");
        assertMessage("Missing required parameter for option '--seed' (S)", "--oracle=h:1", "--seed");
        assertMessage("--oracle must be HOST:PORT, got 'localhost'", "--oracle", "localhost");
        assertMessage("--progress must be a whole number from 1 to 3600, got '0'", "--oracle=h:1", "--progress=0");
        assertMessage("Unmatched argument at index 0: 'oracle=h:1'", "oracle=h:1");
    }

    private static void assertMessage(String expected, String... args) {
        UsageException e = assertThrows(UsageException.class, () -> FuzzOptions.parse(args));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }
}
