package io.sibyl.client;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HConstants;
import org.apache.hadoop.hbase.HRegionLocation;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Durability;
import org.apache.hadoop.hbase.client.OperationTimeoutExceededException;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.RegionLocator;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.util.Bytes;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.NavigableSet;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One transaction's writes to one table: the buffered (not yet sent) cells, newest value per column, and the
 * columns already sent to HBase (kept without values, to delete them if the transaction aborts). Guarded by the
 * owning {@link WriteBuffer}'s monitor.
 */
final class TableWrites {
    /** {@link #send}: no cap, HBase's configured timeouts apply. */
    static final int NO_CAP = 0;
    /**
     * Makes the calls of capped batches that the committing thread does not make itself (batches to several region
     * servers, of more than {@link #MAX_ROWS_CHECKED_FOR_ONE_SERVER} rows, or of an interrupted thread), like the pool
     * HBase's connection keeps for its own tables (which
     * {@code getTableBuilder} cannot reach): built with a pool, a table costs as much as {@code Connection.getTable}
     * (about 0.1-0.5 us); built without one, each table creates and stops a pool of its own, and a batch of puts
     * takes about twice as long (measured on the minicluster).
     */
    private static final ThreadPoolExecutor BATCH_POOL = batchPool();
    /** Rows a batch may have for {@link #onOneServer} to locate them all; larger batches go to the pool. */
    static final int MAX_ROWS_CHECKED_FOR_ONE_SERVER = 256;
    /** Runs the batches to one region server on the committing thread ({@link #onOneServer}). */
    private static final CallingThreadExecutor ON_CALLING_THREAD = new CallingThreadExecutor(BATCH_POOL);

    final TableName name;
    final Connection connection;
    /** HBase's configured timeouts for this connection's writes, which a cap only ever lowers. */
    private final int configuredOperationTimeoutMillis;
    private final int configuredWriteRpcTimeoutMillis;
    /** Durability of this transaction's puts and of its clean-up's delete markers ({@link #durability}). */
    private final Durability durability;
    /** row -> family -> qualifier -> value (or {@link Tombstones#VALUE}). */
    final NavigableMap<byte[], NavigableMap<byte[], NavigableMap<byte[], byte[]>>> buffered =
            new TreeMap<>(Bytes.BYTES_COMPARATOR);
    /** row -> family -> qualifiers written to HBase (or attempted) at the transaction's start timestamp. */
    private final NavigableMap<byte[], NavigableMap<byte[], NavigableSet<byte[]>>> sent =
            new TreeMap<>(Bytes.BYTES_COMPARATOR);

    TableWrites(TableName name, Connection connection, int configuredOperationTimeoutMillis,
                int configuredWriteRpcTimeoutMillis, Durability durability) {
        this.name = name;
        this.connection = connection;
        this.configuredOperationTimeoutMillis = configuredOperationTimeoutMillis;
        this.configuredWriteRpcTimeoutMillis = configuredWriteRpcTimeoutMillis;
        this.durability = durability;
    }

    /**
     * The durability of a transaction's writes, puts and clean-up delete markers alike, in a table whose own
     * durability is {@code tableDurability}: synced to the WAL whatever the table says (SKIP_WAL, ASYNC_WAL), as in a
     * table of the default durability, or the table's own FSYNC_WAL. A commit follows the writes HBase acknowledged:
     * a put held only in a memstore (or an unsynced WAL tail) is lost in a region server crash, leaving part of a
     * committed transaction. The clean-up report that follows the markers lets the oracle forget the abort, and from
     * then on a version whose marker was lost reads as committed. (CleanUpDurabilityTest) SYNC_WAL rather than the
     * table's default unless that is FSYNC_WAL, so that a table altered to SKIP_WAL or ASYNC_WAL after it was looked
     * at is covered too. Used by the abort sweeper too.
     */
    static Durability durability(Durability tableDurability) {
        return tableDurability == Durability.FSYNC_WAL ? Durability.USE_DEFAULT : Durability.SYNC_WAL;
    }

    /** HBase's configured operation timeout for these writes (0 or less: none). */
    int configuredOperationTimeoutMillis() {
        return configuredOperationTimeoutMillis;
    }

    /** HBase's operation timeout for {@code conf}, as its connection reads it. */
    static int configuredOperationTimeoutMillis(Configuration conf) {
        return conf.getInt(HConstants.HBASE_CLIENT_OPERATION_TIMEOUT,
                HConstants.DEFAULT_HBASE_CLIENT_OPERATION_TIMEOUT);
    }

