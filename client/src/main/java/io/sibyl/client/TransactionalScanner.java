package io.sibyl.client;

import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.HConstants;
import org.apache.hadoop.hbase.PrivateCellUtil;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.IsolationLevel;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.metrics.ScanMetrics;
import org.apache.hadoop.hbase.util.Bytes;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * A scan of one transaction's snapshot. Underneath runs an HBase scan over the same rows and columns with the time
 * range [0, T_s] and several versions per column, no filter and whole rows; each row is resolved to the snapshot
 * (deeper versions fetched by gets when needed), merged with the transaction's buffered writes (a copy taken when
 * the scanner opens, interleaved in scan order), then filtered, limited and cut into batches like HBase does.
 *
 * <p>With a row limit, the HBase scan gets the rows still needed as its own limit, so that the region server closes
 * it with the last batch (no separate close call). A raw row can resolve to nothing (invisible, or filtered out), so
 * when the HBase scan ends at its limit with rows still needed, a new one continues after the last raw row.
 */
final class TransactionalScanner implements ResultScanner {
    private final HBaseTransaction tx;
    private final Table table;
    /** The HBase scan as sent (template of continuation scans), and the scanner running it. */
    private final Scan rawScan;
    private ResultScanner raw;
    /** Row limit of the current HBase scan (0: none), the rows it returned, and the last of them. */
    private int rawLimit;
    private int rawRows;
    private byte[] lastRawRow;
    private final SnapshotReader reader;
    private final ClientSideFilter filter;
    private final Map<byte[], java.util.NavigableSet<byte[]>> familyMap;
    private final boolean reversed;
    private final int limit;
    private final int batch;
    /**
     * With {@code setAllowPartialResults(true)}, the size at which HBase ends a piece of a row (the scan's
     * {@code maxResultSize}, else the connection's default); 0 when rows come back whole. {@link #pieceBytes}: bytes
     * of the cells queued since a piece last reached it (a region server's budget spans rows within one call).
     */
    private final long partialSize;
    private long pieceBytes;
    private final Iterator<Map.Entry<byte[], NavigableMap<byte[], NavigableMap<byte[], byte[]>>>> buffered;
    private Map.Entry<byte[], NavigableMap<byte[], NavigableMap<byte[], byte[]>>> nextBuffered;
    private Result nextRaw;
    private boolean rawDone;
    private final ArrayDeque<Result> ready = new ArrayDeque<>();
    private int rowsReturned;
    private boolean done;
    private boolean closed;

    TransactionalScanner(TTable t, HBaseTransaction tx, Scan userScan) throws IOException {
        this.tx = tx;
        this.familyMap = userScan.getFamilyMap();
        this.reversed = userScan.isReversed();
        this.limit = userScan.getLimit();
        this.batch = userScan.getBatch();
        // A region server cuts rows at the size limit only when the filter does not judge whole rows; then the client
        // hands the pieces over as they are, if the scan allows partial results (else it stitches them together).
        boolean wholeRows = !userScan.getAllowPartialResults()
                || (userScan.getFilter() != null && userScan.getFilter().hasFilterRow());
        this.partialSize = wholeRows ? 0 : userScan.getMaxResultSize() > 0 ? userScan.getMaxResultSize()
                : t.connection().getConfiguration().getLong(HConstants.HBASE_CLIENT_SCANNER_MAX_RESULT_SIZE_KEY,
                        HConstants.DEFAULT_HBASE_CLIENT_SCANNER_MAX_RESULT_SIZE);
        int nv = tx.manager().settings().readVersions();
        this.filter = new ClientSideFilter(userScan.getFilter(), userScan.getMaxResultsPerColumnFamily(),
                userScan.getRowOffsetPerColumnFamily(), reversed);
        NavigableMap<byte[], NavigableMap<byte[], NavigableMap<byte[], byte[]>>> rows =
                bufferedRowsIn(tx, t.getName(), userScan);
        this.buffered = rows == null ? Collections.emptyIterator() : rows.entrySet().iterator();
        Scan s = new Scan(userScan);
        s.setFilter(null);
        s.setTimeRange(0, tx.getStartTimestamp() + 1);
        s.readVersions(nv);
        s.setBatch(-1);
        s.setAllowPartialResults(false);
        s.setMaxResultsPerColumnFamily(-1);
        s.setRowOffsetPerColumnFamily(0);
        s.setLimit(-1);
        s.setNeedCursorResult(false);
        acrossRegions(s);
        if (limit > 0 && (s.getCaching() <= 0 || s.getCaching() > limit)) {
            s.setCaching(Math.max(limit, 1)); // no point fetching many rows for a small limit
        }
        this.rawScan = s;
        this.table = t.connection().getTable(t.getName());
        try {
            this.raw = openRaw(s, limit);
        } catch (IOException | RuntimeException e) {
            Interrupts.keepInterrupt(e); // HBase cleared the interrupt flag it turned into InterruptedIOException
            table.close();
            throw e;
        }
        this.reader = new SnapshotReader(tx.snapshot(), table, nv);
    }

