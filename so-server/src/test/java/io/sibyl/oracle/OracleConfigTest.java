package io.sibyl.oracle;

import io.sibyl.protocol.settings.Setting;
import io.sibyl.oracle.journal.JournalKeys;
import io.sibyl.oracle.journal.JournalSettings;
import org.junit.jupiter.api.Test;
import picocli.CommandLine.ParameterException;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Oracle settings from properties and flags, including the journal choice and the journal.* keys. */
class OracleConfigTest {

    @Test
    void journalKeysAreAcceptedAndCheckedByTheJournalSettings() {
        Properties p = new Properties();
        p.setProperty("port", "0");
        p.setProperty("journal", "BookKeeper");
        p.setProperty("journal.zk.connect", "zk1:2181,zk2:2181");
        p.setProperty("journal.ensemble.size", "5");
        p.setProperty("journal.write.quorum", "3");
        OracleConfig c = OracleConfig.fromProperties(p);
        assertEquals(OracleConfig.JournalKind.BOOKKEEPER, c.journal());
        assertEquals("zk1:2181,zk2:2181", c.journalSettings().zkConnect());
        assertEquals(5, c.journalSettings().ensembleSize());
        assertEquals(3, c.journalSettings().writeQuorum());
        assertTrue(c.describe().containsKey("journal.zk.connect"), "bookkeeper: the journal settings are listed");
        assertEquals("bookkeeper", c.describe().get("journal").split(" ")[0]);

        OracleConfig d = OracleConfig.fromProperties(new Properties());
        assertEquals(OracleConfig.JournalKind.MEMORY, d.journal(), "memory by default");
        assertEquals(JournalSettings.defaults(), d.journalSettings());
        assertFalse(d.describe().containsKey("journal.zk.connect"));
        assertTrue(d.describe().containsKey("journal"));
        assertEquals(d.journal(), d.withPort(7).journal(), "copies keep the journal");
        assertEquals(c.journalSettings(), c.withCapacities(64, 4, 16).journalSettings());
    }

