package io.sibyl.client;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.HConstants;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.TableNotFoundException;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptor;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionConfiguration;
import org.apache.hadoop.hbase.client.Consistency;
import org.apache.hadoop.hbase.client.Append;
import org.apache.hadoop.hbase.client.CheckAndMutate;
import org.apache.hadoop.hbase.client.CheckAndMutateResult;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Durability;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Increment;
import org.apache.hadoop.hbase.client.Mutation;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Row;
import org.apache.hadoop.hbase.client.RowMutations;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptor;
import org.apache.hadoop.hbase.filter.IncompatibleFilterException;
import org.apache.hadoop.hbase.regionserver.NoSuchColumnFamilyException;
import org.apache.hadoop.hbase.security.visibility.VisibilityConstants;
import org.apache.hadoop.hbase.util.Bytes;

import java.io.Closeable;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.NavigableSet;
import java.util.TreeMap;
import java.util.TreeSet;

/**
 * A transactional view of one HBase table: HBase's own {@code Get}, {@code Put}, {@code Delete} and {@code Scan}
 * with a {@link Transaction} passed in. Reads see the transaction's snapshot plus its own writes; writes are
 * buffered in the transaction and reach HBase in batches, at the latest at commit.
 *
 * <p>{@code Increment}, {@code Append} and {@code CheckAndMutate} read in the snapshot and write like puts (a
 * concurrent writer of the row conflicts instead of a row lock serializing them). Not supported (rejected with an
 * explanation): user-set timestamps and time ranges, more than one version per column, raw scans. Filters run on the client, after snapshot resolution (docs/data-model.md).
 *
 * <p>A TTable may be shared by threads that each use their own transaction. The table's column families must keep
 * every version and have no TTL (create them with {@link #familyDescriptor}).
 */
public class TTable implements Closeable {
    private final Connection connection;
    private final TableName name;
    /** The column families as of the last look at the table's descriptor (replaced whole, never mutated). */
    private volatile NavigableSet<byte[]> families;
    /** Tables (with their durability) already logged about, so that opening one often logs once. */
    private static final java.util.Set<String> WARNED_DURABILITY = java.util.concurrent.ConcurrentHashMap.newKeySet();
    /** The table's durability as of the last look at its descriptor (from which a transaction's writes get theirs). */
    private volatile Durability durability = Durability.USE_DEFAULT;
    private volatile boolean closed;
    /** Single-row transactions: the fast path when the table offers it. */
    private final SingleRowWrites singleRow;
    /** HBase's configured write timeouts of the connection, which the writes of a transaction only ever lower. */
    private final int operationTimeoutMillis;
    private final int writeRpcTimeoutMillis;
    /** HBase's client-side limit on one cell's size ({@code hbase.client.keyvalue.maxsize}; 0 or less: none). */
    private final int maxCellSize;

    /**
     * Opens the transactional view of {@code tableName}.
     *
     * @throws TableNotFoundException if the table does not exist
     * @throws IllegalArgumentException if a column family cannot hold transactional data (one version, a TTL, or
     *                                  NEW_VERSION_BEHAVIOR)
     */
    public TTable(Connection connection, TableName tableName) throws IOException {
        Arguments.required(connection, "connection", "pass an open HBase Connection, e.g. tm.getConnection()");
        Arguments.required(tableName, "table name", "pass TableName.valueOf(\"...\")");
        this.connection = connection;
        this.name = tableName;
        this.operationTimeoutMillis = TableWrites.configuredOperationTimeoutMillis(connection.getConfiguration());
        this.writeRpcTimeoutMillis = TableWrites.configuredWriteRpcTimeoutMillis(connection.getConfiguration());
        this.maxCellSize = connection.getConfiguration().getInt(ConnectionConfiguration.MAX_KEYVALUE_SIZE_KEY,
                ConnectionConfiguration.MAX_KEYVALUE_SIZE_DEFAULT);
        this.families = openFamilies();
        this.singleRow = new SingleRowWrites(tableName, connection);
    }

    /** {@link #readFamilies()} for the constructor: a failure there is most often an HBase that cannot be reached. */
    private NavigableSet<byte[]> openFamilies() throws IOException {
        try {
            return readFamilies();
        } catch (TableNotFoundException | InterruptedIOException e) {
            throw e;
        } catch (IOException e) {
            // HBase's own text ("Zookeeper GET could not be completed in 10000 ms") names neither table nor cluster.
            Configuration conf = connection.getConfiguration();
            String port = conf.get(HConstants.ZOOKEEPER_CLIENT_PORT,
                    String.valueOf(HConstants.DEFAULT_ZOOKEEPER_CLIENT_PORT));
            throw new IOException("cannot open table " + name + ": HBase at ZooKeeper "
                    + conf.get(HConstants.ZOOKEEPER_QUORUM) + " (client port " + port + ") did not give its descriptor: "
                    + e.getMessage() + "; check that HBase runs and the client's hbase.zookeeper.quorum"
                    + " (hbase-site.xml)", e);
        }
    }

