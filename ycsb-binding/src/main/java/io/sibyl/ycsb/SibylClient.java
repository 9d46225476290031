package io.sibyl.ycsb;

import io.sibyl.client.CommitOutcomeUnknownException;
import io.sibyl.client.RollbackException;
import io.sibyl.client.SnapshotExpiredException;
import io.sibyl.client.TTable;
import io.sibyl.client.Transaction;
import io.sibyl.client.TransactionManager;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.TableNotFoundException;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptor;
import org.apache.hadoop.hbase.util.Bytes;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import site.ycsb.ByteArrayByteIterator;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.Set;
import java.util.Vector;
import java.util.concurrent.atomic.AtomicLong;

/**
 * YCSB binding for Sibyl: each YCSB operation runs on {@link TTable} as its own snapshot-isolation transaction
 * (begin, operation, commit; reads are read-only transactions), or inside the {@link TransactionScope} open on the
 * calling thread. A rollback is returned as the {@link Outcomes} status that names its cause, never as OK.
 * Properties: see {@link BindingSettings} and docs/ycsb.md.
 */
public class SibylClient extends DB {
    private static final Logger LOG = LoggerFactory.getLogger(SibylClient.class);
    /** Errors beyond this many are counted, not logged with their stack trace. */
    private static final long LOGGED_ERRORS = 5;
    private static final AtomicLong ERRORS = new AtomicLong();

    private final Map<String, TTable> tables = new HashMap<>();
    private TransactionManager manager;
    private byte[] family;
    /** Reads outside a transaction scope use TTable.getLatest ({@value BindingSettings#READS}). */
    private boolean latestReads;
    /** Scans outside a scope run in read-only transactions from the replica ({@value BindingSettings#SCANS}). */
    private boolean readOnlyScans;
    /** Writes outside a scope take the fast path where tables offer it ({@value BindingSettings#WRITES}). */
    private boolean singleRowWrites;

    /** One YCSB operation on one table within a transaction. */
    @FunctionalInterface
    private interface Operation {
        Status apply(TTable table, Transaction tx) throws IOException;
    }

    @Override
    public void init() throws DBException {
        BindingSettings settings;
        try {
            settings = BindingSettings.from(getProperties());
        } catch (IllegalArgumentException e) {
            throw failedInit(e.getMessage(), e);
        }
        family = Bytes.toBytes(settings.family());
        latestReads = settings.latestReads();
        readOnlyScans = settings.readOnlyScans();
        singleRowWrites = settings.singleRowWrites();
        try {
            manager = SharedManager.acquire(settings.connectionKey(), settings.hbase());
        } catch (IOException | RuntimeException e) {
            throw failedInit("cannot start the Sibyl client (HBase at " + settings.hbaseLocation() + ", status oracle"
                    + " at " + settings.oracleLocation() + "): " + e + " (set -p hbase.zookeeper.quorum=..."
                    + " -p hbase.zookeeper.property.clientPort=... and -p sibyl.oracle.address=host:port or"
                    + " -p sibyl.oracle.zk.connect=...)", e);
        }
        TableDescriptor descriptor = null;
        try {
            descriptor = checkFamily(settings);
            table(settings.table());
        } catch (TableNotFoundException e) {
            release();
            throw failedInit("table '" + settings.table() + "' does not exist in HBase at " + settings.hbaseLocation()
                    + ". Create it with a column family that keeps every version and has no TTL, e.g. in the HBase"
                    + " shell: create '" + settings.table() + "', {NAME => '" + settings.family()
                    + "', VERSIONS => 2147483647}; or name an existing table with -p table=...", e);
        } catch (IllegalArgumentException e) {
            release();
            // TTable's refusal of a family unfit for transactions names the Java API; YCSB users have the shell.
            String fix = descriptor == null ? null : ShellFamilyFix.of(descriptor);
            throw failedInit(e.getMessage() + (fix == null ? "" : "; " + fix), e);
        } catch (IOException | RuntimeException e) {
            release();
            throw failedInit("cannot open table '" + settings.table() + "' in HBase at " + settings.hbaseLocation()
                    + ": " + e.getMessage() + " (is HBase running there? set -p hbase.zookeeper.quorum=..."
                    + " -p hbase.zookeeper.property.clientPort=...)", e);
        }
    }

    /** The table's descriptor, once it is known to have the family of the YCSB fields. */
    private TableDescriptor checkFamily(BindingSettings settings) throws IOException {
        try (Table t = manager.getConnection().getTable(TableName.valueOf(settings.table()))) {
            TableDescriptor d = t.getDescriptor();
            if (!d.hasColumnFamily(family)) {
                throw new IllegalArgumentException("table '" + settings.table() + "' has no column family '"
                        + settings.family() + "' (it has " + d.getColumnFamilyNames().stream().map(Bytes::toString)
                        .sorted().toList() + "; set -p " + BindingSettings.COLUMN_FAMILY + "=...)");
            }
            return d;
        }
    }

    private static DBException failedInit(String message, Exception cause) {
        FailingExit.fail("SibylClient: " + message);
        return new DBException("SibylClient: " + message, cause);
    }

    @Override
    public void cleanup() {
        tables.values().forEach(TTable::close);
        tables.clear();
        release();
    }

    private void release() {
        if (manager != null) {
            manager = null;
            SharedManager.release();
        }
    }

    private TTable table(String name) throws IOException {
        TTable t = tables.get(name);
        if (t == null) {
            t = new TTable(manager.getConnection(), TableName.valueOf(name));
            tables.put(name, t);
        }
        return t;
    }

