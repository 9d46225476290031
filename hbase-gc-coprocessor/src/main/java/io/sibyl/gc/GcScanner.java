package io.sibyl.gc;

import io.sibyl.client.Tombstones;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.KeyValue;
import org.apache.hadoop.hbase.regionserver.InternalScanner;
import org.apache.hadoop.hbase.regionserver.ScannerContext;
import org.apache.hadoop.hbase.regionserver.Shipper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.List;

/**
 * Wraps the scanner a flush or compaction writes its new file from, and leaves out the versions no snapshot can read
 * (docs/gc.md). Cells come column by column, newest version first, possibly split across calls, so one pass with a
 * little state per column decides every version: once a version that every current and future snapshot reads (or
 * reads something newer than) has passed, everything older in that column goes.
 */
final class GcScanner implements InternalScanner, Shipper {
    private static final Logger LOG = LoggerFactory.getLogger(GcScanner.class);

    /** Where a finished scan adds the versions it kept and removed (the region server's metrics). */
    interface Tally {
        /** Adds one scan's counts. */
        void add(long kept, long removed);
    }

    private final InternalScanner delegate;
    private final GcHorizon horizon;
    private final VersionLiveness liveness;
    /** Only when every file of the store is rewritten may a tombstone go: no older version is left elsewhere. */
    private final boolean mayDropTombstones;
    private final String what;
    private final Tally tally;

    /** Row and column of the versions being walked (a copy: the scanner may reuse the cells' buffers). */
    private KeyValue column;
    /** A version that every snapshot reads, or reads past, was seen in this column: the rest is unreachable. */
    private boolean shadowed;
    /** A committed-long-ago version that shadows the older ones if HBase still returns it; checked when needed. */
    private KeyValue unverified;

    private long kept;
    private long abortedDropped;
    private long shadowedDropped;
    private long tombstonesDropped;

    GcScanner(InternalScanner delegate, GcHorizon horizon, VersionLiveness liveness, boolean mayDropTombstones,
              String what) {
        this(delegate, horizon, liveness, mayDropTombstones, what, (kept, removed) -> { });
    }

    /** As above; {@code tally} receives the counts when the scan closes. */
    GcScanner(InternalScanner delegate, GcHorizon horizon, VersionLiveness liveness, boolean mayDropTombstones,
              String what, Tally tally) {
        this.tally = tally;
        this.delegate = delegate;
        this.horizon = horizon;
        this.liveness = liveness;
        this.mayDropTombstones = mayDropTombstones;
        this.what = what;
    }

    @Override
    public boolean next(List<Cell> result, ScannerContext scannerContext) throws IOException {
        int first = result.size();
        boolean more = delegate.next(result, scannerContext);
        int write = first;
        for (int read = first; read < result.size(); read++) {
            Cell cell = result.get(read);
            if (keep(cell)) {
                result.set(write++, cell);
            }
        }
        result.subList(write, result.size()).clear();
        return more;
    }

    private boolean keep(Cell cell) {
        if (cell.getType() != Cell.Type.Put) {
            return true; // HBase's own delete markers: HBase decides about them
        }
        if (column == null || !CellUtil.matchingRowColumn(column, cell)) {
            column = keyOf(cell);
            shadowed = false;
            unverified = null;
        }
        if (shadowed) {
            shadowedDropped++;
            return false;
        }
        GcHorizon.Verdict verdict = horizon.judge(cell.getTimestamp());
        if (verdict == GcHorizon.Verdict.DROP) {
            abortedDropped++;
            return false;
        }
        if (unverified != null) {
            KeyValue newer = unverified;
            unverified = null;
            if (liveness.isLive(newer)) {
                shadowed = true;
                shadowedDropped++;
                return false;
            }
        }
        switch (verdict) {
            case SHADOWS -> {
                shadowed = true;
                return keepUnlessDroppableTombstone(cell);
            }
            case SHADOWS_IF_LIVE -> {
                if (mayDropTombstones && Tombstones.isTombstone(cell)) {
                    if (liveness.isLive(keyOf(cell))) {
                        shadowed = true;
                        tombstonesDropped++;
                        return false;
                    }
                } else {
                    unverified = keyOf(cell); // asked only if an older version follows
                }
            }
            default -> {
            }
        }
        kept++;
        return true;
    }

    private boolean keepUnlessDroppableTombstone(Cell cell) {
        if (mayDropTombstones && Tombstones.isTombstone(cell)) {
            tombstonesDropped++;
            return false;
        }
        kept++;
        return true;
    }

    private static KeyValue keyOf(Cell cell) {
        return new KeyValue(CellUtil.cloneRow(cell), CellUtil.cloneFamily(cell), CellUtil.cloneQualifier(cell),
                cell.getTimestamp(), KeyValue.Type.Put);
    }

    /**
     * A compaction calls this after writing each batch, so that the store file scanners let go of the cached blocks
     * the batch's cells point into; without it they would hold every block until the compaction ends. Nothing here
     * keeps a cell across batches (only copies of keys), so releasing them is safe.
     */
    @Override
    public void shipped() throws IOException {
        if (delegate instanceof Shipper shipper) {
            shipper.shipped();
        }
    }

    @Override
    public void close() throws IOException {
        delegate.close();
        tally.add(kept, abortedDropped + shadowedDropped + tombstonesDropped);
        if (abortedDropped + shadowedDropped + tombstonesDropped > 0) {
            LOG.info("{}: removed {} aborted, {} shadowed and {} deleted versions, kept {} (low watermark {})", what,
                    abortedDropped, shadowedDropped, tombstonesDropped, kept, horizon.lowWatermark());
        } else {
            LOG.debug("{}: removed nothing, kept {} (low watermark {})", what, kept, horizon.lowWatermark());
        }
    }
}
