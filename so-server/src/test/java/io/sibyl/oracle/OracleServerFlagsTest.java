package io.sibyl.oracle;

import io.sibyl.protocol.settings.Setting;
import io.sibyl.oracle.journal.JournalKeys;
import io.sibyl.oracle.journal.JournalSettings;
import org.junit.jupiter.api.Test;
import picocli.CommandLine.ParameterException;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** so-server's command line: one flag per declared setting, the forms the scripts use, help and mistakes. */
class OracleServerFlagsTest {

    @Test
    void everyDeclaredSettingIsAFlagInBothForms() throws Exception {
        for (Setting<OracleConfig, ?> s : OracleSettings.SPEC.settings()) {
            assertEquals(List.of(s.key()), List.copyOf(OracleServerFlags.parse("--" + s.key() + "=x").flags()
                    .stringPropertyNames()), s.key());
        }
        for (Setting<JournalSettings, ?> s : JournalKeys.SPEC.settings()) {
            assertEquals("x", OracleServerFlags.parse("--" + s.key(), "x").flags().getProperty(s.key()), s.key());
        }
        OracleConfig c = OracleServerMain.parse("--host=127.0.0.1", "--port", "0", "--journal=bookkeeper",
                "--journal.zk.connect=zk:2181");
        assertEquals("127.0.0.1", c.host());
        assertEquals(0, c.port());
        assertEquals("zk:2181", c.journalSettings().zkConnect());
    }

    @Test
    void aSettingGivenTwiceTakesTheLastValue() throws Exception {
        // bin/so-bench and bin/so-fuzz append SO_SERVER_ARGS to their own --port=0.
        assertEquals(24_681, OracleServerMain.parse("--host=127.0.0.1", "--port=0", "--port=24681").port());
    }

    @Test
    void theFirstConfigFileWinsOverLaterOnesAndTheFlagsOverBoth() throws Exception {
        Path a = Files.createTempFile("so-server-a", ".properties");
        Path b = Files.createTempFile("so-server-b", ".properties");
        try {
            Files.writeString(a, "port=1\nio.threads=2\n");
            Files.writeString(b, "port=3\nio.threads=4\nmax.connections=5\n");
            OracleConfig c = OracleServerMain.parse("--port=7", "--config", a.toString(), "--config=" + b);
            assertEquals(7, c.port());
            assertEquals(2, c.ioThreads());
            assertEquals(5, c.maxConnections());
        } finally {
            Files.delete(a);
            Files.delete(b);
        }
    }

    @Test
    void helpListsEverySettingWithItsDefaultAndMeaningAndWinsOverMistakes() {
        String help = OracleServerFlags.usage();
        assertTrue(help.contains("--config=FILE"), help);
        assertTrue(help.contains("Journal settings, used with --journal=bookkeeper"), help);
        String port = help.substring(help.indexOf("--port=VALUE"));
        assertTrue(port.startsWith("--port=VALUE") && port.contains("TCP port for clients")
                && port.contains("[24680]"), port);
        assertTrue(help.contains("[" + JournalSettings.defaults().ensembleSize() + "]"), help);
        assertTrue(OracleServerFlags.parse("--port=1", "--help").help());
        assertTrue(OracleServerFlags.parse("--bogus", "-h").help());
        assertTrue(OracleServerFlags.parse("--port", "--help").help(), "even where --help would be a value");
    }

    @Test
    void aBadFlagSaysWhatIsWrongAndHowToWriteIt() {
        assertMessage("unknown setting '--prot'; did you mean --port?", "--prot=1");
        assertMessage("unknown setting '--journal.zk.conect'; did you mean --journal.zk.connect?",
                "--journal.zk.conect=zk:2181");
        assertMessage("unknown setting '--bogus'", "--bogus");
        assertMessage("'--journal.ensemble.size' has no value: settings are given as --key=value, e.g."
                + " --journal.ensemble.size=2", "--journal.ensemble.size");
        assertMessage("'--port' has no value", "--port", "--host=127.0.0.1");
        assertMessage("unrecognised argument 'port=1': settings are given as --key=value", "port=1");
        assertMessage("Missing required parameter for option '--config'", "--config");
        // The values are the settings' to check, naming the key, as in a config file.
        IllegalArgumentException e = assertThrows(IllegalArgumentException.class,
                () -> OracleServerMain.parse("--port=many"));
        assertTrue(e.getMessage().contains("invalid value 'many' for port: must be a whole number"), e.getMessage());
    }

    private static void assertMessage(String expected, String... args) {
        ParameterException e = assertThrows(ParameterException.class, () -> OracleServerFlags.parse(args));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }
}
