package io.sibyl.client;

import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CompareOperator;
import org.apache.hadoop.hbase.HConstants;
import org.apache.hadoop.hbase.client.Append;
import org.apache.hadoop.hbase.client.CheckAndMutate;
import org.apache.hadoop.hbase.client.Consistency;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Increment;
import org.apache.hadoop.hbase.client.Mutation;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Row;
import org.apache.hadoop.hbase.client.RowMutations;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.filter.IncompatibleFilterException;
import org.apache.hadoop.hbase.security.visibility.VisibilityConstants;
import org.apache.hadoop.hbase.util.Bytes;

import java.io.IOException;
import java.util.List;
import java.util.Map;

/**
 * Refuses, with an explanation, the requests a {@link TTable} cannot honour in a transaction (user timestamps, more
 * than one version, raw or timeline reads, cell attributes, unknown families), before anything is read or buffered.
 */
final class RequestChecks {
    private final TableFamilies families;
    /** HBase's client-side limit on one cell's size ({@code hbase.client.keyvalue.maxsize}; 0 or less: none). */
    private final int maxCellSize;

    RequestChecks(TableFamilies families, int maxCellSize) {
        this.families = families;
        this.maxCellSize = maxCellSize;
    }

    void get(Get g) throws IOException {
        if (!g.getTimeRange().isAllTime() || !g.getColumnFamilyTimeRange().isEmpty()) {
            throw new IllegalArgumentException("a transactional Get reads the transaction's snapshot: a time range or"
                    + " timestamp cannot be set (row " + Bytes.toStringBinary(g.getRow()) + ")");
        }
        if (g.getConsistency() == Consistency.TIMELINE) {
            throw timelineRead("Get");
        }
        if (g.getMaxVersions() > 1) {
            throw new IllegalArgumentException("a transaction sees one version per column: readVersions("
                    + g.getMaxVersions() + ")/readAllVersions is not supported");
        }
        for (byte[] f : g.getFamilyMap().keySet()) {
            families.check(f);
        }
    }

    void scan(Scan scan) throws IOException {
        if (!scan.getTimeRange().isAllTime() || !scan.getColumnFamilyTimeRange().isEmpty()) {
            throw new IllegalArgumentException("a transactional Scan reads the transaction's snapshot: a time range"
                    + " or timestamp cannot be set");
        }
        if (scan.getConsistency() == Consistency.TIMELINE) {
            throw timelineRead("Scan");
        }
        if (scan.getMaxVersions() > 1) {
            throw new IllegalArgumentException("a transaction sees one version per column: readVersions("
                    + scan.getMaxVersions() + ")/readAllVersions is not supported");
        }
        if (scan.isRaw()) {
            throw new IllegalArgumentException("raw scans would show uncommitted and deleted versions: use a plain"
                    + " Table for raw access");
        }
        if (scan.getBatch() > 0 && scan.hasFilter() && scan.getFilter().hasFilterRow()) {
            // As HBase: Scan.setBatch refuses such a filter, and a region server refuses a scan given it after the
            // batch (after its retries). A row cut into batches cannot be judged as a whole.
            throw new IncompatibleFilterException("Cannot set batch on a scan using a filter that returns true for"
                    + " filter.hasFilterRow (" + scan.getFilter() + "): drop setBatch or the filter");
        }
        for (byte[] f : scan.getFamilyMap().keySet()) {
            families.check(f);
        }
    }

    private static IllegalArgumentException timelineRead(String what) {
        return new IllegalArgumentException("a transactional " + what + " reads the primary region only:"
                + " Consistency.TIMELINE may read a region replica that lags behind and misses versions the snapshot"
                + " includes; leave the consistency at STRONG");
    }

    void put(Put p) throws IOException {
        if (p.isEmpty()) {
            throw new IllegalArgumentException("no columns to insert in the Put for row "
                    + Bytes.toStringBinary(p.getRow()));
        }
        if (p.getTimestamp() != HConstants.LATEST_TIMESTAMP) {
            throw userTimestamp("Put", p.getRow());
        }
        refuseCellAttributes(p);
        for (Map.Entry<byte[], List<Cell>> f : p.getFamilyCellMap().entrySet()) {
            families.check(f.getKey());
            for (Cell c : f.getValue()) {
                if (c.getTimestamp() != HConstants.LATEST_TIMESTAMP) {
                    throw userTimestamp("Put", p.getRow());
                }
                if (c.getType() != Cell.Type.Put) {
                    throw new IllegalArgumentException("a Put may only hold Put cells, not " + c.getType());
                }
                if (Tombstones.isTombstone(c)) {
                    throw new IllegalArgumentException("the value written to row " + Bytes.toStringBinary(p.getRow())
                            + " is Sibyl's reserved delete marker (docs/data-model.md) and cannot be stored");
                }
                // Table.put refuses such a cell before sending anything. Buffered, it would only reach HBase at a
                // later flush or the commit, failing the whole transaction for a put the caller saw accepted.
                if (maxCellSize > 0 && c.getSerializedSize() > maxCellSize) {
                    throw new IllegalArgumentException("KeyValue size too large: a cell of row "
                            + Bytes.toStringBinary(p.getRow()) + " takes " + c.getSerializedSize() + " bytes, over"
                            + " hbase.client.keyvalue.maxsize (" + maxCellSize + ")");
                }
            }
        }
    }

