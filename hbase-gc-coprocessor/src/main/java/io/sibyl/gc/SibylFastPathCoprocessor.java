package io.sibyl.gc;

import io.sibyl.client.FastPathRefusedException;
import io.sibyl.client.FastPathRequest;
import io.sibyl.client.Tombstones;
import io.sibyl.client.oracle.CommitReplica;
import io.sibyl.client.oracle.RowIds;
import io.sibyl.client.oracle.Visibility;
import io.sibyl.protocol.Timestamps;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellBuilderFactory;
import org.apache.hadoop.hbase.CellBuilderType;
import org.apache.hadoop.hbase.CellComparator;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.CoprocessorEnvironment;
import org.apache.hadoop.hbase.PrivateCellUtil;
import org.apache.hadoop.hbase.client.Append;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Increment;
import org.apache.hadoop.hbase.client.Mutation;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.coprocessor.ObserverContext;
import org.apache.hadoop.hbase.coprocessor.RegionCoprocessor;
import org.apache.hadoop.hbase.coprocessor.RegionCoprocessorEnvironment;
import org.apache.hadoop.hbase.coprocessor.RegionObserver;
import org.apache.hadoop.hbase.regionserver.HRegion;
import org.apache.hadoop.hbase.regionserver.MiniBatchOperationInProgress;
import org.apache.hadoop.hbase.regionserver.Region;
import org.apache.hadoop.hbase.util.Bytes;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Region observer that commits single-row transactions in the region server, without the client's round trips to
 * the oracle (the fast path, docs/architecture.md). A put, increment or append the client marks
 * ({@link FastPathRequest}) is versioned under its row lock: the oracle hands out a ticket that records the row as
 * written (so a transaction that began before it and writes the row aborts), and every cell takes version ticket + 1,
 * which marks it committed there and then; an increment or append adds to the newest committed value. Without a
 * ticket in time it is refused ({@link FastPathRefusedException}) and the client uses an ordinary transaction. Reads of a row wait while such a write is between its ticket and its visibility ({@link InFlightRows}).
 * Load it on the tables the client uses, beside {@link SibylGcCoprocessor} (the same jar).
 */
public final class SibylFastPathCoprocessor implements RegionCoprocessor, RegionObserver {
    private static final Logger LOG = LoggerFactory.getLogger(SibylFastPathCoprocessor.class);
    /** Set on a marked put once its row is registered in flight, so that the post hook releases it once. */
    private static final String IN_FLIGHT = "sibyl.fast-path.in-flight";

    private volatile OracleLink link;
    private volatile Region region;
    private volatile GcSettings settings;
    private byte[] table = new byte[0];
    private final InFlightRows inFlight = new InFlightRows();

    @Override
    public Optional<RegionObserver> getRegionObserver() {
        return Optional.of(this);
    }

    @Override
    public void start(CoprocessorEnvironment env) {
        RegionCoprocessorEnvironment regionEnv = CoprocessorStart.userRegion(env);
        if (regionEnv == null) {
            return;
        }
        region = regionEnv.getRegion();
        table = region.getRegionInfo().getTable().getName();
        CoprocessorStart.configure(regionEnv, SibylFastPathCoprocessor.class, LOG,
                "single-row transactions of {} take the ordinary path: {}", configured -> {
                    settings = configured.settings();
                    link = configured.acquireLink();
                });
    }

    @Override
    public void stop(CoprocessorEnvironment env) {
        if (link != null) {
            link.release();
            link = null;
        }
    }

    @Override
    public void preBatchMutate(ObserverContext<RegionCoprocessorEnvironment> ctx,
                               MiniBatchOperationInProgress<Mutation> batch) throws IOException {
        for (int i = 0; i < batch.size(); i++) {
            Mutation m = batch.getOperation(i);
            if (FastPathRequest.isMarked(m) && m instanceof Put put) {
                commitOnItsOwn(put); // increments and appends were done in their pre hooks
            }
        }
    }

    /** Under the row lock HBase holds for the batch: checks the row, takes a ticket, versions every cell. */
    private void commitOnItsOwn(Put put) throws IOException {
        long version = admit(put, false).version();
        for (List<Cell> cells : put.getFamilyCellMap().values()) {
            for (Cell c : cells) {
                PrivateCellUtil.setTimestamp(c, version);
            }
        }
    }

