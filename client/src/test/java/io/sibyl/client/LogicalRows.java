package io.sibyl.client;

import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.util.Bytes;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.TreeMap;

/**
 * The logical content of a table as a transaction should see it (row, family, qualifier to value and the start
 * timestamp of the transaction that wrote it), kept alongside the writes made through {@link TTable}, so that the
 * same state can be written into a plain HBase table with one version per cell.
 */
final class LogicalRows {
    /** A visible value and the start timestamp of its writer, which the transactional read must report. */
    record Written(byte[] value, long writer) {
    }

    private final NavigableMap<byte[], NavigableMap<byte[], NavigableMap<byte[], Written>>> rows =
            new TreeMap<>(Bytes.BYTES_COMPARATOR);

    /** A deep copy, the starting view of a transaction that may roll back. */
    LogicalRows copy() {
        LogicalRows c = new LogicalRows();
        for (Map.Entry<byte[], NavigableMap<byte[], NavigableMap<byte[], Written>>> r : rows.entrySet()) {
            for (Map.Entry<byte[], NavigableMap<byte[], Written>> f : r.getValue().entrySet()) {
                for (Map.Entry<byte[], Written> q : f.getValue().entrySet()) {
                    c.put(r.getKey(), f.getKey(), q.getKey(), q.getValue().value(), q.getValue().writer());
                }
            }
        }
        return c;
    }

    void put(byte[] row, byte[] family, byte[] qualifier, byte[] value, long writer) {
        rows.computeIfAbsent(row, k -> new TreeMap<>(Bytes.BYTES_COMPARATOR))
                .computeIfAbsent(family, k -> new TreeMap<>(Bytes.BYTES_COMPARATOR))
                .put(qualifier, new Written(value, writer));
    }

    void deleteColumn(byte[] row, byte[] family, byte[] qualifier) {
        NavigableMap<byte[], NavigableMap<byte[], Written>> r = rows.get(row);
        if (r != null && r.containsKey(family)) {
            r.get(family).remove(qualifier);
            if (r.get(family).isEmpty()) {
                r.remove(family);
            }
            if (r.isEmpty()) {
                rows.remove(row);
            }
        }
    }

    void deleteFamily(byte[] row, byte[] family) {
        NavigableMap<byte[], NavigableMap<byte[], Written>> r = rows.get(row);
        if (r != null) {
            r.remove(family);
            if (r.isEmpty()) {
                rows.remove(row);
            }
        }
    }

    void deleteRow(byte[] row) {
        rows.remove(row);
    }

    /** The value visible at a column, or null. */
    Written at(byte[] row, byte[] family, byte[] qualifier) {
        NavigableMap<byte[], NavigableMap<byte[], Written>> r = rows.get(row);
        NavigableMap<byte[], Written> f = r == null ? null : r.get(family);
        return f == null ? null : f.get(qualifier);
    }

    int cellCount() {
        int n = 0;
        for (NavigableMap<byte[], NavigableMap<byte[], Written>> r : rows.values()) {
            for (NavigableMap<byte[], Written> f : r.values()) {
                n += f.size();
            }
        }
        return n;
    }

    int rowCount() {
        return rows.size();
    }

    /** Writes every visible cell, once, into a plain (empty) table. */
    void writeTo(Table plain) throws IOException {
        List<Put> puts = new ArrayList<>();
        for (Map.Entry<byte[], NavigableMap<byte[], NavigableMap<byte[], Written>>> r : rows.entrySet()) {
            Put p = new Put(r.getKey());
            for (Map.Entry<byte[], NavigableMap<byte[], Written>> f : r.getValue().entrySet()) {
                for (Map.Entry<byte[], Written> q : f.getValue().entrySet()) {
                    p.addColumn(f.getKey(), q.getKey(), q.getValue().value());
                }
            }
            puts.add(p);
        }
        plain.put(puts);
    }
}
