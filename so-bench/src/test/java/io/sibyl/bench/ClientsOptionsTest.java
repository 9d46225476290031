package io.sibyl.bench;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** so-bench-clients flags: the sweep's lists, the defaults, what is refused and why, and the driver's arguments. */
class ClientsOptionsTest {
    @Test
    void defaultsSweepTheIssuesConnectionCountsAtAFixedRateAndAtSaturation() throws UsageException {
        ClientsOptions o = ClientsOptions.parse(new String[0]);
        assertEquals(List.of(1, 100, 1000, 2000), o.connections);
        assertEquals(List.of(100_000.0, 0.0), o.rates);
        assertEquals(8, o.writeSet);
        assertEquals(256, o.windowFor(1));
        assertEquals(2000, o.windowFor(2000), "at least one outstanding transaction per connection");
        assertFalse(o.decodeDeltas);
    }

    @Test
    void listsAndSuffixesParse() throws UsageException {
        ClientsOptions o = ClientsOptions.parse(new String[] {"--connections=4,1k", "--rate", "50k, max",
                "--duration", "2", "--warmup=0", "--processes", "3", "--window", "2000", "--decode-deltas",
                "--oracle-setting", "io.threads=2"});
        assertEquals(List.of(4, 1000), o.connections);
        assertEquals(List.of(50_000.0, 0.0), o.rates);
        assertEquals(2, o.durationSeconds);
        assertEquals(0, o.warmupSeconds);
        assertEquals(3, o.processes);
        assertEquals(2000, o.windowFor(4));
        assertTrue(o.decodeDeltas);
        assertEquals(List.of("io.threads=2"), o.oracleSettings);
        assertTrue(ClientsOptions.parse(new String[] {"--bogus", "--help"}).help, "--help wins anywhere");
    }

    @Test
    void theUsageNamesEveryFlag() {
        String usage = ClientsOptions.usage();
        for (String flag : List.of("--connections", "--rate", "--duration", "--warmup", "--processes", "--window",
                "--write-set", "--keys", "--decode-deltas", "--oracle", "--server-pid", "--oracle-setting",
                "--help")) {
            assertTrue(usage.contains(flag + " ") || usage.contains(flag + "="), flag);
        }
        assertTrue(usage.contains("SO_BENCH_CLIENTS_DRIVER_OPTS"), usage);
    }

    @Test
    void badFlagsAreRefusedWithWhatToChange() {
        assertRefused("Unknown options: '--bogus', '1'", "--bogus", "1");
        assertRefused("Missing required parameter for option '--connections' (LIST)", "--connections");
        assertRefused("without empty items", "--connections", "1,,2");
        assertRefused("whole number from 1 to 20000", "--connections", "0");
        assertRefused("above 0 (or 'max')", "--rate", "0");
        assertRefused("must be a number", "--rate", "fast");
        assertRefused("needs at least one outstanding transaction", "--connections", "100", "--window", "10");
        assertRefused("'--decode-deltas': 'yes' is not a boolean", "--decode-deltas=yes");
        assertRefused("HOST:PORT", "--oracle", "localhost");
        assertRefused("applies only to the oracles so-bench-clients starts", "--oracle", "h:1",
                "--oracle-setting", "io.threads=2");
        assertRefused("goes with --oracle", "--server-pid", "1");
        assertRefused("smaller than the write set", "--keys", "4");
        assertRefused("Unmatched argument at index 0: 'connections'", "connections");
    }

    @Test
    void aDriverReadsBackTheArgumentsItWasGiven() throws UsageException {
        DriverLoad.Settings s = new DriverLoad.Settings("127.0.0.1", 4242, 500, 600, 25_000.5, 8, 1_000_000, true);
        assertEquals(s, ClientsOptions.driverSettings(ClientsOptions.driverArguments(s).toArray(new String[0])));
        DriverLoad.Settings saturating = new DriverLoad.Settings("::1", 1, 1, 256, 0, 4, 100, false);
        assertEquals(saturating, ClientsOptions.driverSettings(
                ClientsOptions.driverArguments(saturating).toArray(new String[0])));
        assertThrows(UsageException.class, () -> ClientsOptions.driverSettings(new String[] {"--connections", "2"}));
    }

    private static void assertRefused(String expected, String... args) {
        UsageException e = assertThrows(UsageException.class, () -> ClientsOptions.parse(args));
        assertTrue(e.getMessage().contains(expected), "'" + e.getMessage() + "' should say '" + expected + "'");
    }
}