    /** HBase's write RPC timeout for {@code conf}, as its connection reads it. */
    static int configuredWriteRpcTimeoutMillis(Configuration conf) {
        return conf.getInt(HConstants.HBASE_RPC_WRITE_TIMEOUT_KEY,
                conf.getInt(HConstants.HBASE_RPC_TIMEOUT_KEY, HConstants.DEFAULT_HBASE_RPC_TIMEOUT));
    }

    /** {@code configured} lowered to {@code capMillis}, never raised (a configured 0 or less: no limit). */
    static int capped(int configured, int capMillis) {
        return configured > 0 ? Math.min(configured, capMillis) : capMillis;
    }

    /** Adds one cell to the buffer; returns the bytes it adds to the buffer (roughly). */
    long buffer(byte[] row, byte[] family, byte[] qualifier, byte[] value) {
        buffered.computeIfAbsent(row, r -> new TreeMap<>(Bytes.BYTES_COMPARATOR))
                .computeIfAbsent(family, f -> new TreeMap<>(Bytes.BYTES_COMPARATOR))
                .put(qualifier, value);
        return row.length + family.length + qualifier.length + value.length + 48L;
    }

    boolean hasSent() {
        return !sent.isEmpty();
    }

    /**
     * Takes the buffer as puts at {@code version}, recorded as sent (to be deleted if the transaction aborts), and
     * empties it; {@link #send} sends them.
     */
    List<Put> drain(long version) {
        List<Put> puts = new ArrayList<>(buffered.size());
        for (Map.Entry<byte[], NavigableMap<byte[], NavigableMap<byte[], byte[]>>> r : buffered.entrySet()) {
            Put put = new Put(r.getKey()).setDurability(durability);
            NavigableMap<byte[], NavigableSet<byte[]>> sentRow =
                    sent.computeIfAbsent(r.getKey(), k -> new TreeMap<>(Bytes.BYTES_COMPARATOR));
            for (Map.Entry<byte[], NavigableMap<byte[], byte[]>> f : r.getValue().entrySet()) {
                NavigableSet<byte[]> sentFamily =
                        sentRow.computeIfAbsent(f.getKey(), k -> new TreeSet<>(Bytes.BYTES_COMPARATOR));
                for (Map.Entry<byte[], byte[]> q : f.getValue().entrySet()) {
                    put.addColumn(f.getKey(), q.getKey(), version, q.getValue());
                    sentFamily.add(q.getKey());
                }
            }
            puts.add(put);
        }
        buffered.clear();
        return puts;
    }

    /**
     * Sends {@code puts} to HBase as one batch. With a cap ({@code capMillis > 0}), HBase gives the batch, retries
     * included, at most that long (operation timeout), and each RPC of it as long (write RPC timeout): it gives up
     * instead of retrying past the cap, and no retry is sent later. {@link #NO_CAP}: HBase's configured timeouts.
     * Capped, one row is sent as a batch too (see below).
     */
    void send(List<Put> puts, int capMillis) throws IOException {
        if (puts.isEmpty()) {
            return;
        }
        ExecutorService calls = BATCH_POOL;
        if (capMillis != NO_CAP) {
            // The cap counts from here, region lookups included, as it does inside HBase's batch.
            long lookupStarted = System.nanoTime();
            // An interrupted thread waits for the pool instead, as before: that wait fails with the interrupt, while
            // a call HBase makes on the interrupted thread itself would take it for a failed attempt and retry.
            if (!Thread.currentThread().isInterrupted() && onOneServer(puts)) {
                calls = ON_CALLING_THREAD;
            }
            long spentMillis = (System.nanoTime() - lookupStarted) / 1_000_000L;
            if (spentMillis >= capMillis) {
                throw new OperationTimeoutExceededException("locating the regions of a batch of " + puts.size()
                        + " rows of " + name + " took " + spentMillis + " ms, past its time limit of " + capMillis
                        + " ms (the time left in the transaction's read window); not sent");
            }
            capMillis -= (int) spentMillis;
        }
        try (Table table = capMillis == NO_CAP ? connection.getTable(name)
                : connection.getTableBuilder(name, calls)
                        .setOperationTimeout(capped(configuredOperationTimeoutMillis, capMillis))
                        .setWriteRpcTimeout(capped(configuredWriteRpcTimeoutMillis, capMillis))
                        .build()) {
            if (puts.size() == 1 && capMillis == NO_CAP) {
                table.put(puts.get(0)); // one Mutate call, lighter than a one-action Multi on both sides
            } else {
                // Capped, even one row goes as a batch: HBase's single-row put starts its operation timeout before
                // locating the region and, out of time after a slow lookup (hbase:meta slow or moving), sends the
                // put anyway with a 1 ms RPC timeout, which a region server that is not busy applies, after the
                // read window; a batch locates first and checks the time left just before each RPC.
                // (SlowRegionLookupWriteTest)
                table.put(puts);
            }
        }
    }