    /** A marked mutation let through: its version, and the row's versions and the replica that judges them. */
    private record Admitted(long version, List<Cell> rowVersions, CommitReplica replica) {
    }

    /** Checks the row of {@code m} (locked) and takes its ticket; {@link #release} ends what this starts. */
    private Admitted admit(Mutation m, boolean readModifyWrite) throws IOException {
        OracleLink l = link;
        if (l == null) {
            throw new FastPathRefusedException("the fast path of " + region.getRegionInfo().getEncodedName()
                    + " has no connection to the status oracle");
        }
        byte[] row = m.getRow();
        inFlight.add(row);
        m.setAttribute(IN_FLIGHT, row);
        try {
            CompletableFuture<OracleLink.Ticket> pending = l.ticket(new long[] {RowIds.of(table, row)},
                    new long[] {RowIds.granule(table, RowIds.prefixOf(row)), RowIds.tableGranule(table)});
            // The row is locked: what is read now is what is there when the ticket comes, so both go together.
            List<Cell> versions = readModifyWrite ? versions(m) : List.of();
            OracleLink.Ticket ticket = await(l, pending);
            return new Admitted(Timestamps.selfCommittedVersion(ticket.ticket()), versions, ticket.replica());
        } catch (IOException | RuntimeException e) {
            release(m);
            throw e;
        }
    }

    /**
     * The versions of the columns a read-modify-write reads, past the coprocessors: this write is in flight on the
     * row, and a read through them would wait for it.
     */
    private List<Cell> versions(Mutation m) throws IOException {
        Get get = new Get(m.getRow()).readAllVersions();
        for (Map.Entry<byte[], List<Cell>> f : m.getFamilyCellMap().entrySet()) {
            for (Cell c : f.getValue()) {
                get.addColumn(f.getKey(), CellUtil.cloneQualifier(c));
            }
        }
        if (region instanceof HRegion h) {
            return h.get(get, false);
        }
        List<Cell> cells = region.get(get).listCells();
        return cells == null ? List.of() : cells;
    }

    /**
     * A marked increment is done here, before HBase would compute one from whatever version is newest: under the
     * row lock, checked and ticketed as a put is, from the newest committed values, written as a put at the
     * fast-path version; HBase then skips its own (bypass) and answers with what was written.
     */
    @Override
    public Result preIncrement(ObserverContext<RegionCoprocessorEnvironment> ctx, Increment increment)
            throws IOException {
        if (!FastPathRequest.isMarked(increment)) {
            return null;
        }
        Result written = readModifyWrite(increment, true);
        ctx.bypass();
        return written;
    }

    /** As {@link #preIncrement}, for a marked append. */
    @Override
    public Result preAppend(ObserverContext<RegionCoprocessorEnvironment> ctx, Append append) throws IOException {
        if (!FastPathRequest.isMarked(append)) {
            return null;
        }
        Result written = readModifyWrite(append, false);
        ctx.bypass();
        return written;
    }

    private Result readModifyWrite(Mutation m, boolean increment) throws IOException {
        Region.RowLock lock = region.getRowLock(m.getRow(), false);
        try {
            Admitted a = admit(m, true);
            try {
                List<Cell> cells = new ArrayList<>();
                for (Map.Entry<byte[], List<Cell>> f : m.getFamilyCellMap().entrySet()) {
                    for (Cell c : f.getValue()) {
                        byte[] qualifier = CellUtil.cloneQualifier(c);
                        byte[] operand = CellUtil.cloneValue(c);
                        byte[] current = newestCommitted(a, f.getKey(), qualifier);
                        byte[] value;
                        if (increment) {
                            value = Bytes.toBytes((current == null ? 0 : Bytes.toLong(current)) + Bytes.toLong(operand));
                        } else {
                            value = current == null ? operand : Bytes.add(current, operand);
                        }
                        cells.add(CellBuilderFactory.create(CellBuilderType.DEEP_COPY).setRow(m.getRow())
                                .setFamily(f.getKey()).setQualifier(qualifier).setTimestamp(a.version())
                                .setType(Cell.Type.Put).setValue(value).build());
                    }
                }
                Put put = new Put(m.getRow());
                for (Cell c : cells) {
                    put.add(c);
                }
                put.setDurability(m.getDurability());
                region.put(put); // takes the row lock again (it is reentrant); visible when it returns
                cells.sort(CellComparator.getInstance());
                return FastPathRequest.answer(cells);
            } finally {
                release(m);
            }
        } finally {
            lock.release();
        }
    }

