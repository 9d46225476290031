package io.sibyl.gc;

import io.sibyl.client.TransactionManager;
import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The collector's settings: the defaults of docs/gc.md, and a bad value refused with its key named. */
class GcSettingsTest {

    @Test
    void defaultsAreTheDocumentedOnes() {
        GcSettings s = GcSettings.from(new Configuration(false), Map.of());
        assertTrue(s.enabled());
        assertEquals(2_000, s.watermarkTimeoutMillis());
        assertEquals(10_000, s.connectTimeoutMillis());
        assertEquals(10_000, s.retryMillis());
        assertEquals(2_097_152, s.maxHeldCommits());
    }

    @Test
    void gcMdListsEveryKeyWithItsDefault() throws Exception {
        List<String> lines = Files.readAllLines(Path.of("..", "docs", "gc.md"), StandardCharsets.UTF_8);
        Map<String, String> documented = new LinkedHashMap<>();
        int i = lines.indexOf("## Settings");
        while (!lines.get(i).startsWith("| key")) {
            i++;
        }
        for (i += 2; i < lines.size() && lines.get(i).startsWith("| `"); i++) {
            String[] cells = lines.get(i).split("\\s*\\|\\s*");
            documented.put(cells[1].replace("`", ""), cells[2].replace("`", ""));
        }
        GcSettings d = GcSettings.from(new Configuration(false), Map.of());
        Map<String, String> code = new LinkedHashMap<>();
        code.put(TransactionManager.ORACLE_ZK_CONNECT, "—");
        code.put(TransactionManager.ORACLE_ADDRESS, "—");
        code.put(TransactionManager.ORACLE_LEADER_ZNODE, TransactionManager.DEFAULT_LEADER_ZNODE);
        code.put(TransactionManager.ORACLE_ZK_SESSION_TIMEOUT_MS, "10000");
        code.put(TransactionManager.ORACLE_TRANSPORT, "waiting-thread");
        code.put(GcSettings.ENABLED, String.valueOf(d.enabled()));
        code.put(GcSettings.WATERMARK_TIMEOUT_MS, String.valueOf(d.watermarkTimeoutMillis()));
        code.put(GcSettings.CONNECT_TIMEOUT_MS, String.valueOf(d.connectTimeoutMillis()));
        code.put(GcSettings.RETRY_MS, String.valueOf(d.retryMillis()));
        code.put(GcSettings.MAX_HELD_COMMITS, String.valueOf(d.maxHeldCommits()));
        assertEquals(code, documented, "docs/gc.md, Settings");
    }

    @Test
    void aValueThatIsNotANumberOrNotPositiveNamesItsKey() {
        Configuration words = new Configuration(false);
        words.set(GcSettings.WATERMARK_TIMEOUT_MS, "2s");
        String e = assertThrows(IllegalArgumentException.class, () -> GcSettings.from(words, Map.of())).getMessage();
        assertTrue(e.contains("'2s' for " + GcSettings.WATERMARK_TIMEOUT_MS), e);
        Configuration zero = new Configuration(false);
        zero.set(GcSettings.RETRY_MS, "0");
        e = assertThrows(IllegalArgumentException.class, () -> GcSettings.from(zero, Map.of())).getMessage();
        assertTrue(e.contains(GcSettings.RETRY_MS), e);
    }
}
