package io.sibyl.client;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code bin/sibyl-sweep}'s flags: mistakes end with status 2 and a message saying how to write the flag. */
class AbortSweeperMainTest {

    @Test
    void aFlagWithoutItsValueSaysHowToGiveIt() throws Exception {
        assertRefused("--tables needs a value after '=', e.g. --tables=t1,t2", "--tables", "accounts");
        assertRefused("--exclude needs a value after '=', e.g. --exclude=t1,t2", "--all-tables", "--exclude");
        assertRefused("--settle-ms needs a value after '='", "--tables=a", "--settle-ms", "5");
    }

    @Test
    void aNegativeSettleTimeIsRefusedBeforeConnecting() throws Exception {
        assertRefused("--settle-ms needs a whole number of milliseconds, 0 or more, got --settle-ms=-1",
                "--tables=a", "--settle-ms=-1", "--sibyl.oracle.address=127.0.0.1:1");
        assertRefused("--settle-ms needs a whole number", "--tables=a", "--settle-ms=10m");
    }

    @Test
    void aMissingOracleIsNamedWithBothWaysToGiveIt() throws Exception {
        String err = assertRefused("name the status oracle", "--tables=a");
        assertTrue(err.contains("--sibyl.oracle.zk.connect=zk1:2181")
                && err.contains("--sibyl.oracle.address=host:port"), err);
        assertRefused("give either --tables=t1,t2", "--sibyl.oracle.address=127.0.0.1:1");
        assertRefused("unknown argument -x", "-x");
    }

    private static String assertRefused(String expected, String... args) throws Exception {
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        int status = AbortSweeperMain.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        String text = err.toString(StandardCharsets.UTF_8);
        assertEquals(2, status, text);
        assertTrue(text.contains(expected), text);
        return text;
    }
}