    /**
     * Makes an HBase scan read every cell written before it opened in every region it reaches, also after HBase's
     * client reopened it: returns {@code scan}, with isolation {@link IsolationLevel#READ_UNCOMMITTED}.
     *
     * <p>HBase's client reopens a scanner the region server dropped (its region closed to split, merge or move) at
     * the next row, in whichever region holds that row now, and sends along the MVCC read point of the region the
     * scanner was first opened in; the new region applies it. Read points are per region: after a merge, the cells
     * that came from the other parent carry that parent's sequence ids, which can be far above the read point though
     * they were written long before the scan, so with the default read-committed isolation they were skipped and
     * the snapshot read older versions of those rows ({@code ScanAcrossMergeTest}). Read-uncommitted makes the read
     * point "everything": the scan may also see cells of writes still being applied, which snapshots ignore anyway
     * (their writers have not committed: a commit follows its writes), as do the abort sweeper's candidates.
     */
    static Scan acrossRegions(Scan scan) {
        return scan.setIsolationLevel(IsolationLevel.READ_UNCOMMITTED);
    }

    /** Buffered rows of {@code tx} in {@code table} within the scan's range, in scan order (a copy), or null. */
    private static NavigableMap<byte[], NavigableMap<byte[], NavigableMap<byte[], byte[]>>> bufferedRowsIn(
            HBaseTransaction tx, TableName table, Scan scan) {
        NavigableMap<byte[], NavigableMap<byte[], NavigableMap<byte[], byte[]>>> rows = tx.writes().bufferedRows(table);
        if (rows == null) {
            return null;
        }
        boolean reversed = scan.isReversed();
        byte[] low = reversed ? scan.getStopRow() : scan.getStartRow();
        boolean lowIncluded = reversed ? scan.includeStopRow() : scan.includeStartRow();
        byte[] high = reversed ? scan.getStartRow() : scan.getStopRow();
        boolean highIncluded = reversed ? scan.includeStartRow() : scan.includeStopRow();
        NavigableMap<byte[], NavigableMap<byte[], NavigableMap<byte[], byte[]>>> m = rows;
        if (low.length > 0 && high.length > 0) {
            if (Bytes.compareTo(low, high) > 0) {
                return null; // an empty range, as HBase scans it
            }
            // One sub-map: a tail map excluding a row and then a head map including it (e.g. (r, r]) would throw.
            m = m.subMap(low, lowIncluded, high, highIncluded);
        } else if (low.length > 0) {
            m = m.tailMap(low, lowIncluded);
        } else if (high.length > 0) {
            m = m.headMap(high, highIncluded);
        }
        if (reversed) {
            m = m.descendingMap();
        }
        return m.isEmpty() ? null : new TreeMap<>(m);
    }

    /** Opens an HBase scan of at most {@code rows} rows (0: no limit). */
    private ResultScanner openRaw(Scan s, int rows) throws IOException {
        rawLimit = Math.max(rows, 0);
        rawRows = 0;
        s.setLimit(rawLimit > 0 ? rawLimit : -1);
        return table.getScanner(s);
    }

    /** The next whole raw row, continuing after the last one when a limited HBase scan stopped at its limit. */
    private Result nextRawRow() throws IOException {
        Result r = raw.next();
        if (r == null && rawLimit > 0 && rawRows >= rawLimit && lastRawRow != null) {
            // The HBase scan stopped at its limit but rows it returned resolved to nothing: scan on for the rest.
            raw.close();
            Scan more = new Scan(rawScan);
            more.withStartRow(lastRawRow, false);
            raw = openRaw(more, Math.max(1, limit - rowsReturned));
            r = raw.next();
        }
        tx.snapshot().checkReadable(); // also for the end of the scan: a row the collector removed ends it early
        if (r != null) {
            rawRows++;
            lastRawRow = r.getRow();
        }
        return r;
    }

    @Override
    public Result next() throws IOException {
        try {
            return nextRow();
        } catch (IOException e) {
            Interrupts.keepInterrupt(e); // HBase cleared the interrupt flag it turned into InterruptedIOException
            throw e;
        }
    }