    @Test
    void unknownOrInvalidKeysAreRefused() {
        for (String[] bad : new String[][] {{"jurnal", "memory"}, {"journal", "disk"},
                {"journal.ensemble.sise", "3"}, {"journal.ack.quorum", "3"}, {"journal.zk.session.timeout.ms", "x"}}) {
            Properties p = new Properties();
            p.setProperty(bad[0], bad[1]);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> OracleConfig.fromProperties(p), bad[0] + "=" + bad[1]);
            assertTrue(e.getMessage().contains(bad[0].equals("journal.ack.quorum") ? "quorum" : bad[0]),
                    e.getMessage());
        }
    }

    @Test
    void operationsAndJournalDocsListEveryKeyWithTheDefaultSoServerHelpShows() throws Exception {
        Map<String, String> ops = DocTables.settingsTable(Path.of("..", "docs", "operations.md"), "## Settings");
        Map<String, String> code = new LinkedHashMap<>();
        OracleConfig.defaults().describe().forEach((k, v) -> code.put(k, v.split("  #", 2)[0].trim()));
        assertEquals("see [journal.md](journal.md#settings)", ops.remove("journal.*"));
        assertEquals(code.keySet(), ops.keySet(), "docs/operations.md, Settings, against so-server --help");
        for (Map.Entry<String, String> e : code.entrySet()) {
            String documented = ops.get(e.getKey());
            // A default may be followed by what it means, in parentheses: "0 (half of max.running.transactions...)".
            String value = documented.contains(" (") ? documented.substring(0, documented.indexOf(" (")) : documented;
            assertEquals(e.getValue().isEmpty() ? "empty" : e.getValue(), value, "default of " + e.getKey());
        }
        Map<String, String> journal = DocTables.settingsTable(Path.of("..", "docs", "journal.md"), "## Settings");
        Map<String, String> journalCode = new LinkedHashMap<>();
        JournalSettings.defaults().describe().forEach((k, v) -> journalCode.put(k, v.split("  #", 2)[0].trim()));
        journalCode.put("journal.password", JournalSettings.defaults().password()); // --help masks it
        assertEquals(journalCode.keySet(), journal.keySet(), "docs/journal.md, Settings, against so-server --help");
        for (Map.Entry<String, String> e : journalCode.entrySet()) {
            assertEquals(e.getValue().isEmpty() ? "empty" : e.getValue(), journal.get(e.getKey()),
                    "default of " + e.getKey());
        }
    }

    @Test
    void everyDeclaredKeyIsInItsDocsTableAndInHelp() throws Exception {
        Map<String, String> ops = DocTables.settingsTable(Path.of("..", "docs", "operations.md"), "## Settings");
        Map<String, String> help = OracleConfig.defaults().describe();
        for (Setting<OracleConfig, ?> s : OracleSettings.SPEC.settings()) {
            assertTrue(ops.containsKey(s.key()), "docs/operations.md, Settings, lists " + s.key());
            assertTrue(help.containsKey(s.key()), "--help lists " + s.key());
        }
        Map<String, String> journal = DocTables.settingsTable(Path.of("..", "docs", "journal.md"), "## Settings");
        for (Setting<JournalSettings, ?> s : JournalKeys.SPEC.settings()) {
            assertTrue(journal.containsKey(s.key()), "docs/journal.md, Settings, lists " + s.key());
        }
    }

    @Test
    void badValuesAndBadFlagsSayWhatIsAllowedAndHowToWriteIt() {
        Properties small = new Properties();
        small.setProperty("conflict.table.rows", "3");
        assertEquals("invalid value 3 for conflict.table.rows: must be 8 to 536870912 (see docs/operations.md)",
                assertThrows(IllegalArgumentException.class, () -> OracleConfig.fromProperties(small)).getMessage());
        Properties wraps = new Properties();
        wraps.setProperty("port", "4294967296"); // (int) of it is 0, a valid port nobody asked for
        String tooLarge = assertThrows(IllegalArgumentException.class, () -> OracleConfig.fromProperties(wraps))
                .getMessage();
        assertTrue(tooLarge.contains("for port:") && tooLarge.contains("'4294967296'"), tooLarge);

        String noValue = assertThrows(ParameterException.class,
                () -> OracleServerMain.parse(new String[] {"--port"})).getMessage();
        assertTrue(noValue.contains("--port=24680"), noValue);
        String noDashes = assertThrows(ParameterException.class,
                () -> OracleServerMain.parse(new String[] {"port=1"})).getMessage();
        assertTrue(noDashes.contains("'port=1'") && noDashes.contains("--key=value"), noDashes);
        String missing = assertThrows(IOException.class,
                () -> OracleServerMain.parse(new String[] {"--config", "/no/such/oracle.properties"})).getMessage();
        assertTrue(missing.contains("cannot read the --config file /no/such/oracle.properties"), missing);
    }

    @Test
    void aTakenPortOrAHostThatDoesNotResolveIsExplained() throws Exception {
        try (java.net.ServerSocket taken = new java.net.ServerSocket(0)) {
            OracleConfig config = OracleConfig.defaults().withPort(taken.getLocalPort())
                    .withCapacities(64, 4, 16);
            Exception e = assertThrows(Exception.class, () -> OracleServer.startInMemory(config).close());
            String hint = OracleServerMain.startFailureHint(config, e);
            assertTrue(hint.contains("another process listens on port " + taken.getLocalPort()), e + hint);
        }
        Properties p = new Properties();
        p.setProperty("host", "no-such-host.invalid");
        p.setProperty("port", "0");
        OracleConfig unresolved = OracleConfig.fromProperties(p).withCapacities(64, 4, 16);
        Exception e = assertThrows(Exception.class, () -> OracleServer.startInMemory(unresolved).close());
        assertTrue(OracleServerMain.startFailureHint(unresolved, e).contains("host 'no-such-host.invalid' does not"
                + " resolve"), e.toString());
    }

    @Test
    void flagsOverrideTheFileAndHelpListsTheJournalSettings() throws Exception {
        Path file = Files.createTempFile("so-server", ".properties");
        try {
            Files.writeString(file, "journal=bookkeeper\njournal.ledgers.znode=/a/b\nport=1\n");
            OracleConfig c = OracleServerMain.parse(new String[] {"--config", file.toString(), "--port=2",
                "--journal.ledgers.znode=/c/d"});
            assertEquals(2, c.port());
            assertEquals(OracleConfig.JournalKind.BOOKKEEPER, c.journal());
            assertEquals("/c/d", c.journalSettings().ledgersZnode());
        } finally {
            Files.delete(file);
        }
        PrintStream out = System.out;
        ByteArrayOutputStream captured = new ByteArrayOutputStream();
        System.setOut(new PrintStream(captured, true, StandardCharsets.UTF_8));
        try {
            OracleServerMain.main(new String[] {"--port=1", "--help"}); // --help wins wherever it stands
        } finally {
            System.setOut(out);
        }
        String help = captured.toString(StandardCharsets.UTF_8);
        for (String key : JournalSettings.defaults().describe().keySet()) {
            assertTrue(help.contains("  --" + key + "=VALUE"), "--help lists " + key);
        }
        for (String key : OracleConfig.defaults().describe().keySet()) {
            assertTrue(help.contains("  --" + key + "=VALUE"), "--help lists " + key);
        }
    }

    @Test
    void haKeysAreParsedAndBadValuesRefusedWithTheKeyNamed() {
        Properties p = new Properties();
        p.setProperty("journal", "bookkeeper");
        p.setProperty("ha", "true");
        p.setProperty("advertised.host", "oracle-1.example.com");
        p.setProperty("ha.tail.interval.ms", "20");
        p.setProperty("journal.leader.znode", "/prod/sibyl/leader");
        OracleConfig c = OracleConfig.fromProperties(p);
        assertTrue(c.ha().enabled());
        assertEquals(20, c.ha().tailIntervalMs());
        assertEquals("oracle-1.example.com", c.ha().hostToAdvertise("0.0.0.0"));
        assertEquals("/prod/sibyl/leader", c.journalSettings().leaderZnode());
        assertTrue(c.describe().containsKey("ha") && c.describe().containsKey("journal.election.znode"));

        assertEquals("10.1.2.3", OracleConfig.defaults().ha().hostToAdvertise("10.1.2.3"),
                "empty advertised.host: the bind host");
        assertFalse(OracleConfig.defaults().ha().hostToAdvertise("0.0.0.0").equals("0.0.0.0"),
                "binding every interface advertises this machine's name");

        Properties memory = new Properties();
        memory.setProperty("ha", "true");
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> OracleConfig.fromProperties(memory));
        assertTrue(e.getMessage().contains("journal=bookkeeper"), e.getMessage());
        Properties badHost = new Properties();
        badHost.setProperty("advertised.host", "host:24680/x");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> OracleConfig.fromProperties(badHost))
                .getMessage().contains("advertised.host"));
        Properties badInterval = new Properties();
        badInterval.setProperty("ha.tail.interval.ms", "0");
        assertTrue(assertThrows(IllegalArgumentException.class, () -> OracleConfig.fromProperties(badInterval))
                .getMessage().contains("ha.tail.interval.ms"));
    }

    @Test
    void connectionDefenceKeysHaveDefaultsAndBadValuesAreRefusedWithTheKeyNamed() {
        OracleConfig d = OracleConfig.defaults();
        assertEquals(10_000, d.handshakeTimeoutMillis());
        assertEquals(4096, d.maxConnections());
        assertEquals(0, d.maxRunningTransactionsPerConnection());
        assertEquals(d.maxRunningTransactions() / 2, d.runningTransactionsPerConnection(), "0: half the shared limit");
        assertEquals(50, d.withCapacities(1 << 12, 1 << 10, 100).runningTransactionsPerConnection(),
                "the default follows max.running.transactions");

        Properties p = new Properties();
        p.setProperty("handshake.timeout.ms", "2500");
        p.setProperty("max.connections", "100");
        p.setProperty("max.running.transactions", "1000");
        p.setProperty("max.running.transactions.per.connection", "300");
        OracleConfig c = OracleConfig.fromProperties(p);
        assertEquals(2500, c.handshakeTimeoutMillis());
        assertEquals(100, c.maxConnections());
        assertEquals(300, c.runningTransactionsPerConnection());
        assertEquals(100, c.withPort(5).maxConnections(), "copies keep them");
        assertTrue(c.describe().get("max.running.transactions.per.connection").startsWith("300 "));
        p.setProperty("max.running.transactions.per.connection", "5000");
        assertEquals(1000, OracleConfig.fromProperties(p).runningTransactionsPerConnection(),
                "above the shared limit: no quota of its own");

        for (String[] bad : new String[][] {{"handshake.timeout.ms", "0"}, {"max.connections", "0"},
                {"max.running.transactions.per.connection", "-1"}, {"max.connections", "many"}}) {
            Properties q = new Properties();
            q.setProperty(bad[0], bad[1]);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> OracleConfig.fromProperties(q), bad[0] + "=" + bad[1]);
            assertTrue(e.getMessage().contains(bad[0]), e.getMessage());
        }
    }

    @Test
    void metricsHttpPortIsOffByDefaultKeptByCopiesAndBadValuesAreRefusedWithTheKeyNamed() {
        assertEquals(OracleConfig.METRICS_OFF, OracleConfig.defaults().metricsHttpPort());
        Properties p = new Properties();
        p.setProperty("metrics.http.port", "9464");
        OracleConfig c = OracleConfig.fromProperties(p);
        assertEquals(9464, c.metricsHttpPort());
        assertEquals(9464, c.withPort(5).withCapacities(64, 4, 16).withIdleTimeout(0).metricsHttpPort(),
                "copies keep it");
        assertTrue(c.describe().get("metrics.http.port").startsWith("9464 "));
        assertEquals(0, OracleConfig.defaults().withMetricsHttpPort(0).metricsHttpPort(), "0 picks a free port");
        for (String bad : new String[] {"-2", "65536", "prometheus"}) {
            Properties q = new Properties();
            q.setProperty("metrics.http.port", bad);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> OracleConfig.fromProperties(q), "metrics.http.port=" + bad);
            assertTrue(e.getMessage().contains("metrics.http.port"), e.getMessage());
        }
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> OracleConfig.defaults().withMetricsHttpPort(70000));
        assertTrue(e.getMessage().contains("-1 (off), 0 (pick a free port) or 1 to 65535"), e.getMessage());
    }

    @Test
    void defaultTablesFitAOneGigabyteHeapButNotA256MbOne() {
        OracleConfig d = OracleConfig.defaults();
        long tables = OracleState.footprintBytes(d);
        assertTrue(tables > 256L << 20 && tables < 512L << 20, "default tables take " + (tables >> 20) + " MB");
        assertEquals(null, OracleServerMain.heapProblem(d, 1L << 30));
        String problem = OracleServerMain.heapProblem(d, 256L << 20);
        assertTrue(problem != null && problem.contains("raise -Xmx") && problem.contains("max.running.transactions"),
                String.valueOf(problem));
        OracleConfig small = d.withCapacities(1 << 20, 1 << 18, 1 << 16);
        assertEquals(null, OracleServerMain.heapProblem(small, 256L << 20));
    }

    @Test
    void settingsThatWouldOverflowWhatTheCodeHoldsAreRefusedNamingKeyAndRange() {
        // Each of these was accepted once and then broke silently: a reservation limit that wrapped negative (an
        // acknowledged commit lost at recovery), tables rounded to 16 rows or to a negative size, a BEGIN never
        // answered, Netty failing without naming a setting.
        String[][] overflows = {
                {"timestamp.reservation.block", "9223372036854775807", "1 to 4294967296"},
                {"timestamp.reservation.block", "36028797018963968", "1 to 4294967296"},
                {"max.running.transactions", "1073741825", "2 to 536870912"},
                {"conflict.table.rows", "2147483647", "8 to 536870912"},
                {"recent.commits.capacity", "2147483647", "2 to 536870912"},
                {"io.threads", "100000", "1 to 1024"},
                {"max.frame.bytes", "2147483647", "1024 to 1073741824"},
                {"max.connections", "2000000000", "1 to 1048576"},
                {"push.interval.ms", "9223372036854775807", "1 to 86400000"},
                {"stats.log.interval.ms", "9223372036854775807", "0 (never) to 86400000"},
                {"max.lag.bytes", "9223372036854775807", "1024 to 2147483647"},
                {"transaction.max.age.ms", "9223372036854775807", "0 (no limit) or 1000 to 2592000000"}};
        for (String[] bad : overflows) {
            Properties p = new Properties();
            p.setProperty(bad[0], bad[1]);
            IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                    () -> OracleConfig.fromProperties(p), bad[0] + "=" + bad[1]);
            assertTrue(e.getMessage().contains(bad[0]) && e.getMessage().contains(bad[2]), e.getMessage());
        }
        Properties largest = new Properties();
        largest.setProperty("timestamp.reservation.block", Long.toString(OracleConfig.MAX_TIMESTAMP_RESERVATION_BLOCK));
        largest.setProperty("max.running.transactions", Integer.toString(OracleConfig.MAX_TABLE_ENTRIES));
        OracleConfig c = OracleConfig.fromProperties(largest);
        assertEquals(1L << 32, c.timestampReservationBlock());
        assertEquals(1 << 29, c.maxRunningTransactions());
    }

    @Test
    void aBackgroundRangeSweepThatCannotRunIsRefusedAtStartNamingTheSetting() throws Exception {
        Properties p = new Properties();
        p.setProperty("port", "0");
        p.setProperty("range.sweep.tables", "accounts, orders");
        IllegalArgumentException noSecret = assertThrows(IllegalArgumentException.class,
                () -> OracleConfig.fromProperties(p));
        assertTrue(noSecret.getMessage().contains("range.sweep.tables needs admin.secret.file"), noSecret.getMessage());

        Path secret = Files.createTempFile("sibyl-admin", ".secret");
        try {
            Files.writeString(secret, "an-admin-secret-of-the-config-test");
            p.setProperty("admin.secret.file", secret.toString());
            p.setProperty("range.sweep.interval.ms", "50");
            IllegalArgumentException tooOften = assertThrows(IllegalArgumentException.class,
                    () -> OracleConfig.fromProperties(p));
            assertTrue(tooOften.getMessage().contains("range.sweep.interval.ms"), tooOften.getMessage());
            p.setProperty("range.sweep.interval.ms", "1000");
            OracleConfig c = OracleConfig.fromProperties(p);
            assertEquals(java.util.Set.of("accounts", "orders"), c.rangeSweep().tableSet());
            // so-server's own class path holds no sweeper (the client module does): the start says so.
            IllegalStateException e = assertThrows(IllegalStateException.class,
                    () -> OracleServer.startInMemory(c.withCapacities(64, 64, 64)).close());
            assertTrue(e.getMessage().contains("range.sweep.tables is set, but the sweeper"), e.getMessage());
        } finally {
            Files.delete(secret);
        }
    }
}