    /**
     * The table's column families, from its current descriptor, after checking that each can hold transactional
     * data.
     */
    private NavigableSet<byte[]> readFamilies() throws IOException {
        TableDescriptor descriptor;
        try (Table t = connection.getTable(name)) {
            descriptor = t.getDescriptor();
        } catch (TableNotFoundException e) {
            TableNotFoundException clear = new TableNotFoundException("table " + name + " does not exist; create"
                    + " it first (Admin.createTable) with families that keep all versions, e.g."
                    + " TTable.familyDescriptor(\"cf\")");
            clear.initCause(e);
            throw clear;
        }
        requireTransactionalFamilies(descriptor);
        Durability d = descriptor.getDurability();
        if ((d == Durability.SKIP_WAL || d == Durability.ASYNC_WAL) && WARNED_DURABILITY.add(name + "=" + d)) {
            TransactionManager.LOG.info("table {} has DURABILITY => {}: transactions write to it with SYNC_WAL all"
                    + " the same, since a region server crash must not lose part of a committed transaction (plain"
                    + " writes keep the table's durability)", name, d);
        }
        durability = d;
        NavigableSet<byte[]> found = new TreeSet<>(Bytes.BYTES_COMPARATOR);
        for (ColumnFamilyDescriptor f : descriptor.getColumnFamilies()) {
            found.add(f.getName());
            if (f.getMaxVersions() < Integer.MAX_VALUE / 2) {
                TransactionManager.LOG.warn("column family {} of {} keeps at most {} versions: a hot cell can lose the"
                        + " version an older snapshot needs; use Integer.MAX_VALUE", f.getNameAsString(), name,
                        f.getMaxVersions());
            }
        }
        return Collections.unmodifiableNavigableSet(found);
    }

    /**
     * Throws unless every column family of {@code descriptor} can hold transactional data (more than one version, no
     * TTL): a table that fails this cannot be opened as a {@code TTable}, so no transaction ever wrote to it.
     *
     * @throws IllegalArgumentException naming the family and what to change
     */
    static void requireTransactionalFamilies(TableDescriptor descriptor) {
        TableName tableName = descriptor.getTableName();
        for (ColumnFamilyDescriptor f : descriptor.getColumnFamilies()) {
            if (f.getMaxVersions() < 2) {
                throw new IllegalArgumentException("column family " + f.getNameAsString() + " of " + tableName
                        + " keeps " + f.getMaxVersions() + " version; transactions need every version: alter it with"
                        + " setMaxVersions(Integer.MAX_VALUE) (see TTable.familyDescriptor)");
            }
            if (f.getTimeToLive() != HConstants.FOREVER) {
                throw new IllegalArgumentException("column family " + f.getNameAsString() + " of " + tableName
                        + " has a TTL; cell timestamps are transaction timestamps, not wall-clock time, so HBase would"
                        + " expire them at once: remove the TTL");
            }
            if (f.isNewVersionBehavior()) {
                // There a delete marker hides only versions written before it: a write of an aborted transaction
                // that HBase applies late (a retried or stalled call) would outlive the clean-up's delete marker.
                throw new IllegalArgumentException("column family " + f.getNameAsString() + " of " + tableName
                        + " has NEW_VERSION_BEHAVIOR=true, under which a version written after its delete marker stays"
                        + " visible, so a late write of an aborted transaction could outlive its clean-up: alter it"
                        + " with setNewVersionBehavior(false)");
            }
        }
    }

    /**
     * True if some column family of {@code descriptor} could hold transactional data (more than one version, no TTL):
     * a table with none was never opened as a {@code TTable}, unless all its families were altered since.
     */
    static boolean mayHoldTransactionalData(TableDescriptor descriptor) {
        for (ColumnFamilyDescriptor f : descriptor.getColumnFamilies()) {
            if (f.getMaxVersions() >= 2 && f.getTimeToLive() == HConstants.FOREVER) {
                return true;
            }
        }
        return false;
    }

    /** A column family descriptor fit for transactional data: every version kept, no TTL. */
    public static ColumnFamilyDescriptor familyDescriptor(String family) {
        return familyDescriptor(Bytes.toBytes(family));
    }

    /** A column family descriptor fit for transactional data: every version kept, no TTL. */
    public static ColumnFamilyDescriptor familyDescriptor(byte[] family) {
        return org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder.newBuilder(family)
                .setMaxVersions(Integer.MAX_VALUE).build();
    }

    /** The HBase table this {@code TTable} reads and writes. */
    public TableName getName() {
        return name;
    }

    /** The table's current descriptor, from HBase (as {@link org.apache.hadoop.hbase.client.Table#getDescriptor()}). */
    public TableDescriptor getDescriptor() throws IOException {
        try (Table t = connection.getTable(name)) {
            return t.getDescriptor();
        }
    }

    Connection connection() {
        return connection;
    }

    /** A new, empty buffer of one transaction's writes to this table. */
    TableWrites newWrites() {
        return new TableWrites(name, connection, operationTimeoutMillis, writeRpcTimeoutMillis,
                TableWrites.durability(durability));
    }

    // ---- reads --------------------------------------------------------------------------------------------------

    /** Reads one row in the transaction's snapshot, with its own writes. Empty result if nothing is visible. */
    public Result get(Transaction tx, Get get) throws IOException {
        Arguments.required(get, "get", "pass the Get to read");
        return get(tx, Collections.singletonList(get))[0];
    }

