package io.sibyl.gc;

import org.apache.hadoop.conf.Configuration;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The collector's settings: the defaults of docs/gc.md, and a bad value refused with its key named. */
class GcSettingsTest {

    @Test
    void defaultsAreTheDocumentedOnes() {
        GcSettings s = GcSettings.from(new Configuration(false));
        assertTrue(s.enabled());
        assertEquals(2_000, s.watermarkTimeoutMillis());
        assertEquals(10_000, s.connectTimeoutMillis());
        assertEquals(10_000, s.retryMillis());
    }

    @Test
    void aValueThatIsNotANumberOrNotPositiveNamesItsKey() {
        Configuration words = new Configuration(false);
        words.set(GcSettings.WATERMARK_TIMEOUT_MS, "2s");
        String e = assertThrows(IllegalArgumentException.class, () -> GcSettings.from(words)).getMessage();
        assertTrue(e.contains("'2s' for " + GcSettings.WATERMARK_TIMEOUT_MS), e);
        Configuration zero = new Configuration(false);
        zero.set(GcSettings.RETRY_MS, "0");
        e = assertThrows(IllegalArgumentException.class, () -> GcSettings.from(zero)).getMessage();
        assertTrue(e.contains(GcSettings.RETRY_MS), e);
    }
}