    @Override
    public Status read(String table, String key, Set<String> fields, Map<String, ByteIterator> result) {
        Get get = new Get(Bytes.toBytes(key));
        if (fields == null) {
            get.addFamily(family);
        } else {
            fields.forEach(f -> get.addColumn(family, Bytes.toBytes(f)));
        }
        if (latestReads && manager != null && TransactionScope.current() == null) {
            // The fast path: one row as of now, linearizable, no begin round trip.
            try {
                return found(table(table).getLatest(manager, get), result);
            } catch (IOException | RuntimeException e) {
                return error("read of table " + table + " failed", e);
            }
        }
        return run(table, false, (t, tx) -> found(t.get(tx, get), result));
    }

    private Status found(Result r, Map<String, ByteIterator> result) {
        if (r.isEmpty()) {
            return Status.NOT_FOUND;
        }
        copyFields(r, result);
        return Status.OK;
    }

    @Override
    public Status scan(String table, String startkey, int recordcount, Set<String> fields,
                       Vector<HashMap<String, ByteIterator>> result) {
        return run(table, readOnlyScans, (t, tx) -> {
            Scan scan = new Scan().withStartRow(Bytes.toBytes(startkey)).setLimit(recordcount)
                    .setCaching(Math.max(1, Math.min(recordcount, 1000)));
            if (fields == null) {
                scan.addFamily(family);
            } else {
                fields.forEach(f -> scan.addColumn(family, Bytes.toBytes(f)));
            }
            try (ResultScanner scanner = t.getScanner(tx, scan)) {
                for (Result r : scanner) {
                    HashMap<String, ByteIterator> row = new HashMap<>();
                    copyFields(r, row);
                    result.add(row);
                }
            }
            return Status.OK;
        });
    }

    @Override
    public Status update(String table, String key, Map<String, ByteIterator> values) {
        return write(table, key, values);
    }

    @Override
    public Status insert(String table, String key, Map<String, ByteIterator> values) {
        return write(table, key, values);
    }

    /** A put of one row: the region server commits it where the table offers the fast path, outside a scope. */
    private Status write(String table, String key, Map<String, ByteIterator> values) {
        if (singleRowWrites && manager != null && TransactionScope.current() == null) {
            try {
                TTable t = table(table);
                if (t.offersFastPath()) {
                    t.put(manager, put(key, values));
                    return Status.OK;
                }
            } catch (RollbackException e) {
                return Outcomes.of(e);
            } catch (IOException | RuntimeException e) {
                return error("write to table " + table + " failed", e);
            }
        }
        return run(table, (t, tx) -> {
            t.put(tx, put(key, values));
            return Status.OK;
        });
    }

    @Override
    public Status delete(String table, String key) {
        return run(table, (t, tx) -> {
            t.delete(tx, new Delete(Bytes.toBytes(key)));
            return Status.OK;
        });
    }

    private Put put(String key, Map<String, ByteIterator> values) {
        Put p = new Put(Bytes.toBytes(key));
        values.forEach((field, value) -> p.addColumn(family, Bytes.toBytes(field), value.toArray()));
        return p;
    }

    private void copyFields(Result r, Map<String, ByteIterator> into) {
        for (Cell c : r.rawCells()) {
            if (CellUtil.matchingFamily(c, family)) {
                into.put(Bytes.toString(CellUtil.cloneQualifier(c)), new ByteArrayByteIterator(CellUtil.cloneValue(c)));
            }
        }
    }

    private Status run(String table, Operation op) {
        return run(table, false, op);
    }

    /**
     * Runs {@code op} in the thread's open scope, or else as a transaction of its own: read-only from the replica if
     * {@code readOnly}.
     */
    private Status run(String table, boolean readOnly, Operation op) {
        if (manager == null) {
            return error("operation on table " + table + " after cleanup or a failed init", null);
        }
        TransactionScope scope = TransactionScope.current();
        if (scope != null) {
            try {
                return op.apply(table(table), scope.join(manager));
            } catch (SnapshotExpiredException e) {
                scope.fail(e);
                return Outcomes.SNAPSHOT_EXPIRED; // the scope can only roll back; a new one may well succeed
            } catch (IOException | RuntimeException e) {
                scope.fail(e);
                return error("operation on table " + table + " inside a transaction scope failed", e);
            }
        }
        Transaction tx;
        try {
            tx = readOnly ? manager.beginReadOnly() : manager.begin();
        } catch (RuntimeException e) {
            return error("begin failed", e);
        }
        try {
            Status s = op.apply(table(table), tx);
            if (!s.isOk()) {
                manager.rollback(tx);
                return s;
            }
            manager.commit(tx);
            return s;
        } catch (RollbackException e) {
            return Outcomes.of(e);
        } catch (CommitOutcomeUnknownException e) {
            return Outcomes.COMMIT_OUTCOME_UNKNOWN;
        } catch (SnapshotExpiredException e) {
            try {
                manager.rollback(tx);
            } catch (RuntimeException suppressed) {
                e.addSuppressed(suppressed);
            }
            return Outcomes.SNAPSHOT_EXPIRED;
        } catch (IOException | RuntimeException e) {
            if (tx.getStatus() == Transaction.Status.RUNNING) {
                try {
                    manager.rollback(tx);
                } catch (RuntimeException suppressed) {
                    e.addSuppressed(suppressed);
                }
            }
            return error("operation on table " + table + " failed", e);
        }
    }

    private static Status error(String what, Exception e) {
        long n = ERRORS.incrementAndGet();
        if (n <= LOGGED_ERRORS) {
            LOG.warn("SibylClient: {} (error {}, the first {} are logged in full)", what, n, LOGGED_ERRORS, e);
        } else {
            LOG.warn("SibylClient: {}: {} (error {})", what, e, n);
        }
        return Status.ERROR;
    }
}