    /**
     * True if every row of {@code puts} is in a region of one region server, located as the batch itself would first
     * do (the connection's cache, else hbase:meta): such a batch is one call, which the calling thread then makes
     * itself rather than hand it to a pool thread and wait. False when a lookup fails; the batch then finds out and
     * reports it in its own way.
     */
    private boolean onOneServer(List<Put> puts) {
        if (puts.size() == 1) {
            return true;
        }
        if (puts.size() > MAX_ROWS_CHECKED_FOR_ONE_SERVER) {
            return false; // locating every row twice (here and in the batch) would cost more than the hand-off saves
        }
        try (RegionLocator locator = connection.getRegionLocator(name)) {
            ServerName server = null;
            for (Put put : puts) {
                HRegionLocation location = locator.getRegionLocation(put.getRow());
                if (location == null || location.getServerName() == null
                        || (server != null && !server.equals(location.getServerName()))) {
                    return false;
                }
                server = location.getServerName();
            }
            return true;
        } catch (IOException e) {
            return false;
        }
    }

    /**
     * Deletes exactly the versions this transaction sent (version-specific delete markers). Not capped like
     * {@link #send}: a marker only removes this transaction's own versions (no other transaction writes at its start
     * timestamp), so one that lands late, even after the sweeper took the transaction, changes nothing readable.
     */
    void deleteSent(long version) throws IOException {
        if (sent.isEmpty()) {
            return;
        }
        List<Delete> deletes = new ArrayList<>(sent.size());
        for (Map.Entry<byte[], NavigableMap<byte[], NavigableSet<byte[]>>> r : sent.entrySet()) {
            Delete d = new Delete(r.getKey()).setDurability(durability);
            for (Map.Entry<byte[], NavigableSet<byte[]>> f : r.getValue().entrySet()) {
                for (byte[] q : f.getValue()) {
                    d.addColumn(f.getKey(), q, version);
                }
            }
            deletes.add(d);
        }
        try (Table table = connection.getTable(name)) {
            table.delete(deletes);
        }
        sent.clear();
    }

    /** A copy of the buffered cells of one row (family -> qualifier -> value), or null. */
    NavigableMap<byte[], NavigableMap<byte[], byte[]>> copyOfRow(byte[] row) {
        NavigableMap<byte[], NavigableMap<byte[], byte[]>> r = buffered.get(row);
        return r == null ? null : copyRow(r);
    }

    static NavigableMap<byte[], NavigableMap<byte[], byte[]>> copyRow(
            NavigableMap<byte[], NavigableMap<byte[], byte[]>> r) {
        NavigableMap<byte[], NavigableMap<byte[], byte[]>> copy = new TreeMap<>(Bytes.BYTES_COMPARATOR);
        for (Map.Entry<byte[], NavigableMap<byte[], byte[]>> f : r.entrySet()) {
            copy.put(f.getKey(), new TreeMap<>(f.getValue()));
        }
        return copy;
    }

    /** Calls handed to the pool so far (all tables, all transactions). */
    static long callsHandedToPool() {
        return BATCH_POOL.getTaskCount();
    }

    private static ThreadPoolExecutor batchPool() {
        AtomicInteger threads = new AtomicInteger();
        ThreadPoolExecutor pool = new ThreadPoolExecutor(256, 256, 60, TimeUnit.SECONDS, new LinkedBlockingQueue<>(),
                r -> {
                    Thread t = new Thread(r, "sibyl-write-batch-" + threads.incrementAndGet());
                    t.setDaemon(true);
                    return t;
                });
        pool.allowCoreThreadTimeOut(true);
        return pool;
    }
}