    void delete(Delete d) throws IOException {
        if (d.getTimestamp() != HConstants.LATEST_TIMESTAMP) {
            throw userTimestamp("Delete", d.getRow());
        }
        refuseCellAttributes(d);
        for (Map.Entry<byte[], List<Cell>> f : d.getFamilyCellMap().entrySet()) {
            families.check(f.getKey());
            for (Cell c : f.getValue()) {
                if (c.getType() == Cell.Type.DeleteFamilyVersion || c.getTimestamp() != HConstants.LATEST_TIMESTAMP) {
                    throw userTimestamp("Delete", d.getRow());
                }
            }
        }
    }

    /** Checks an Increment or an Append. */
    void readModifyWrite(Mutation m) throws IOException {
        ReadModifyWrite.validate(m);
        refuseCellAttributes(m);
        for (byte[] f : m.getFamilyCellMap().keySet()) {
            families.check(f);
        }
    }

    /** Checks a get, put, delete, increment or append; false for any other kind of action. */
    boolean action(Row action) throws IOException {
        if (action instanceof Get g) {
            get(g);
        } else if (action instanceof Put p) {
            put(p);
        } else if (action instanceof Delete d) {
            delete(d);
        } else if (action instanceof Increment || action instanceof Append) {
            readModifyWrite((Mutation) action);
        } else {
            return false;
        }
        return true;
    }

    void checkAndMutate(CheckAndMutate check) throws IOException {
        if (!check.getTimeRange().isAllTime()) {
            throw new IllegalArgumentException("a transactional CheckAndMutate checks the transaction's snapshot: a"
                    + " time range cannot be set (row " + Bytes.toStringBinary(check.getRow()) + ")");
        }
        if (!check.hasFilter()) {
            if (check.getCompareOp() == CompareOperator.NO_OP) {
                throw new IllegalArgumentException("CompareOperator.NO_OP is not a condition (row "
                        + Bytes.toStringBinary(check.getRow()) + ")");
            }
            families.check(check.getFamily());
        }
        Row action = check.getAction();
        List<? extends Row> parts = action instanceof RowMutations rm ? rm.getMutations() : List.of(action);
        for (Row part : parts) {
            if (part instanceof Get || !action(part)) {
                throw new IllegalArgumentException("a CheckAndMutate's action must be a Put, Delete, Increment, Append"
                        + " or RowMutations, not " + (part == null ? "null" : part.getClass().getSimpleName()));
            }
        }
    }

    /**
     * Refuses what a transactional write cannot carry and plain HBase would store with the cells: a cell TTL (cell
     * versions are transaction timestamps, not wall-clock time, so HBase would expire them at the wrong time), a
     * cell ACL and a visibility label (the buffered cells are sent as new puts without them, which would leave the
     * data readable by everyone). Durability and other attributes are not part of the data and are just not carried.
     */
    private static void refuseCellAttributes(Mutation m) {
        String what = null;
        if (m.getTTL() != Long.MAX_VALUE) {
            what = "a cell TTL (setTTL) is not supported: cell versions are transaction timestamps, not wall-clock"
                    + " time; delete expired data in a transaction instead";
        } else if (m.getACL() != null) {
            what = "a cell ACL (setACL) is not supported: grant permissions on the table, family or namespace"
                    + " instead";
        } else if (m.getAttribute(VisibilityConstants.VISIBILITY_LABELS_ATTR_KEY) != null) {
            what = "a visibility label (setCellVisibility) is not supported: keep data of different visibility in"
                    + " different tables or families, with permissions on them";
        }
        if (what != null) {
            throw new IllegalArgumentException("in a transactional " + m.getClass().getSimpleName() + " (row "
                    + Bytes.toStringBinary(m.getRow()) + "), " + what);
        }
    }

    private static IllegalArgumentException userTimestamp(String what, byte[] row) {
        return new IllegalArgumentException("a transactional " + what + " must not set a timestamp (row "
                + Bytes.toStringBinary(row) + "): every version a transaction writes is its start timestamp, so"
                + " that snapshots can tell committed from uncommitted data; drop the timestamp argument");
    }
}
