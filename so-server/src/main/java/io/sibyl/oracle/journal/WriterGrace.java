package io.sibyl.oracle.journal;

import org.apache.bookkeeper.client.LedgerHandle;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;

/**
 * The {@code reader.grace.ms} of the oracle that wrote a journal ledger, kept in the ledger's custom metadata. A
 * later oracle holds its low watermark at 0 for the longest grace among the ledgers it recovered, since the clients
 * of those oracles read for half of <em>their</em> grace after they last heard from them (docs/gc.md).
 */
final class WriterGrace {
    static final String KEY = "sibyl-reader-grace-ms";

    private WriterGrace() {
    }

    /** {@code metadata} plus the writer's grace (left out when 0: unknown). */
    static Map<String, byte[]> tag(Map<String, byte[]> metadata, long graceMillis) {
        if (graceMillis <= 0) {
            return metadata;
        }
        Map<String, byte[]> out = new HashMap<>(metadata);
        out.put(KEY, Long.toString(graceMillis).getBytes(StandardCharsets.UTF_8));
        return out;
    }

    /**
     * The grace a journal records in each ledger it creates: the writing oracle's own, or, for ledgers created within
     * {@code inheritedGraceMillis} (the longest grace its earlier writers recorded) of the journal's start, the longer
     * of the two, so that an oracle taking over from this one soon holds long enough for those writers' readers too.
     */
    record Recording(long readerGraceMillis, long inheritedGraceMillis, long startedNanos) {
        /** {@code metadata} plus the grace to record now. */
        Map<String, byte[]> tag(Map<String, byte[]> metadata) {
            boolean inheriting = System.nanoTime() - startedNanos < inheritedGraceMillis * 1_000_000L;
            return WriterGrace.tag(metadata,
                    inheriting ? Math.max(readerGraceMillis, inheritedGraceMillis) : readerGraceMillis);
        }
    }

    /** The grace of the oracle that wrote {@code ledger}, or 0 if its metadata does not say (older ledgers). */
    static long of(LedgerHandle ledger) {
        byte[] v = ledger.getCustomMetadata().get(KEY);
        if (v == null) {
            return 0;
        }
        try {
            return Math.max(0, Long.parseLong(new String(v, StandardCharsets.UTF_8)));
        } catch (NumberFormatException e) {
            return 0;
        }
    }
}
