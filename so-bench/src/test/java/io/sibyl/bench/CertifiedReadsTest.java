package io.sibyl.bench;

import io.sibyl.client.oracle.RowIds;
import org.junit.jupiter.api.Test;

import java.util.Arrays;
import java.util.concurrent.ThreadLocalRandom;

import static org.junit.jupiter.api.Assertions.assertArrayEquals;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What a serializable so-bench commit carries: the ids the client library would send for the same reads. */
class CertifiedReadsTest {
    private static final long KEYS = 65_536L * 100; // 100 keys per granule
    private static final ThreadLocalRandom RANDOM = ThreadLocalRandom.current();

    @Test
    void keysLieInOrderOverThePrefixes() {
        CertifiedReads c = reads(0, 0, false);
        assertEquals(0, c.prefixOf(0));
        assertEquals(0, c.prefixOf(99));
        assertEquals(1, c.prefixOf(100));
        assertEquals(RowIds.PREFIXES - 1, c.prefixOf(KEYS - 1));
    }

    @Test
    void pointReadsAreDistinctRowIds() {
        long[] reads = reads(8, 0, false).reads(RANDOM);
        assertEquals(8, reads.length);
        assertEquals(8, Arrays.stream(reads).distinct().count());
    }

    @Test
    void aScanIsItsGranulesOrItsRows() {
        // A fixed first key: the key chooser always draws 250, so the scan covers keys 250..449, prefixes 2..4.
        KeyChooser always250 = random -> 250;
        long[] granules = new CertifiedReads(always250, KEYS, 0, 200, false).reads(RANDOM);
        assertArrayEquals(new long[] {RowIds.granule(CertifiedReads.TABLE, 2), RowIds.granule(CertifiedReads.TABLE, 3),
                RowIds.granule(CertifiedReads.TABLE, 4)}, granules);
        long[] rows = new CertifiedReads(always250, KEYS, 0, 200, true).reads(RANDOM);
        assertEquals(200, rows.length);
        assertEquals(WriteSets.rowId(250), rows[0]);
        assertEquals(WriteSets.rowId(449), rows[199]);
    }

    @Test
    void aScanOverMoreThan256PrefixesReadsTheTable() {
        long[] reads = reads(2, 100 * 257, false).reads(RANDOM);
        assertEquals(3, reads.length);
        assertEquals(RowIds.tableGranule(CertifiedReads.TABLE), reads[2]);
    }

    @Test
    void granulesWrittenAreTheDistinctPrefixesAndTheTable() {
        long[] granules = reads(0, 0, false).granulesWritten(new long[] {5, 50, 150, KEYS - 1});
        assertArrayEquals(new long[] {RowIds.granule(CertifiedReads.TABLE, 0), RowIds.granule(CertifiedReads.TABLE, 1),
                RowIds.granule(CertifiedReads.TABLE, RowIds.PREFIXES - 1), RowIds.tableGranule(CertifiedReads.TABLE)},
                granules);
        assertTrue(Arrays.stream(granules).distinct().count() == granules.length);
    }

    private static CertifiedReads reads(int readSet, int scanRows, boolean scansAsRows) {
        return new CertifiedReads(new KeyChooser.UniformKeys(KEYS), KEYS, readSet, scanRows, scansAsRows);
    }
}
