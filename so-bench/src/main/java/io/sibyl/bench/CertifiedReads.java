package io.sibyl.bench;

import io.sibyl.client.oracle.RowIds;

import java.nio.charset.StandardCharsets;
import java.util.concurrent.ThreadLocalRandom;

/**
 * What a serializable so-bench transaction sends beyond its write set in {@code COMMIT_CERTIFIED}, built the way the
 * client library's ReadCertification builds it: the row ids of its point reads, the range granules (or, to count what
 * the granules cost, the exact rows) of one scan, and the granules of the rows it wrote. The bench's keys
 * {@code 0..keys-1} lie in order over one table's 65,536 two-byte row-key prefixes, as the keys of a table with
 * evenly spread row keys do, so a granule holds {@code keys / 65,536} consecutive keys.
 */
final class CertifiedReads {
    /** The table the bench's rows stand in, named in the granule ids. */
    static final byte[] TABLE = "so-bench".getBytes(StandardCharsets.US_ASCII);
    /** As the client's ReadCertification.MAX_PREFIXES_PER_SCAN: a scan over more prefixes reads its table's granule. */
    static final int MAX_PREFIXES_PER_SCAN = 256;

    private final KeyChooser keys;
    private final long keyCount;
    private final int readSet;
    private final int scanRows;
    private final boolean scansAsRows;
    /** The granule id of each prefix, and at index {@link RowIds#PREFIXES} the table's: hashed once, not per commit. */
    private final long[] granuleOfPrefix = new long[RowIds.PREFIXES + 1];

    CertifiedReads(KeyChooser keys, long keyCount, int readSet, int scanRows, boolean scansAsRows) {
        this.keys = keys;
        this.keyCount = keyCount;
        this.readSet = readSet;
        this.scanRows = scanRows;
        this.scansAsRows = scansAsRows;
        for (int p = 0; p < RowIds.PREFIXES; p++) {
            granuleOfPrefix[p] = RowIds.granule(TABLE, p);
        }
        granuleOfPrefix[RowIds.PREFIXES] = RowIds.tableGranule(TABLE);
    }

    /** What {@code o}'s commits carry: under SI_GRANULES the granules written only, no reads. */
    static CertifiedReads of(BenchOptions o) {
        boolean reads = o.isolation == BenchOptions.Isolation.SERIALIZABLE;
        return new CertifiedReads(KeyChooser.of(o), o.keys, reads ? o.readSet : 0, reads ? o.scanRows : 0,
                o.scanCertification == BenchOptions.ScanCertification.ROWS);
    }

    /** The granule of the rows in the order of keys: key {@code k} has prefix {@code floor(k * 65,536 / keys)}. */
    int prefixOf(long key) {
        return (int) Math.min(RowIds.PREFIXES - 1, (long) ((double) key * RowIds.PREFIXES / keyCount));
    }

    /**
     * The rows and granules read, to certify: {@code readSet} distinct rows drawn like the writes, then the scan's
     * granules (its prefixes, or the table's when they are more than {@link #MAX_PREFIXES_PER_SCAN}) or its rows.
     */
    long[] reads(ThreadLocalRandom random) {
        long[] rows = WriteSets.rowIds(WriteSets.distinctKeys(keys, readSet, random));
        if (scanRows == 0) {
            return rows;
        }
        long first = Math.min(keys.next(random), keyCount - scanRows); // drawn like a key, kept inside the table
        long[] scan;
        if (scansAsRows) {
            scan = new long[scanRows];
            for (int i = 0; i < scanRows; i++) {
                scan[i] = WriteSets.rowId(first + i);
            }
        } else {
            int low = prefixOf(first);
            int high = prefixOf(first + scanRows - 1);
            if (high - low + 1 > MAX_PREFIXES_PER_SCAN) {
                scan = new long[] {granuleOfPrefix[RowIds.PREFIXES]};
            } else {
                scan = new long[high - low + 1];
                for (int p = low; p <= high; p++) {
                    scan[p - low] = granuleOfPrefix[p];
                }
            }
        }
        long[] all = new long[rows.length + scan.length];
        System.arraycopy(rows, 0, all, 0, rows.length);
        System.arraycopy(scan, 0, all, rows.length, scan.length);
        return all;
    }

    /** The granules of the rows written, to record: each distinct prefix's, then the table's (as the client sends). */
    long[] granulesWritten(long[] writtenKeys) {
        long[] out = new long[writtenKeys.length + 1];
        int n = 0;
        for (long key : writtenKeys) {
            long g = granuleOfPrefix[prefixOf(key)];
            boolean seen = false;
            for (int i = 0; i < n && !seen; i++) {
                seen = out[i] == g;
            }
            if (!seen) {
                out[n++] = g;
            }
        }
        out[n++] = granuleOfPrefix[RowIds.PREFIXES];
        return n == out.length ? out : java.util.Arrays.copyOf(out, n);
    }
}