    /** Reads several rows in one batch (one HBase multi-get, plus one per round of deeper version fetches). */
    public Result[] get(Transaction tx, List<Get> gets) throws IOException {
        Arguments.requiredElements(gets, "gets", "pass the Gets to read");
        HBaseTransaction own = checkUsable(tx);
        long ts = own.getStartTimestamp();
        int nv = own.manager().settings().readVersions();
        List<Get> raw = new ArrayList<>(gets.size());
        for (Get g : gets) {
            validate(g);
            own.rowRead(getName().getName(), g.getRow());
            Get r = new Get(g);
            r.setFilter(null);
            r.setTimeRange(0, ts + 1);
            r.readVersions(nv);
            r.setMaxResultsPerColumnFamily(-1);
            r.setRowOffsetPerColumnFamily(0);
            r.setCheckExistenceOnly(false);
            raw.add(r);
        }
        Result[] out = new Result[gets.size()];
        // The transaction's own buffered writes are copied before HBase is read: a flush by another thread (a put
        // filling the buffer, a commit) moves them from the buffer to HBase, and a read that fetched from HBase first
        // and looked at the buffer after would find them in neither. Copied first, they are in the copy or, if sent
        // before the copy, already in HBase when it is read (a flush holds the transaction until they are).
        List<NavigableMap<byte[], NavigableMap<byte[], byte[]>>> ownWrites = new ArrayList<>(gets.size());
        for (Get g : gets) {
            ownWrites.add(own.writes().bufferedRow(name, g.getRow()));
        }
        List<List<Cell>> resolved;
        try (Table t = connection.getTable(name)) {
            Result[] fetched = raw.size() == 1 ? new Result[] {t.get(raw.get(0))} : t.get(raw);
            own.snapshot().checkReadable();
            SnapshotReader reader = new SnapshotReader(own.snapshot(), t, nv);
            for (int i = 0; i < out.length; i++) {
                Get g = gets.get(i);
                if (g.getFilter() == null && g.getMaxResultsPerColumnFamily() < 0
                        && g.getRowOffsetPerColumnFamily() <= 0 && !g.isCheckExistenceOnly()
                        && reader.isAlreadySnapshot(fetched[i]) && ownWrites.get(i) == null) {
                    out[i] = fetched[i]; // fast path: HBase's own result is the snapshot
                    fetched[i] = null;
                }
            }
            resolved = reader.resolve(fetched);
        } catch (IOException e) {
            Interrupts.keepInterrupt(e); // HBase cleared the interrupt flag it turned into InterruptedIOException
            throw e;
        }
        for (int i = 0; i < out.length; i++) {
            if (out[i] != null) {
                continue;
            }
            Get g = gets.get(i);
            List<Cell> cells = SnapshotReader.overlay(resolved.get(i), g.getRow(), ownWrites.get(i), g.getFamilyMap(),
                    ts);
            cells = new ClientSideFilter(g.getFilter(), g.getMaxResultsPerColumnFamily(),
                    g.getRowOffsetPerColumnFamily()).apply(cells);
            if (g.isCheckExistenceOnly()) {
                out[i] = Result.create((List<Cell>) null, cells != null);
            } else {
                out[i] = cells == null ? Result.create(Collections.emptyList()) : Result.create(cells);
            }
        }
        own.checkResolvedInTime(); // finished, ending or too old meanwhile: the snapshot may have shifted
        return out;
    }

    // ---- single-row transactions -----------------------------------------------------------------------------

    /**
     * Writes one row as a transaction of its own and returns once it committed. When the table loads the fast-path
     * coprocessor ({@code io.sibyl.gc.SibylFastPathCoprocessor}), the row's region server commits it, with no round
     * trip between this client and the oracle; otherwise, or when the region server declines (a concurrent writer of
     * the row), it runs as an ordinary transaction, retried on conflicts as {@link TransactionManager#run} does.
     * Either way it has snapshot isolation with every other transaction (docs/user-guide.md, Fast paths).
     *
     * @throws RollbackException if, on the ordinary path, it kept conflicting until the retries were used up
     */
    public void put(TransactionManager tm, Put put) throws IOException, RollbackException {
        Arguments.required(put, "put", "pass the Put to write");
        requireManager(tm);
        validate(put);
        singleRow.put(tm, put, TableWrites.durability(durability), tx -> {
            put(tx, put);
            return null;
        });
    }

    /**
     * Increments columns of one row as a transaction of its own, as {@link #put(TransactionManager, Put)} writes;
     * on the fast path the region server reads the committed values under the row lock. Returns the new values.
     */
    public Result increment(TransactionManager tm, Increment increment) throws IOException, RollbackException {
        Arguments.required(increment, "increment", "pass the Increment to apply");
        requireManager(tm);
        validateReadModifyWrite(increment);
        return singleRow.readModifyWrite(tm, increment, TableWrites.durability(durability),
                tx -> increment(tx, increment));
    }

    /** Appends to columns of one row as a transaction of its own, as {@link #increment(TransactionManager,
     * Increment)} does. Returns the new values. */
    public Result append(TransactionManager tm, Append append) throws IOException, RollbackException {
        Arguments.required(append, "append", "pass the Append to apply");
        requireManager(tm);
        validateReadModifyWrite(append);
        return singleRow.readModifyWrite(tm, append, TableWrites.durability(durability), tx -> append(tx, append));
    }

