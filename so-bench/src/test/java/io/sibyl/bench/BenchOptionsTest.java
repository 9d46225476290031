package io.sibyl.bench;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class BenchOptionsTest {
    @Test
    void defaultsMatchTheIssue() throws Exception {
        BenchOptions o = BenchOptions.parse(new String[0]);
        assertEquals(1, o.connections);
        assertEquals(256, o.window);
        assertEquals(8, o.writeSet);
        assertEquals(20_000_000, o.keys);
        assertEquals(30, o.durationSeconds);
        assertEquals(10, o.warmupSeconds);
        assertEquals(0, o.rate);
        assertTrue(o.inProcess());
    }

    @Test
    void acceptsBothFlagFormsAndSuffixes() throws Exception {
        BenchOptions o = BenchOptions.parse(new String[] {"--connections", "4", "--window=64", "--keys", "1M",
                "--rate=100k", "--write-set-dist", "uniform", "--key-dist=zipfian", "--zipf-theta", "0.8",
                "--oracle", "10.0.0.1:24680", "--label", "x"});
        assertEquals(4, o.connections);
        assertEquals(64, o.window);
        assertEquals(1_000_000, o.keys);
        assertEquals(100_000, o.rate);
        assertEquals(15, o.maxWriteSet());
        assertEquals(BenchOptions.KeyDistribution.ZIPFIAN, o.keyDistribution);
        assertEquals("10.0.0.1", o.oracleHost);
        assertEquals(24680, o.oraclePort);
        assertFalse(o.inProcess());
    }

    @Test
    void readsAndIsolation() throws Exception {
        BenchOptions defaults = BenchOptions.parse(new String[0]);
        assertEquals(BenchOptions.Isolation.SI, defaults.isolation);
        assertEquals(0, defaults.readSet);
        assertEquals(0, defaults.scanRows);
        BenchOptions o = BenchOptions.parse(new String[] {"--isolation", "Serializable", "--read-set=8",
                "--scan-rows", "1k", "--scan-certify", "rows"});
        assertEquals(BenchOptions.Isolation.SERIALIZABLE, o.isolation);
        assertEquals(8, o.readSet);
        assertEquals(1000, o.scanRows);
        assertEquals(BenchOptions.ScanCertification.ROWS, o.scanCertification);
        assertTrue(o.describeWorkload().contains("isolation=serializable read-set=8 scan=1000 rows as rows"),
                o.describeWorkload());
        assertTrue(BenchOptions.parse(new String[] {"--read-set", "8"}).describeWorkload()
                .contains("isolation=si read-set=8 scan=none (reads not sent)"));
        BenchOptions granules = BenchOptions.parse(new String[] {"--isolation", "si-granules", "--read-set", "8"});
        assertEquals(BenchOptions.Isolation.SI_GRANULES, granules.isolation);
        assertEquals(0, CertifiedReads.of(granules).reads(java.util.concurrent.ThreadLocalRandom.current()).length,
                "si-granules sends the granules written, no reads");
    }

    @Test
    void helpWinsOverBadFlags() throws Exception {
        assertTrue(BenchOptions.parse(new String[] {"--nonsense", "--help"}).help);
        assertTrue(BenchOptions.parse("--connections", "two", "-h").help, "also over a bad value");
        assertTrue(BenchOptions.parse("--connections", "8", "--window", "4", "--help").help, "and the checks after");
    }

    @Test
    void theUsageNamesEveryFlagButTheScriptsCheck() {
        String usage = BenchOptions.usage();
        for (String flag : List.of("--connections", "--window", "--write-set", "--write-set-dist", "--keys",
                "--key-dist", "--zipf-theta", "--read-only-fraction", "--isolation", "--read-set", "--scan-rows",
                "--scan-certify", "--duration", "--warmup", "--oracle", "--in-process", "--oracle-setting", "--rate",
                "--io-threads", "--server-pid", "--bookies-pid", "--label", "--tls", "--progress", "--help")) {
            assertTrue(usage.contains(flag + " ") || usage.contains(flag + "="), flag);
        }
        assertFalse(usage.contains("--check"), usage);
    }

    @Test
    void checkOnlyValidatesAndTheLastOfAFlagGivenTwiceWins() throws Exception {
        // bin/so-bench: 'SoBench --check FLAGS' before it starts an oracle; the in-process run appends settings.
        BenchOptions o = BenchOptions.parse("--check", "--window", " 64 ", "--window=128", "--oracle", "h:1",
                "--in-process", "--oracle-setting", "io.threads=2", "--label", "@x");
        assertTrue(o.check);
        assertEquals(128, o.window);
        assertTrue(o.inProcess());
        assertEquals(List.of("io.threads=2"), o.oracleSettings);
        assertEquals("@x", o.label, "no @file expansion");
        assertEquals(64, BenchOptions.parse("--window", " 64 ").window, "values are trimmed");
        assertMessage("smaller than --connections", "--check", "--connections", "8", "--window", "4");
    }

    @Test
    void rejectsBadInputWithAClearMessage() {
        assertMessage("Unknown options: '--bogus', '1'", "--bogus", "1");
        assertMessage("Missing required parameter for option '--window' (W)", "--window");
        assertMessage("Unmatched argument at index 0: 'window'", "window");
        assertMessage("'--in-process': 'yes' is not a boolean", "--in-process=yes");
        assertMessage("--connections must be a", "--connections", "two");
        assertMessage("--write-set-dist must be fixed or uniform", "--write-set-dist", "poisson");
        assertMessage("--zipf-theta must be between 0 and 1", "--zipf-theta", "1.2");
        assertMessage("--oracle takes HOST:PORT", "--oracle", "localhost");
        assertMessage("smaller than --connections", "--connections", "8", "--window", "4");
        assertMessage("smaller than the largest write set", "--keys", "10", "--write-set", "8",
                "--write-set-dist", "uniform");
        assertMessage("only to an in-process oracle", "--oracle", "h:1", "--oracle-setting", "port=1");
        assertMessage("--isolation must be si, si-granules or serializable", "--isolation", "repeatable-read");
        assertMessage("--scan-certify must be granules or rows", "--scan-certify", "ranges");
        assertMessage("smaller than the read set", "--keys", "100", "--read-set", "101");
        assertMessage("no such process", "--server-pid", "999999999");
    }

    private static void assertMessage(String expected, String... args) {
        UsageException e = assertThrows(UsageException.class, () -> BenchOptions.parse(args));
        assertTrue(e.getMessage().contains(expected), () -> "message was: " + e.getMessage());
    }
}