    /**
     * The column's newest value committed before the ticket (null if none, or deleted). A version whose writer the
     * replica, up to date below the ticket, cannot place is of a transaction running at the ticket, which the ticket
     * aborts at its commit (it wrote this row and started before): it is passed over. Only a writer in an aborted
     * range whose commits the replica lacks stays unknown, and then the fast path declines.
     */
    private static byte[] newestCommitted(Admitted a, byte[] family, byte[] qualifier)
            throws FastPathRefusedException {
        long tMax = a.replica().tMax();
        long decided = a.replica().highestTimestampApplied();
        for (Cell c : a.rowVersions()) { // newest first within a column
            if (!CellUtil.matchingColumn(c, family, qualifier)) {
                continue;
            }
            Visibility v = a.replica().committedBefore(c.getTimestamp(), tMax, decided);
            if (v == Visibility.VISIBLE) {
                return Tombstones.isTombstone(c) ? null : CellUtil.cloneValue(c);
            }
            if (v == Visibility.ASK_ORACLE && c.getTimestamp() < tMax) {
                throw new FastPathRefusedException("version " + c.getTimestamp() + " of "
                        + Bytes.toStringBinary(c.getRowArray(), c.getRowOffset(), c.getRowLength())
                        + " belongs to a transaction the region server cannot place");
            }
        }
        return null;
    }

    private OracleLink.Ticket await(OracleLink l, CompletableFuture<OracleLink.Ticket> pending) throws IOException {
        long timeout = settings.watermarkTimeoutMillis();
        try {
            return l.await(pending, TimeUnit.MILLISECONDS.toNanos(timeout));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new InterruptedIOException("interrupted while waiting for a fast-path ticket");
        } catch (ExecutionException e) {
            throw new FastPathRefusedException("no fast-path ticket from the status oracle: " + e.getCause());
        } catch (TimeoutException e) {
            throw new FastPathRefusedException("no fast-path ticket from the status oracle within " + timeout
                    + " ms (" + GcSettings.WATERMARK_TIMEOUT_MS + ")");
        }
    }

    @Override
    public void postBatchMutateIndispensably(ObserverContext<RegionCoprocessorEnvironment> ctx,
                                             MiniBatchOperationInProgress<Mutation> batch, boolean success) {
        for (int i = 0; i < batch.size(); i++) {
            release(batch.getOperation(i));
        }
    }

    /** Ends the in-flight registration of {@code m}, if it has one; HBase made the write visible, or dropped it. */
    private void release(Mutation m) {
        byte[] row = m.getAttribute(IN_FLIGHT);
        if (row != null) {
            m.setAttribute(IN_FLIGHT, null);
            inFlight.remove(row);
        }
    }

    @Override
    public void preGetOp(ObserverContext<RegionCoprocessorEnvironment> ctx, Get get, List<Cell> result)
            throws IOException {
        inFlight.awaitRow(get.getRow(), readWaitMillis());
    }

    @Override
    public void preScannerOpen(ObserverContext<RegionCoprocessorEnvironment> ctx, Scan scan) throws IOException {
        byte[] low = scan.isReversed() ? scan.getStopRow() : scan.getStartRow();
        byte[] high = scan.isReversed() ? scan.getStartRow() : scan.getStopRow();
        inFlight.awaitRange(low, high, readWaitMillis());
    }

    /** A write in flight waits at most this for its ticket, then for HBase's write-ahead log; readers a bit longer. */
    private long readWaitMillis() {
        GcSettings s = settings;
        return s == null ? 10_000 : 2 * s.watermarkTimeoutMillis() + 10_000;
    }
}