    /**
     * Deletes columns of one row as a transaction of its own, as {@link #put(TransactionManager, Put)} writes: a
     * delete of named columns takes the fast path when the table offers it; a delete of whole families or of the row
     * reads the row first, so it runs as an ordinary transaction.
     */
    public void delete(TransactionManager tm, Delete delete) throws IOException, RollbackException {
        Arguments.required(delete, "delete", "pass the Delete to apply");
        requireManager(tm);
        validate(delete);
        Put tombstones = new Put(delete.getRow());
        boolean namedColumnsOnly = true;
        for (Map.Entry<byte[], List<Cell>> f : delete.getFamilyCellMap().entrySet()) {
            for (Cell c : f.getValue()) {
                namedColumnsOnly &= c.getType() != Cell.Type.DeleteFamily;
                tombstones.addColumn(f.getKey(), CellUtil.cloneQualifier(c), Tombstones.VALUE);
            }
        }
        if (!namedColumnsOnly || tombstones.isEmpty()) {
            SingleRowWrites.runOrdinary(tm, tx -> {
                delete(tx, delete);
                return null;
            });
            return;
        }
        singleRow.put(tm, tombstones, TableWrites.durability(durability), tx -> {
            delete(tx, delete);
            return null;
        });
    }

    /**
     * True if the table loads the fast-path coprocessor, so that {@link #put(TransactionManager, Put)} and the other
     * single-row transactions are committed by its region servers (as of a look at its descriptor at most a minute
     * old).
     */
    public boolean offersFastPath() throws IOException {
        return singleRow.isServed();
    }

    private static void requireManager(TransactionManager tm) {
        if (tm == null) {
            throw new NullPointerException("transaction manager is null: pass the TransactionManager the single-row"
                    + " transaction runs with");
        }
    }

    /** Reads of the latest state before {@link #getLatest} takes a snapshot from the oracle instead. */
    private static final int LATEST_READ_ROUNDS = 3;

    /**
     * Reads one row as it is now, outside any transaction: the result reflects every transaction committed (and
     * acknowledged, to any client) before this call began, and is the row's state at one moment during the call
     * (linearizable). No round trip to the oracle when the local replica can tell the outcome of every version
     * fetched; otherwise one commit query for the versions it cannot (a writer that may have committed since the
     * replica last heard). Row-level write conflicts make this exact for one row; a consistent view of several rows is
     * {@link TransactionManager#beginReadOnly()}'s (bounded staleness) or {@link TransactionManager#begin()}'s.
     *
     * @throws IOException if HBase fails, or the oracle cannot be asked about a version the replica cannot place
     */
    public Result getLatest(TransactionManager tm, Get get) throws IOException {
        Arguments.required(get, "get", "pass the Get to read");
        if (tm == null) {
            throw new NullPointerException("transaction manager is null: pass the TransactionManager whose replica"
                    + " decides which versions are committed");
        }
        for (int round = 1; round <= LATEST_READ_ROUNDS; round++) {
            HBaseTransaction tx = tm.beginLatestRow();
            try {
                Result r = get(tx, get);
                if (!tx.snapshot().sawCommitDuringRead()) {
                    return r;
                }
                // A writer the oracle confirmed may have overwritten what was fetched before it committed; the
                // oracle's answer brought its commit into the replica, so the next round takes its final versions.
            } finally {
                tm.rollback(tx); // it wrote nothing: ends without the oracle
            }
        }
        // The row keeps being committed to while it is read: a snapshot from the oracle is exact at once.
        Transaction tx = tm.begin();
        try {
            return get(tx, get);
        } finally {
            tm.rollback(tx);
        }
    }

    /** True if the row (or the selected columns) has something visible to the transaction. */
    public boolean exists(Transaction tx, Get get) throws IOException {
        Arguments.required(get, "get", "pass the Get whose row to look for");
        Get g = new Get(get);
        g.setCheckExistenceOnly(true);
        return Boolean.TRUE.equals(get(tx, g).getExists());
    }

    /** Like {@link #exists(Transaction, Get)} for several rows, in one batch; the answers in the order of {@code gets}. */
    public boolean[] exists(Transaction tx, List<Get> gets) throws IOException {
        Arguments.requiredElements(gets, "gets", "pass the Gets whose rows to look for");
        List<Get> checks = new ArrayList<>(gets.size());
        for (Get get : gets) {
            checks.add(new Get(get).setCheckExistenceOnly(true));
        }
        Result[] results = get(tx, checks);
        boolean[] out = new boolean[results.length];
        for (int i = 0; i < results.length; i++) {
            out[i] = Boolean.TRUE.equals(results[i].getExists());
        }
        return out;
    }

    /** Scans every row of one column family, as {@link org.apache.hadoop.hbase.client.Table#getScanner(byte[])}. */
    public ResultScanner getScanner(Transaction tx, byte[] family) throws IOException {
        Arguments.required(family, "family", "pass the column family to scan");
        return getScanner(tx, new Scan().addFamily(family));
    }

    /** Scans one column, as {@link org.apache.hadoop.hbase.client.Table#getScanner(byte[], byte[])}. */
    public ResultScanner getScanner(Transaction tx, byte[] family, byte[] qualifier) throws IOException {
        Arguments.required(family, "family", "pass the column family to scan");
        Arguments.required(qualifier, "qualifier", "pass the column to scan");
        return getScanner(tx, new Scan().addColumn(family, qualifier));
    }

