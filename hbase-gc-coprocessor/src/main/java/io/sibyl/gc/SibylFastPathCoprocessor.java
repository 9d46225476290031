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
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.CoprocessorEnvironment;
import org.apache.hadoop.hbase.PrivateCellUtil;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Mutation;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.coprocessor.ObserverContext;
import org.apache.hadoop.hbase.coprocessor.RegionCoprocessor;
import org.apache.hadoop.hbase.coprocessor.RegionCoprocessorEnvironment;
import org.apache.hadoop.hbase.coprocessor.RegionObserver;
import org.apache.hadoop.hbase.regionserver.MiniBatchOperationInProgress;
import org.apache.hadoop.hbase.regionserver.Region;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hadoop.hbase.util.Pair;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * Region observer that commits single-row transactions in the region server, without the client's round trips to
 * the oracle (the fast path, docs/architecture.md). A put the client marks ({@link FastPathRequest}) is checked and
 * versioned under its row lock: the row must hold no version of a transaction whose outcome is unknown (else it is
 * refused with {@link FastPathRefusedException} and the client uses an ordinary transaction), the oracle hands out a
 * ticket that records the row as written, and every cell takes version ticket + 1, which marks it committed there and
 * then. Reads of a row wait while such a write is between its ticket and its visibility ({@link InFlightRows}).
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
    /** The mutation this handler thread admitted last, until HBase is done with it. */
    private final ThreadLocal<Admitted> admitted = new ThreadLocal<>();

    @Override
    public Optional<RegionObserver> getRegionObserver() {
        return Optional.of(this);
    }

    @Override
    public void start(CoprocessorEnvironment env) {
        if (!(env instanceof RegionCoprocessorEnvironment regionEnv)) {
            return;
        }
        region = regionEnv.getRegion();
        if (region.getRegionInfo().getTable().isSystemTable()) {
            return;
        }
        table = region.getRegionInfo().getTable().getName();
        try {
            Map<String, String> properties = SibylGcCoprocessor.tableProperties(region.getTableDescriptor(),
                    getClass().getName());
            settings = GcSettings.from(env.getConfiguration(), properties);
            link = OracleLink.acquire(GcSettings.oracleLookup(env.getConfiguration(), properties), settings);
        } catch (RuntimeException e) {
            // A coprocessor that throws here can abort the region server: refuse fast-path writes instead.
            LOG.error("single-row transactions of {} take the ordinary path: {}",
                    region.getRegionInfo().getEncodedName(), e.getMessage());
        }
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
                commitOnItsOwn(put); // increments and appends were admitted while HBase reckoned them
            }
        }
    }

    /** Under the row lock HBase holds for the batch: checks the row, takes a ticket, versions every cell. */
    private void commitOnItsOwn(Put put) throws IOException {
        long version = admit(put).version();
        for (List<Cell> cells : put.getFamilyCellMap().values()) {
            for (Cell c : cells) {
                PrivateCellUtil.setTimestamp(c, version);
            }
        }
    }

    /** A marked mutation let through: its version, and the row's versions and the replica that judges them. */
    private record Admitted(Mutation mutation, long version, List<Cell> rowVersions, CommitReplica replica) {
    }

    /**
     * Checks the row of {@code m} and takes its ticket, once per mutation (an increment of several families comes
     * here once per family, on one thread, under the same row lock).
     */
    private Admitted admit(Mutation m) throws IOException {
        Admitted earlier = admitted.get();
        if (earlier != null && earlier.mutation() == m) {
            return earlier;
        }
        OracleLink l = link;
        if (l == null) {
            throw new FastPathRefusedException("the fast path of " + region.getRegionInfo().getEncodedName()
                    + " has no connection to the status oracle");
        }
        byte[] row = m.getRow();
        // Read before registering the row in flight: this read would otherwise wait for the write itself.
        List<Cell> versions = region.get(new Get(row).readAllVersions()).listCells();
        inFlight.add(row);
        m.setAttribute(IN_FLIGHT, row);
        try {
            OracleLink.Ticket ticket = awaitTicket(l, row);
            checkNoWriterUndecided(versions, ticket.replica(), row);
            Admitted a = new Admitted(m, Timestamps.selfCommittedVersion(ticket.ticket()),
                    versions == null ? List.of() : versions, ticket.replica());
            admitted.set(a);
            return a;
        } catch (IOException | RuntimeException e) {
            release(m);
            throw e;
        }
    }

    @Override
    public List<Pair<Cell, Cell>> postIncrementBeforeWAL(ObserverContext<RegionCoprocessorEnvironment> ctx,
                                                         Mutation mutation, List<Pair<Cell, Cell>> cellPairs)
            throws IOException {
        return FastPathRequest.isMarked(mutation) ? reckon(mutation, cellPairs, true) : cellPairs;
    }

    @Override
    public List<Pair<Cell, Cell>> postAppendBeforeWAL(ObserverContext<RegionCoprocessorEnvironment> ctx,
                                                      Mutation mutation, List<Pair<Cell, Cell>> cellPairs)
            throws IOException {
        return FastPathRequest.isMarked(mutation) ? reckon(mutation, cellPairs, false) : cellPairs;
    }

    /**
     * Replaces what HBase computed from the newest versions of the columns, whoever wrote them, with what the
     * newest committed ones give, at the fast-path version (the cells written and returned to the client).
     */
    private List<Pair<Cell, Cell>> reckon(Mutation m, List<Pair<Cell, Cell>> pairs, boolean increment)
            throws IOException {
        Admitted a = admit(m);
        List<Pair<Cell, Cell>> out = new ArrayList<>(pairs.size());
        for (Pair<Cell, Cell> p : pairs) {
            Cell computed = p.getSecond();
            byte[] family = CellUtil.cloneFamily(computed);
            byte[] qualifier = CellUtil.cloneQualifier(computed);
            byte[] operand = operand(m, family, qualifier);
            byte[] current = newestCommitted(a, family, qualifier);
            byte[] value;
            if (increment) {
                long base = current == null ? 0 : Bytes.toLong(current);
                value = Bytes.toBytes(base + Bytes.toLong(operand));
            } else {
                value = current == null ? operand : Bytes.add(current, operand);
            }
            out.add(new Pair<>(p.getFirst(), CellBuilderFactory.create(CellBuilderType.DEEP_COPY)
                    .setRow(m.getRow()).setFamily(family).setQualifier(qualifier).setTimestamp(a.version())
                    .setType(Cell.Type.Put).setValue(value).build()));
        }
        return out;
    }

    /** The increment or appended bytes the client sent for one column. */
    private static byte[] operand(Mutation m, byte[] family, byte[] qualifier) throws IOException {
        for (Cell c : m.getFamilyCellMap().getOrDefault(family, List.of())) {
            if (CellUtil.matchingQualifier(c, qualifier)) {
                return CellUtil.cloneValue(c);
            }
        }
        throw new IOException("no operand for column " + Bytes.toStringBinary(family) + ":"
                + Bytes.toStringBinary(qualifier));
    }

    /** The column's newest committed value (null if none, or deleted), judged as {@link #admit} left the row. */
    private static byte[] newestCommitted(Admitted a, byte[] family, byte[] qualifier) {
        long tMax = a.replica().tMax();
        long decided = a.replica().highestTimestampApplied();
        for (Cell c : a.rowVersions()) { // newest first within a column
            if (!CellUtil.matchingColumn(c, family, qualifier)) {
                continue;
            }
            if (a.replica().committedBefore(c.getTimestamp(), tMax, decided) == Visibility.VISIBLE) {
                return Tombstones.isTombstone(c) ? null : CellUtil.cloneValue(c);
            }
        }
        return null;
    }

    private OracleLink.Ticket awaitTicket(OracleLink l, byte[] row) throws IOException {
        long[] rowIds = {RowIds.of(table, row)};
        long[] granules = {RowIds.granule(table, RowIds.prefixOf(row)), RowIds.tableGranule(table)};
        long timeout = settings.watermarkTimeoutMillis();
        try {
            return l.ticket(rowIds, granules).get(timeout, TimeUnit.MILLISECONDS);
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

    /**
     * Refuses if the row holds a version of an ordinary transaction that is running or whose outcome the replica
     * has not learnt: a concurrent writer of the row, so one of the two must not commit. Aborted writers do not count,
     * committed ones are below the ticket (their commit was decided before it, as the replica knows it after the
     * ticket's reply).
     */
    private static void checkNoWriterUndecided(List<Cell> versions, CommitReplica replica, byte[] row)
            throws FastPathRefusedException {
        if (versions == null) {
            return;
        }
        long tMax = replica.tMax();
        long decided = replica.highestTimestampApplied();
        for (Cell c : versions) {
            long writer = c.getTimestamp();
            if (writer >= tMax && replica.committedBefore(writer, tMax, decided) == Visibility.ASK_ORACLE) {
                throw new FastPathRefusedException("row " + Bytes.toStringBinary(row)
                        + " holds a version of transaction " + writer + ", whose outcome is not known yet");
            }
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
        Admitted a = admitted.get();
        if (a != null && a.mutation() == m) {
            admitted.remove();
        }
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
