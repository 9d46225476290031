package io.sibyl.client;

import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.TableNotFoundException;
import org.apache.hadoop.hbase.client.Append;
import org.apache.hadoop.hbase.client.CheckAndMutate;
import org.apache.hadoop.hbase.client.CheckAndMutateResult;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptor;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionConfiguration;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Increment;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Row;
import org.apache.hadoop.hbase.client.RowMutations;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptor;
import org.apache.hadoop.hbase.util.Bytes;

import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

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
 *
 * <p>This class checks arguments and brackets write operations; package-private helpers, one job each, do the rest
 * (docs/architecture.md, The HBase side).
 */
public class TTable implements Closeable {
    private final Connection connection;
    private final TableName name;
    private final TableFamilies families;
    private volatile boolean closed;
    private final RequestChecks requestChecks;
    private final SnapshotGets snapshotGets;
    private final BufferedMutations bufferedMutations;
    private final BatchActions batchActions;
    /** Single-row transactions: the fast path when the table offers it. */
    private final SingleRowWrites singleRow;
    /** HBase's configured write timeouts of the connection, which the writes of a transaction only ever lower. */
    private final int operationTimeoutMillis;
    private final int writeRpcTimeoutMillis;

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
        int maxCellSize = connection.getConfiguration().getInt(ConnectionConfiguration.MAX_KEYVALUE_SIZE_KEY,
                ConnectionConfiguration.MAX_KEYVALUE_SIZE_DEFAULT);
        this.families = new TableFamilies(connection, tableName);
        this.singleRow = new SingleRowWrites(tableName, connection);
        this.requestChecks = new RequestChecks(families, maxCellSize);
        this.snapshotGets = new SnapshotGets(connection, tableName, requestChecks);
        this.bufferedMutations = new BufferedMutations(this, requestChecks);
        this.batchActions = new BatchActions(this, requestChecks, bufferedMutations);
    }

    /** A column family descriptor fit for transactional data: every version kept, no TTL. */
    public static ColumnFamilyDescriptor familyDescriptor(String family) {
        return familyDescriptor(Bytes.toBytes(family));
    }

    /** A column family descriptor fit for transactional data: every version kept, no TTL. */
    public static ColumnFamilyDescriptor familyDescriptor(byte[] family) {
        return ColumnFamilyDescriptorBuilder.newBuilder(family).setMaxVersions(Integer.MAX_VALUE).build();
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
                TableWrites.durability(families.durability()));
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
        return snapshotGets.read(checkUsable(tx), gets);
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
        requestChecks.put(put);
        singleRow.put(tm, put, TableWrites.durability(families.durability()), tx -> {
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
        requestChecks.readModifyWrite(increment);
        return singleRow.readModifyWrite(tm, increment, TableWrites.durability(families.durability()),
                tx -> increment(tx, increment));
    }

    /** Appends to columns of one row as a transaction of its own, as {@link #increment(TransactionManager,
     * Increment)} does. Returns the new values. */
    public Result append(TransactionManager tm, Append append) throws IOException, RollbackException {
        Arguments.required(append, "append", "pass the Append to apply");
        requireManager(tm);
        requestChecks.readModifyWrite(append);
        return singleRow.readModifyWrite(tm, append, TableWrites.durability(families.durability()),
                tx -> append(tx, append));
    }

    /**
     * Deletes columns of one row as a transaction of its own, as {@link #put(TransactionManager, Put)} writes: a
     * delete of named columns takes the fast path when the table offers it; a delete of whole families or of the row
     * reads the row first, so it runs as an ordinary transaction.
     */
    public void delete(TransactionManager tm, Delete delete) throws IOException, RollbackException {
        Arguments.required(delete, "delete", "pass the Delete to apply");
        requireManager(tm);
        requestChecks.delete(delete);
        singleRow.delete(tm, delete, TableWrites.durability(families.durability()), tx -> {
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
        requestChecks.scan(scan);
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
            bufferedMutations.put(own, puts);
            return null;
        });
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
            bufferedMutations.delete(own, deletes);
            return null;
        });
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
        return underWrite(tx, own -> batchActions.batch(own, actions));
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
        return underWrite(tx, own -> bufferedMutations.incrementOrAppend(own, increment,
                increment.isReturnResults()));
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
        return underWrite(tx, own -> bufferedMutations.incrementOrAppend(own, append, append.isReturnResults()));
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
        return underWrite(tx, own -> batchActions.checkAndMutate(own, check));
    }

    /** Runs several {@link #checkAndMutate(Transaction, CheckAndMutate)} in order; one result each. */
    public List<CheckAndMutateResult> checkAndMutate(Transaction tx, List<CheckAndMutate> checks) throws IOException {
        Arguments.requiredElements(checks, "checkAndMutates", "pass the CheckAndMutates to run");
        return underWrite(tx, own -> batchActions.checkAndMutate(own, checks));
    }

    /** Closes this view; the transactions that used it are unaffected (their writes are in the transaction). */
    @Override
    public void close() {
        closed = true;
    }

    // ---- checks -------------------------------------------------------------------------------------------------

    /** The transaction as this table's helpers use it, after checking that the table and the transaction are open. */
    HBaseTransaction checkUsable(Transaction tx) {
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
}