    /**
     * Scans the transaction's snapshot, merged with its own buffered writes. Column selection, row range, reversed
     * order, limit, caching and batching are honoured; the filter and per-family limits run on the client on the
     * resolved rows.
     */
    public ResultScanner getScanner(Transaction tx, Scan scan) throws IOException {
        Arguments.required(scan, "scan", "pass a Scan (new Scan() reads every row)");
        HBaseTransaction own = checkUsable(tx);
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
            checkFamily(f);
        }
        own.rangeScanned(getName().getName(), scan.getStartRow(), scan.getStopRow(), scan.isReversed());
        return new TransactionalScanner(this, own, scan);
    }

    // ---- writes -------------------------------------------------------------------------------------------------

    /** Buffers a put; its cells get the transaction's start timestamp as version. */
    public void put(Transaction tx, Put put) throws IOException {
        Arguments.required(put, "put", "pass the Put to write");
        put(tx, Collections.singletonList(put));
    }

    /** Buffers several puts; all are checked first, so a refused one leaves none of them buffered. */
    public void put(Transaction tx, List<Put> puts) throws IOException {
        Arguments.requiredElements(puts, "puts", "pass the Puts to write");
        underWrite(tx, own -> {
            putUnderway(own, puts);
            return null;
        });
    }

    private void putUnderway(HBaseTransaction tx, List<Put> puts) throws IOException {
        checkUsable(tx);
        for (Put p : puts) {
            validate(p);
        }
        TableWrites w = tx.writes().forTable(this);
        for (Put p : puts) {
            byte[] row = Arrays.copyOf(p.getRow(), p.getRow().length);
            for (Map.Entry<byte[], List<Cell>> f : p.getFamilyCellMap().entrySet()) {
                for (Cell c : f.getValue()) {
                    tx.writes().buffer(w, row, CellUtil.cloneFamily(c), CellUtil.cloneQualifier(c),
                            CellUtil.cloneValue(c));
                }
            }
        }
        tx.writes().flushIfFull();
    }

    /**
     * Transactionally deletes a row, families or columns: each column visible in the snapshot (or written by the
     * transaction) gets a tombstone at the transaction's version. {@code addColumn} and {@code addColumns} both delete
     * the column (a transaction sees one version). The row joins the write set even if nothing was visible.
     */
    public void delete(Transaction tx, Delete delete) throws IOException {
        Arguments.required(delete, "delete", "pass the Delete to apply");
        delete(tx, Collections.singletonList(delete));
    }

    /** Transactionally deletes several rows, families or columns, as {@link #delete(Transaction, Delete)} does. */
    public void delete(Transaction tx, List<Delete> deletes) throws IOException {
        Arguments.requiredElements(deletes, "deletes", "pass the Deletes to apply");
        underWrite(tx, own -> {
            deleteUnderway(own, deletes);
            return null;
        });
    }

    private void deleteUnderway(HBaseTransaction tx, List<Delete> deletes) throws IOException {
        checkUsable(tx);
        for (Delete d : deletes) {
            validate(d);
        }
        TableWrites w = tx.writes().forTable(this);
        for (Delete d : deletes) {
            byte[] row = Arrays.copyOf(d.getRow(), d.getRow().length);
            List<byte[][]> columns = new ArrayList<>();
            Get toRead = null;
            if (d.getFamilyCellMap().isEmpty()) {
                toRead = new Get(row); // whole row: every family
            } else {
                for (Map.Entry<byte[], List<Cell>> f : d.getFamilyCellMap().entrySet()) {
                    for (Cell c : f.getValue()) {
                        if (c.getType() == Cell.Type.DeleteFamily) {
                            if (toRead == null) {
                                toRead = new Get(row);
                            }
                            toRead.addFamily(CellUtil.cloneFamily(c));
                        } else {
                            columns.add(new byte[][] {CellUtil.cloneFamily(c), CellUtil.cloneQualifier(c)});
                        }
                    }
                }
            }
            if (toRead != null) {
                Cell[] visible = get(tx, toRead).rawCells();
                for (Cell c : visible == null ? new Cell[0] : visible) {
                    columns.add(new byte[][] {CellUtil.cloneFamily(c), CellUtil.cloneQualifier(c)});
                }
            }
            tx.writes().touchRow(w, row);
            for (byte[][] col : columns) {
                tx.writes().buffer(w, row, col[0], col[1], Tombstones.VALUE);
            }
        }
        tx.writes().flushIfFull();
    }

    /**
     * Applies the mutations of one row in their order, as {@code Table.mutateRow}: puts, deletes, increments and
     * appends, which commit or roll back with the rest of the transaction. All are checked before any is applied, so
     * a bad one changes nothing. Returns the new values of incremented and appended columns (empty if none).
     */
    public Result mutateRow(Transaction tx, RowMutations mutations) throws IOException {
        Arguments.required(mutations, "row mutations", "pass the RowMutations to apply");
        return batch(tx, List.of(mutations))[0];
    }

    /**
     * Runs gets, puts, deletes, increments, appends and {@link RowMutations} in the order of {@code actions} (HBase's
     * {@code batch} leaves the order open; here a get sees the writes listed before it), with consecutive gets, puts
     * or deletes sent together. Returns one result per action, as {@code Table.batch} does: a get's {@link Result},
     * an increment's or append's new values, an empty {@code Result} for a put or delete. Every action is checked
     * before any is applied, so a bad one changes nothing.
     */
    public Result[] batch(Transaction tx, List<? extends Row> actions) throws IOException {
        Arguments.requiredElements(actions, "actions", "pass the Puts, Deletes, Gets, Increments, Appends, RowMutations or CheckAndMutates to run");
        return underWrite(tx, own -> batchUnderway(own, actions));
    }

    private Result[] batchUnderway(HBaseTransaction tx, List<? extends Row> actions) throws IOException {
        checkUsable(tx);
        List<Row> flat = new ArrayList<>(actions.size());
        int[] owner = new int[actions.size() * 2 + 4];
        for (int i = 0; i < actions.size(); i++) {
            Row a = actions.get(i);
            List<? extends Row> parts = a instanceof RowMutations rm ? rm.getMutations() : List.of(a);
            for (Row part : parts) {
                if (!validateAction(part)) {
                    throw new IllegalArgumentException("a transactional batch takes Get, Put, Delete, Increment,"
                            + " Append and RowMutations; got " + (part == null ? "null"
                            : part.getClass().getSimpleName()) + " at index " + i
                            + (part instanceof CheckAndMutate ? " (use TTable.checkAndMutate)" : ""));
                }
                if (flat.size() == owner.length) {
                    owner = Arrays.copyOf(owner, owner.length * 2);
                }
                owner[flat.size()] = i;
                flat.add(part);
            }
        }
        Result[] out = new Result[actions.size()];
        Result none = Result.create(Collections.emptyList());
        boolean applied = false;
        try {
            for (int from = 0; from < flat.size(); ) {
                Row first = flat.get(from);
                if (first instanceof Increment || first instanceof Append) {
                    Result changed = readModifyWrite(tx, (Mutation) first);
                    applied = true;
                    out[owner[from]] = out[owner[from]] == null ? changed : merge(out[owner[from]], changed);
                    from++;
                    continue;
                }
                int to = from + 1;
                while (to < flat.size() && flat.get(to).getClass() == first.getClass()) {
                    to++;
                }
                List<Row> run = flat.subList(from, to);
                if (first instanceof Get) {
                    Result[] got = get(tx, castAll(run, Get.class));
                    for (int k = 0; k < got.length; k++) {
                        out[owner[from + k]] = got[k];
                    }
                } else {
                    applied = true;
                    if (first instanceof Put) {
                        put(tx, castAll(run, Put.class));
                    } else {
                        delete(tx, castAll(run, Delete.class));
                    }
                    for (int k = from; k < to; k++) {
                        if (out[owner[k]] == null) {
                            out[owner[k]] = none;
                        }
                    }
                }
                from = to;
            }
        } catch (IOException | RuntimeException e) {
            if (applied) {
                // Part of the actions joined the transaction: committing it would apply half a mutateRow.
                tx.writes().failPartlyApplied("a TTable.batch, mutateRow or checkAndMutate failed after part of its"
                        + " actions were applied", e);
            }
            throw e;
        }
        for (int i = 0; i < out.length; i++) {
            if (out[i] == null) {
                out[i] = none; // a RowMutations with nothing in it
            }
        }
        return out;
    }

    private static Result merge(Result a, Result b) {
        List<Cell> cells = new ArrayList<>();
        Collections.addAll(cells, a.rawCells());
        Collections.addAll(cells, b.rawCells());
        cells.sort(org.apache.hadoop.hbase.CellComparator.getInstance());
        return Result.create(cells);
    }

    // ---- read-modify-write ----------------------------------------------------------------------------------------

    /**
     * Adds to counters, as {@code Table.increment}: each column's value in the snapshot (with the transaction's own
     * writes; a missing column counts as 0) plus the amount is written at the transaction's version. A concurrent
     * transaction that writes the same row makes one of the two commits fail, so no increment is lost; a column
     * whose sum does not change (amount 0) is read, not written. Returns the new values, or an empty result if
     * {@code increment.setReturnResults(false)}.
     *
     * @throws org.apache.hadoop.hbase.DoNotRetryIOException if a column holds something other than an 8-byte long
     */
    public Result increment(Transaction tx, Increment increment) throws IOException {
        Arguments.required(increment, "increment", "pass the Increment to apply");
        return underWrite(tx, own -> incrementUnderway(own, increment));
    }

    private Result incrementUnderway(HBaseTransaction tx, Increment increment) throws IOException {
        checkUsable(tx);
        validateReadModifyWrite(increment);
        Result changed = readModifyWrite(tx, increment);
        return increment.isReturnResults() ? changed : Result.create(Collections.emptyList());
    }

    /** Adds {@code amount} to one counter column, as {@code Table.incrementColumnValue}; returns the new value. */
    public long incrementColumnValue(Transaction tx, byte[] row, byte[] family, byte[] qualifier, long amount)
            throws IOException {
        Arguments.required(row, "row", "pass the row of the counter");
        Arguments.required(family, "family", "pass the column family of the counter");
        Arguments.required(qualifier, "qualifier", "pass the column of the counter");
        Result r = increment(tx, new Increment(row).addColumn(family, qualifier, amount));
        return Bytes.toLong(r.getValue(family, qualifier));
    }

    /**
     * Appends bytes to columns, as {@code Table.append}: each column's value in the snapshot (own writes included;
     * missing counts as empty) followed by the given bytes is written at the transaction's version, with the same
     * conflict rule as {@link #increment}. Returns the new values, or an empty result if
     * {@code append.setReturnResults(false)}.
     */
    public Result append(Transaction tx, Append append) throws IOException {
        Arguments.required(append, "append", "pass the Append to apply");
        return underWrite(tx, own -> appendUnderway(own, append));
    }

    private Result appendUnderway(HBaseTransaction tx, Append append) throws IOException {
        checkUsable(tx);
        validateReadModifyWrite(append);
        Result changed = readModifyWrite(tx, append);
        return append.isReturnResults() ? changed : Result.create(Collections.emptyList());
    }

    /**
     * Applies a mutation if a condition on its row holds in the transaction's snapshot (own writes included), as
     * {@code Table.checkAndMutate}: a column compared with a value (HBase's meaning of the operators and of an empty
     * expected value) or a filter that must match the row. The action (put, delete, increment, append or
     * {@link RowMutations}) joins the transaction. Under snapshot isolation a check that fails writes nothing and so
     * conflicts with nothing; one that succeeds writes the checked row, so a concurrent transaction writing that row
     * cannot also commit.
     */
    public CheckAndMutateResult checkAndMutate(Transaction tx, CheckAndMutate check) throws IOException {
        Arguments.required(check, "checkAndMutate", "pass the CheckAndMutate to run");
        return underWrite(tx, own -> checkAndMutateUnderway(own, check));
    }

    private CheckAndMutateResult checkAndMutateUnderway(HBaseTransaction tx, CheckAndMutate check) throws IOException {
        checkUsable(tx);
        validate(check);
        boolean holds;
        if (check.hasFilter()) {
            holds = !get(tx, new Get(check.getRow()).setFilter(check.getFilter())).isEmpty();
        } else {
            Result column = get(tx, new Get(check.getRow()).addColumn(check.getFamily(), check.getQualifier()));
            holds = ReadModifyWrite.conditionHolds(check, column.rawCells());
        }
        if (!holds) {
            return new CheckAndMutateResult(false, null);
        }
        Row action = check.getAction();
        Result result = batch(tx, List.of(action))[0];
        // A success writes the checked row, even a no-op action.
        tx.writes().touchRow(tx.writes().forTable(this), check.getRow());
        // As HBase: values only from increments and appends, also inside a RowMutations (of only puts and deletes,
        // the result is null, not an empty Result).
        boolean returnsValues = action instanceof Increment || action instanceof Append
                || (action instanceof RowMutations rm && rm.getMutations().stream()
                        .anyMatch(m -> m instanceof Increment || m instanceof Append));
        return new CheckAndMutateResult(true, returnsValues ? result : null);
    }

    /** Runs several {@link #checkAndMutate(Transaction, CheckAndMutate)} in order; one result each. */
    public List<CheckAndMutateResult> checkAndMutate(Transaction tx, List<CheckAndMutate> checks) throws IOException {
        Arguments.requiredElements(checks, "checkAndMutates", "pass the CheckAndMutates to run");
        return underWrite(tx, own -> checkAndMutateUnderway(own, checks));
    }

    private List<CheckAndMutateResult> checkAndMutateUnderway(HBaseTransaction tx, List<CheckAndMutate> checks)
            throws IOException {
        checkUsable(tx);
        for (CheckAndMutate check : checks) {
            validate(check);
        }
        List<CheckAndMutateResult> out = new ArrayList<>(checks.size());
        for (CheckAndMutate check : checks) {
            out.add(checkAndMutate(tx, check));
        }
        return out;
    }

    /** Reads the columns of an Increment or Append, writes their new values, and returns them. */
    private Result readModifyWrite(Transaction tx, Mutation m) throws IOException {
        Result current = get(tx, ReadModifyWrite.readFor(m));
        ReadModifyWrite.NavigableColumns values = ReadModifyWrite.apply(m, current);
        Put changes = ReadModifyWrite.putOfChanges(m.getRow(), values, current);
        if (changes != null) {
            put(tx, changes);
        }
        return ReadModifyWrite.resultOf(m.getRow(), values, tx.getStartTimestamp());
    }

    private static <T> List<T> castAll(List<Row> rows, Class<T> type) {
        List<T> out = new ArrayList<>(rows.size());
        for (Row r : rows) {
            out.add(type.cast(r));
        }
        return out;
    }

    /** Closes this view; the transactions that used it are unaffected (their writes are in the transaction). */
    @Override
    public void close() {
        closed = true;
    }

    // ---- checks -------------------------------------------------------------------------------------------------

    private HBaseTransaction checkUsable(Transaction tx) {
        if (closed) {
            throw new IllegalStateException("this TTable for " + name + " is closed; open a new one");
        }
        if (connection.isClosed()) {
            // E.g. a TTable on another manager's connection, closed with that manager: a put would be buffered and
            // only the commit would fail, as WRITE_FAILED.
            throw new IllegalStateException("the HBase connection of this TTable for " + name + " is closed (with"
                    + " the TransactionManager that opened it?); open the TTable on a live connection");
        }
        HBaseTransaction own = HBaseTransaction.of(tx);
        own.checkRunning();
        return own;
    }

    private void checkFamily(byte[] family) throws IOException {
        if (!families.contains(family)) {
            // The table may have been altered since (Admin.addColumnFamily): a plain Table would use the new family.
            refreshFamilies();
        }
        if (!families.contains(family)) {
            throw new NoSuchColumnFamilyException("column family " + Bytes.toStringBinary(family) + " does not exist"
                    + " in table " + name + " (families: " + familyNames() + ")");
        }
    }

    private synchronized void refreshFamilies() throws IOException {
        families = readFamilies();
    }

    private String familyNames() {
        List<String> names = new ArrayList<>();
        for (byte[] f : families) {
            names.add(Bytes.toStringBinary(f));
        }
        return String.join(", ", names);
    }

    private void validate(Get g) throws IOException {
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
            checkFamily(f);
        }
    }

    private static IllegalArgumentException timelineRead(String what) {
        return new IllegalArgumentException("a transactional " + what + " reads the primary region only:"
                + " Consistency.TIMELINE may read a region replica that lags behind and misses versions the snapshot"
                + " includes; leave the consistency at STRONG");
    }

    private void validate(Put p) throws IOException {
        if (p.isEmpty()) {
            throw new IllegalArgumentException("no columns to insert in the Put for row "
                    + Bytes.toStringBinary(p.getRow()));
        }
        if (p.getTimestamp() != HConstants.LATEST_TIMESTAMP) {
            throw userTimestamp("Put", p.getRow());
        }
        refuseCellAttributes(p);
        for (Map.Entry<byte[], List<Cell>> f : p.getFamilyCellMap().entrySet()) {
            checkFamily(f.getKey());
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

    private void validate(Delete d) throws IOException {
        if (d.getTimestamp() != HConstants.LATEST_TIMESTAMP) {
            throw userTimestamp("Delete", d.getRow());
        }
        refuseCellAttributes(d);
        for (Map.Entry<byte[], List<Cell>> f : d.getFamilyCellMap().entrySet()) {
            checkFamily(f.getKey());
            for (Cell c : f.getValue()) {
                if (c.getType() == Cell.Type.DeleteFamilyVersion || c.getTimestamp() != HConstants.LATEST_TIMESTAMP) {
                    throw userTimestamp("Delete", d.getRow());
                }
            }
        }
    }

    /** Checks a get, put, delete, increment or append; false for any other kind of action. */
    private boolean validateAction(Row action) throws IOException {
        if (action instanceof Get g) {
            validate(g);
        } else if (action instanceof Put p) {
            validate(p);
        } else if (action instanceof Delete d) {
            validate(d);
        } else if (action instanceof Increment || action instanceof Append) {
            validateReadModifyWrite((Mutation) action);
        } else {
            return false;
        }
        return true;
    }

    private void validateReadModifyWrite(Mutation m) throws IOException {
        ReadModifyWrite.validate(m);
        refuseCellAttributes(m);
        for (byte[] f : m.getFamilyCellMap().keySet()) {
            checkFamily(f);
        }
    }

    private void validate(CheckAndMutate check) throws IOException {
        if (!check.getTimeRange().isAllTime()) {
            throw new IllegalArgumentException("a transactional CheckAndMutate checks the transaction's snapshot: a"
                    + " time range cannot be set (row " + Bytes.toStringBinary(check.getRow()) + ")");
        }
        if (!check.hasFilter()) {
            if (check.getCompareOp() == org.apache.hadoop.hbase.CompareOperator.NO_OP) {
                throw new IllegalArgumentException("CompareOperator.NO_OP is not a condition (row "
                        + Bytes.toStringBinary(check.getRow()) + ")");
            }
            checkFamily(check.getFamily());
        }
        Row action = check.getAction();
        List<? extends Row> parts = action instanceof RowMutations rm ? rm.getMutations() : List.of(action);
        for (Row part : parts) {
            if (part instanceof Get || !validateAction(part)) {
                throw new IllegalArgumentException("a CheckAndMutate's action must be a Put, Delete, Increment, Append"
                        + " or RowMutations, not " + (part == null ? "null" : part.getClass().getSimpleName()));
            }
        }
    }

    /** One write operation of a transaction, for {@link #underWrite}. */
    private interface WriteOperation<T> {
        T run(HBaseTransaction tx) throws IOException;
    }

    /**
     * Runs {@code operation} as one write operation of {@code tx}: operations of one transaction shared by threads
     * run one at a time, and a commit waits for the one under way and refuses later ones (HBaseTransaction.beginWrite).
     */
    private <T> T underWrite(Transaction tx, WriteOperation<T> operation) throws IOException {
        HBaseTransaction own = checkUsable(tx);
        own.beginWrite();
        try {
            return operation.run(own);
        } finally {
            own.endWrite();
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

    /** Buffered rows of {@code tx} in this table within the scan's range, in scan order (a copy), or null. */
    NavigableMap<byte[], NavigableMap<byte[], NavigableMap<byte[], byte[]>>> bufferedRowsFor(HBaseTransaction tx,
                                                                                             Scan scan) {
        NavigableMap<byte[], NavigableMap<byte[], NavigableMap<byte[], byte[]>>> rows = tx.writes().bufferedRows(name);
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
}
