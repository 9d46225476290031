package io.sibyl.oracle.ha;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An oracle whose tables cannot fit in its heap refuses to start with what to change, before it joins an election:
 * otherwise a standby would win, fence the leader, and die of an OutOfMemoryError while taking over.
 */
class HeapTooSmallTest {

    @Test
    void oracleWithDefaultTablesInA128MbHeapRefusesToStartAndSaysWhatToChange() throws Exception {
        try (OracleProcess p = new OracleProcess("small-heap", List.of("-Xmx128m", "-XX:+UseSerialGC"),
                List.of("--port=0", "--ha=true", "--journal=bookkeeper", "--journal.zk.connect=127.0.0.1:1"))) {
            assertTrue(p.process.waitFor(60, TimeUnit.SECONDS), "so-server did not exit");
            assertEquals(2, p.process.exitValue(), p.tail());
            List<String> said = p.stderrLines("need");
            assertFalse(said.isEmpty(), p.tail());
            String message = said.get(0);
            assertTrue(message.contains("conflict.table.rows=16777216") && message.contains("-Xmx")
                    && message.contains("heap is "), message);
            assertTrue(p.stderrLines("OutOfMemoryError").isEmpty(), p.tail());
        }
    }
}
