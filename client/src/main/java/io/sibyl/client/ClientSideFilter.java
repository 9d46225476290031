package io.sibyl.client;

import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellComparator;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.filter.Filter;
import org.apache.hadoop.hbase.shaded.protobuf.ProtobufUtil;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Applies a Get's or Scan's filter, and its per-family limit and offset, to a row <em>after</em> snapshot
 * resolution, following the calls a region server makes (RegionScannerImpl, UserScanQueryMatcher, StoreScanner).
 * A server-side filter would see every stored version, including uncommitted and invisible ones, so it could hide
 * or reveal rows wrongly; here it sees exactly the one version per column the transaction reads.
 */
final class ClientSideFilter {
    private final Filter filter;
    private final int storeLimit;
    private final int storeOffset;
    private boolean allRemainingFiltered;

    ClientSideFilter(Filter userFilter, int storeLimit, int storeOffset) throws IOException {
        this(userFilter, storeLimit, storeOffset, false);
    }

    /**
     * For a scan: a reversed one tells the filter so, as a region server does, since some filters (PrefixFilter)
     * judge where rows can still match by the scan's direction; their serialization does not carry it.
     */
    ClientSideFilter(Filter userFilter, int storeLimit, int storeOffset, boolean reversed) throws IOException {
        this.filter = userFilter == null ? null : copy(userFilter);
        if (reversed && filter != null) {
            filter.setReversed(true);
        }
        this.storeLimit = storeLimit;
        this.storeOffset = storeOffset;
    }

    /** A private copy (through the filter's own serialization, as the region server gets it), so state is ours. */
    private static Filter copy(Filter f) {
        try {
            return ProtobufUtil.toFilter(ProtobufUtil.toFilter(f));
        } catch (IOException | RuntimeException e) {
            return f; // not serializable (a purely client-side filter): use the instance itself
        }
    }

    boolean isPassThrough() {
        return filter == null && storeLimit < 0 && storeOffset <= 0;
    }

    /** True once the filter said no later row can match (e.g. PageFilter, WhileMatchFilter). */
    boolean allRemainingFiltered() throws IOException {
        if (!allRemainingFiltered && filter != null && filter.filterAllRemaining()) {
            allRemainingFiltered = true;
        }
        return allRemainingFiltered;
    }

    /** The cells of the row to return (sorted), or null if the row is filtered out or has no cells. */
    List<Cell> apply(List<Cell> cells) throws IOException {
        if (cells.isEmpty()) {
            return null;
        }
        if (isPassThrough()) {
            return cells;
        }
        if (allRemainingFiltered()) {
            return null;
        }
        try {
            if (filter != null && filter.filterRowKey(cells.get(0))) {
                return null;
            }
            List<Cell> out = new ArrayList<>(cells.size());
            Cell hint = null;
            Cell familyOf = null;
            int inFamily = 0;
            boolean familyDone = false;
            for (Cell c : cells) {
                if (familyOf == null || !CellUtil.matchingFamily(familyOf, c)) {
                    familyOf = c;
                    inFamily = 0;
                    familyDone = false;
                }
                if (familyDone) {
                    continue;
                }
                if (hint != null) {
                    if (CellComparator.getInstance().compare(c, hint) < 0) {
                        continue;
                    }
                    hint = null;
                }
                if (filter != null && filter.filterAllRemaining()) {
                    // A region server's matcher asks before every cell and ends the whole scan there (DONE_SCAN): the
                    // row keeps the cells taken so far and nothing after them is read (WhileMatchFilter tripped by a
                    // cell, ColumnCountGetFilter past its count). Asking only between rows would let the rest of the
                    // row through, and, for filters whose reset() clears the condition, the rest of the scan too.
                    allRemainingFiltered = true;
                    break;
                }
                boolean include = false;
                // A region server runs the filter in each family's store: skipping to the next row (or a hint in
                // another row) ends this family's cells of the row, and the next family is still read.
                boolean endFamily = false;
                if (filter == null) {
                    include = true;
                } else {
                    switch (filter.filterCell(c)) {
                        case INCLUDE, INCLUDE_AND_NEXT_COL -> include = true;
                        case INCLUDE_AND_SEEK_NEXT_ROW -> {
                            include = true;
                            endFamily = true;
                        }
                        case SKIP, NEXT_COL -> {
                        }
                        case NEXT_ROW -> endFamily = true;
                        case SEEK_NEXT_USING_HINT -> {
                            hint = filter.getNextCellHint(c);
                            if (hint != null && !CellUtil.matchingRows(hint, c)) {
                                endFamily = true; // the hint points at another row
                            }
                        }
                        default -> {
                        }
                    }
                }
                if (include) {
                    inFamily++;
                    if (inFamily > storeOffset) {
                        out.add(filter == null ? c : filter.transformCell(c));
                        // As StoreScanner does: the family ends with the cell that reaches the limit, so the filter
                        // never sees the next one (a stateful filter, e.g. ColumnPaginationFilter, would count it,
                        // and a SingleColumnValueFilter would find its column there when HBase does not).
                        if (storeLimit >= 0 && inFamily >= storeLimit + storeOffset) {
                            familyDone = true;
                        }
                    }
                }
                if (endFamily) {
                    familyDone = true;
                    hint = null;
                }
            }
            if (filter != null) {
                if (filter.hasFilterRow()) {
                    filter.filterRowCells(out);
                }
                if (!out.isEmpty() && filter.filterRow()) {
                    return null;
                }
            }
            return out.isEmpty() ? null : out;
        } finally {
            if (filter != null) {
                filter.reset();
            }
        }
    }
}
