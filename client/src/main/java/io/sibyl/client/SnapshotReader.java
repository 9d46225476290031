package io.sibyl.client;

import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellBuilderFactory;
import org.apache.hadoop.hbase.CellBuilderType;
import org.apache.hadoop.hbase.CellComparator;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.Table;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.NavigableSet;

/**
 * Turns multi-version HBase results into one transaction's snapshot (paper Section II, "read"): per column, walk the
 * versions newest first and keep the first one the transaction sees (its own, or committed before it started); if
 * every fetched version is invisible and the fetch may have cut the column short, fetch older versions of just that
 * column, in batches across rows. A visible tombstone means the column is deleted in the snapshot.
 */
final class SnapshotReader {
    /** Most versions asked for in one follow-up fetch of a column. */
    static final int MAX_FOLLOW_UP_VERSIONS = 1024;

    private final SnapshotView snapshot;
    private final Table table;
    private final int versions;

    SnapshotReader(SnapshotView snapshot, Table table, int versions) {
        this.snapshot = snapshot;
        this.table = table;
        this.versions = versions;
    }

    /** Snapshot cells (no tombstones), sorted, of each raw result fetched with {@link #versions} versions. */
    List<List<Cell>> resolve(Result[] raws) throws IOException {
        List<List<Cell>> out = new ArrayList<>(raws.length);
        List<Pending> pending = new ArrayList<>();
        for (int i = 0; i < raws.length; i++) {
            out.add(new ArrayList<>());
            Cell[] cells = raws[i] == null ? null : raws[i].rawCells();
            if (cells != null) {
                walk(cells, i, out.get(i), pending, versions);
            }
        }
        int fetch = versions;
        boolean[] unsorted = pending.isEmpty() ? null : new boolean[raws.length];
        while (!pending.isEmpty()) {
            fetch = Math.min(fetch * 2, MAX_FOLLOW_UP_VERSIONS);
            List<Get> gets = new ArrayList<>(pending.size());
            for (Pending p : pending) {
                gets.add(new Get(p.row).addColumn(p.family, p.qualifier).setTimeRange(0, p.below).readVersions(fetch));
            }
            Result[] more = table.get(gets);
            snapshot.checkReadable();
            List<Pending> next = new ArrayList<>();
            for (int k = 0; k < more.length; k++) {
                Pending p = pending.get(k);
                Cell[] cells = more[k].rawCells();
                if (cells != null) {
                    List<Cell> row = out.get(p.index);
                    int before = row.size();
                    walk(cells, p.index, row, next, fetch);
                    if (row.size() != before) {
                        unsorted[p.index] = true;
                    }
                }
            }
            pending = next;
        }
        if (unsorted != null) {
            for (int i = 0; i < out.size(); i++) {
                if (unsorted[i]) {
                    out.get(i).sort(CellComparator.getInstance());
                }
            }
        }
        return out;
    }

    /**
     * True if the raw row is already its own snapshot: one version per column, each visible and none a tombstone.
     * Then the HBase result can be returned as is (the common case: no concurrent writers on the row).
     */
    boolean isAlreadySnapshot(Result raw) throws IOException {
        Cell[] cells = raw.rawCells();
        if (cells == null || cells.length == 0) {
            return false;
        }
        Cell previous = null;
        for (Cell c : cells) {
            if (previous != null && CellUtil.matchingColumn(previous, c)) {
                return false;
            }
            if (!snapshot.sees(c.getTimestamp()) || Tombstones.isTombstone(c)) {
                return false;
            }
            previous = c;
        }
        return true;
    }

    /** Walks cells sorted by column then version (newest first), up to {@code fetched} versions per column. */
    private void walk(Cell[] cells, int index, List<Cell> out, List<Pending> pending, int fetched)
            throws IOException {
        int i = 0;
        while (i < cells.length) {
            Cell first = cells[i];
            int count = 0;
            Cell chosen = null;
            long oldest = Long.MAX_VALUE;
            int j = i;
            for (; j < cells.length && (j == i || CellUtil.matchingColumn(first, cells[j])); j++) {
                count++;
                Cell c = cells[j];
                oldest = c.getTimestamp();
                if (chosen == null && snapshot.sees(c.getTimestamp())) {
                    chosen = c;
                }
                if (chosen != null) {
                    // the rest of this column is older than the snapshot's version: skip it
                    j++;
                    while (j < cells.length && CellUtil.matchingColumn(first, cells[j])) {
                        j++;
                    }
                    break;
                }
            }
            if (chosen != null) {
                if (!Tombstones.isTombstone(chosen)) {
                    out.add(chosen);
                }
            } else if (count >= fetched && oldest > 0) {
                pending.add(new Pending(index, CellUtil.cloneRow(first), CellUtil.cloneFamily(first),
                        CellUtil.cloneQualifier(first), oldest));
            }
            i = j;
        }
    }

    /** A column whose fetched versions were all invisible: fetch versions below {@code below}. */
    private record Pending(int index, byte[] row, byte[] family, byte[] qualifier, long below) {
    }

    // ---- merging with the transaction's buffered writes -----------------------------------------------------------

    /**
     * Overlays buffered writes (family -> qualifier -> value) of {@code row} on the resolved cells, keeping only
     * the columns selected by {@code familyMap} (empty: all). Buffered tombstones remove columns.
     */
    static List<Cell> overlay(List<Cell> resolved, byte[] row,
                              NavigableMap<byte[], NavigableMap<byte[], byte[]>> buffered,
                              Map<byte[], NavigableSet<byte[]>> familyMap, long version) {
        if (buffered == null || buffered.isEmpty()) {
            return resolved;
        }
        List<Cell> out = new ArrayList<>(resolved.size() + 4);
        for (Cell c : resolved) {
            NavigableMap<byte[], byte[]> fam = buffered.get(CellUtil.cloneFamily(c));
            if (fam == null || !fam.containsKey(CellUtil.cloneQualifier(c))) {
                out.add(c);
            }
        }
        for (Map.Entry<byte[], NavigableMap<byte[], byte[]>> f : buffered.entrySet()) {
            for (Map.Entry<byte[], byte[]> q : f.getValue().entrySet()) {
                if (Tombstones.isTombstone(q.getValue()) || !selected(familyMap, f.getKey(), q.getKey())) {
                    continue;
                }
                out.add(CellBuilderFactory.create(CellBuilderType.SHALLOW_COPY).setRow(row).setFamily(f.getKey())
                        .setQualifier(q.getKey()).setTimestamp(version).setType(Cell.Type.Put).setValue(q.getValue())
                        .build());
            }
        }
        out.sort(CellComparator.getInstance());
        return out;
    }

    static boolean selected(Map<byte[], NavigableSet<byte[]>> familyMap, byte[] family, byte[] qualifier) {
        if (familyMap == null || familyMap.isEmpty()) {
            return true;
        }
        if (!familyMap.containsKey(family)) {
            return false;
        }
        NavigableSet<byte[]> qs = familyMap.get(family);
        return qs == null || qs.isEmpty() || qs.contains(qualifier);
    }
}