    private Result nextRow() throws IOException {
        while (ready.isEmpty()) {
            if (done || closed) {
                return null;
            }
            tx.checkRunning();
            if (filter.allRemainingFiltered()) {
                done = true;
                return null;
            }
            if (nextRaw == null && !rawDone) {
                nextRaw = nextRawRow();
                rawDone = nextRaw == null;
            }
            if (nextBuffered == null && buffered.hasNext()) {
                nextBuffered = buffered.next();
            }
            if (nextRaw == null && nextBuffered == null) {
                done = true;
                return null;
            }
            Result r = null;
            Map.Entry<byte[], NavigableMap<byte[], NavigableMap<byte[], byte[]>>> b = null;
            if (nextRaw != null && nextBuffered != null) {
                int cmp = Bytes.compareTo(nextRaw.getRow(), nextBuffered.getKey());
                if (reversed) {
                    cmp = -cmp;
                }
                if (cmp <= 0) {
                    r = nextRaw;
                }
                if (cmp >= 0) {
                    b = nextBuffered;
                }
            } else if (nextRaw != null) {
                r = nextRaw;
            } else {
                b = nextBuffered;
            }
            if (r != null) {
                nextRaw = null;
            }
            if (b != null) {
                nextBuffered = null;
            }
            if (b == null && filter.isPassThrough() && reader.isAlreadySnapshot(r)) {
                queue(r, Arrays.asList(r.rawCells())); // fast path: HBase's own result is the snapshot
                rowsReturned++;
                if (limit > 0 && rowsReturned >= limit) {
                    done = true;
                }
                continue;
            }
            List<Cell> cells = r != null ? reader.resolve(new Result[] {r}).get(0) : Collections.emptyList();
            if (b != null) {
                cells = SnapshotReader.overlay(cells, b.getKey(), b.getValue(), familyMap, tx.getStartTimestamp());
            }
            emit(cells);
        }
        // Finished or ending (another thread, the manager's close), or past the oracle's max age, while this row was
        // resolved: the replica may have let go of what the snapshot needs, so nothing resolved since is returned.
        tx.checkResolvedInTime();
        return ready.poll();
    }

    /** Filters one resolved row and queues it, in batches if the scan asked for them. */
    private void emit(List<Cell> cells) throws IOException {
        List<Cell> out = filter.apply(cells);
        if (out == null) {
            return;
        }
        rowsReturned++;
        queue(null, out);
        if (limit > 0 && rowsReturned >= limit) {
            done = true;
        }
    }

    /**
     * Queues one row ({@code whole}, if not null, holds exactly {@code cells}), cut into pieces as HBase cuts it: a
     * piece ends after {@code batch} cells, or, with partial results allowed, with the cell that brings the bytes
     * since the last full piece to the size limit (HBase also counts heap size, so its pieces can be smaller when the
     * limit is larger than a cell). Every piece but the last is marked {@code mayHaveMoreCellsInRow}.
     */
    private void queue(Result whole, List<Cell> cells) {
        if (batch <= 0 && partialSize <= 0) {
            ready.add(whole != null ? whole : Result.create(cells)); // whole rows (the usual case)
            return;
        }
        List<Cell> piece = new ArrayList<>();
        for (int i = 0; i < cells.size(); i++) {
            Cell c = cells.get(i);
            piece.add(c);
            boolean full = batch > 0 && piece.size() >= batch;
            if (partialSize > 0) {
                pieceBytes += PrivateCellUtil.estimatedSerializedSizeOf(c);
                if (pieceBytes >= partialSize) {
                    full = true;
                    pieceBytes = 0;
                }
            }
            boolean last = i == cells.size() - 1;
            if (last && piece.size() == cells.size()) {
                ready.add(whole != null ? whole : Result.create(cells));
            } else if (full || last) {
                ready.add(Result.create(piece, null, false, !last));
                piece = new ArrayList<>();
            }
        }
    }

    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        // HBase's scanner close may swallow the interrupt of a thread whose scan was just interrupted (the usual
        // try-with-resources after an InterruptedIOException): the flag stays as it was.
        boolean interrupted = Thread.currentThread().isInterrupted();
        try {
            raw.close();
            table.close();
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } finally {
            if (interrupted && !Thread.currentThread().isInterrupted()) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @Override
    public boolean renewLease() {
        return raw.renewLease();
    }

    @Override
    public ScanMetrics getScanMetrics() {
        return raw.getScanMetrics();
    }
}
