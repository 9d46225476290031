package io.sibyl.client;

import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Put;
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

/**
 * One transaction's writes to one table: the buffered (not yet sent) cells, newest value per column, and the
 * columns already sent to HBase (kept without values, to delete them if the transaction aborts). Guarded by the
 * owning {@link Transaction}'s monitor.
 */
final class TableWrites {
    final TableName name;
    final Connection connection;
    /** row -> family -> qualifier -> value (or {@link Tombstones#VALUE}). */
    final NavigableMap<byte[], NavigableMap<byte[], NavigableMap<byte[], byte[]>>> buffered =
            new TreeMap<>(Bytes.BYTES_COMPARATOR);
    /** row -> family -> qualifiers written to HBase (or attempted) at the transaction's start timestamp. */
    private final NavigableMap<byte[], NavigableMap<byte[], NavigableSet<byte[]>>> sent =
            new TreeMap<>(Bytes.BYTES_COMPARATOR);

    TableWrites(TableName name, Connection connection) {
        this.name = name;
        this.connection = connection;
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

    /** Sends the buffer to HBase as one batch of puts at {@code version}, then empties it. */
    void flush(long version) throws IOException {
        if (buffered.isEmpty()) {
            return;
        }
        List<Put> puts = new ArrayList<>(buffered.size());
        for (Map.Entry<byte[], NavigableMap<byte[], NavigableMap<byte[], byte[]>>> r : buffered.entrySet()) {
            Put put = new Put(r.getKey());
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
        try (Table table = connection.getTable(name)) {
            if (puts.size() == 1) {
                table.put(puts.get(0)); // one Mutate call, lighter than a one-action Multi on both sides
            } else {
                table.put(puts);
            }
        }
    }

    /** Deletes exactly the versions this transaction sent (version-specific delete markers). */
    void deleteSent(long version) throws IOException {
        if (sent.isEmpty()) {
            return;
        }
        List<Delete> deletes = new ArrayList<>(sent.size());
        for (Map.Entry<byte[], NavigableMap<byte[], NavigableSet<byte[]>>> r : sent.entrySet()) {
            Delete d = new Delete(r.getKey());
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
}
