package io.sibyl.oracle.ha;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * so-server on the in-memory journal (the default, and what a first try starts) says at start, at WARN, that
 * restarting it loses its decisions and what to run in production instead.
 */
class InMemoryJournalWarningTest {

    @Test
    void anOracleOnTheInMemoryJournalWarnsThatARestartLosesItsDecisions() throws Exception {
        try (OracleProcess oracle = new OracleProcess("in-memory", List.of("--port=0", "--host=127.0.0.1",
                "--conflict.table.rows=65536", "--max.running.transactions=4096"))) {
            oracle.awaitReady(60_000);
            List<String> warnings = oracle.stderrLines("journal=memory:");
            assertEquals(1, warnings.size(), oracle.tail());
            String warning = warnings.get(0);
            assertTrue(warning.contains("WARN") && warning.contains("loses every decision")
                    && warning.contains("--journal=bookkeeper"), warning);
        }
    }
}
