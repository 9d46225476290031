package io.sibyl.client;

import io.sibyl.client.oracle.RowIds;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * What a transaction's commit asks the oracle to certify and record beyond its written rows: the rows and range
 * granules a serializable transaction read (checked: one committed since the start aborts it), and the range granules
 * every writing transaction wrote (recorded, so that a serializable reader of the range sees the write). A range
 * granule is a table and a two-byte row-key prefix; a scan over more than {@link #MAX_PREFIXES_PER_SCAN} prefixes,
 * and more than {@link #MAX_ROWS_PER_TABLE} rows read in one table, escalate to the whole table's granule, so that
 * the request stays bounded (at the price of aborts for writes elsewhere in that table). Guarded by its own monitor
 * ({@link HBaseTransaction}).
 */
final class ReadCertification {
    /** Two-byte prefixes a scan may list before it stands for its whole table. */
    static final int MAX_PREFIXES_PER_SCAN = 256;
    /** Rows read in one table before the reads there stand for the whole table. */
    static final int MAX_ROWS_PER_TABLE = 10_000;

    private final boolean serializable;
    private final Map<String, Set<Long>> rowsReadByTable = new HashMap<>();
    private final Set<Long> granulesRead = new HashSet<>();
    private final Set<Long> granulesWritten = new HashSet<>();

    ReadCertification(IsolationLevel isolation) {
        this.serializable = isolation == IsolationLevel.SERIALIZABLE;
    }

    boolean isSerializable() {
        return serializable;
    }

    /** A row was read (a get, an exists, the check of a checkAndMutate). */
    void rowRead(byte[] table, byte[] row) {
        if (!serializable) {
            return;
        }
        long tableGranule = RowIds.tableGranule(table);
        if (granulesRead.contains(tableGranule)) {
            return;
        }
        Set<Long> rows = rowsReadByTable.computeIfAbsent(new String(table, StandardCharsets.ISO_8859_1),
                t -> new HashSet<>());
        rows.add(RowIds.of(table, row));
        if (rows.size() > MAX_ROWS_PER_TABLE) {
            rows.clear();
            granulesRead.add(tableGranule);
        }
    }

    /**
     * A scan read rows from {@code start} towards {@code stop} (descending when {@code reversed}); an empty bound is
     * the table's end in that direction.
     */
    void rangeScanned(byte[] table, byte[] start, byte[] stop, boolean reversed) {
        if (!serializable) {
            return;
        }
        boolean noStart = start == null || start.length == 0;
        boolean noStop = stop == null || stop.length == 0;
        int low;
        int high;
        if (reversed) {
            high = noStart ? RowIds.PREFIXES - 1 : RowIds.prefixOf(start);
            low = noStop ? 0 : RowIds.prefixOf(stop);
        } else {
            low = noStart ? 0 : RowIds.prefixOf(start);
            high = noStop ? RowIds.PREFIXES - 1 : RowIds.prefixOf(stop);
        }
        if (high < low) {
            int t = low;
            low = high;
            high = t;
        }
        if (high - low + 1 > MAX_PREFIXES_PER_SCAN) {
            granulesRead.add(RowIds.tableGranule(table));
            return;
        }
        for (int p = low; p <= high; p++) {
            granulesRead.add(RowIds.granule(table, p));
        }
    }

    /** A row was written: its prefix's and its table's granules are recorded with the commit. */
    void rowWritten(byte[] table, byte[] row) {
        granulesWritten.add(RowIds.granule(table, RowIds.prefixOf(row)));
        granulesWritten.add(RowIds.tableGranule(table));
    }

    /** The rows and granules read, to certify (empty unless serializable). */
    long[] reads() {
        int n = granulesRead.size();
        for (Set<Long> rows : rowsReadByTable.values()) {
            n += rows.size();
        }
        long[] out = new long[n];
        int i = 0;
        for (long g : granulesRead) {
            out[i++] = g;
        }
        for (Set<Long> rows : rowsReadByTable.values()) {
            for (long r : rows) {
                out[i++] = r;
            }
        }
        return out;
    }

    /** The granules written, to record. */
    long[] granulesWritten() {
        long[] out = new long[granulesWritten.size()];
        int i = 0;
        for (long g : granulesWritten) {
            out[i++] = g;
        }
        return out;
    }
}
