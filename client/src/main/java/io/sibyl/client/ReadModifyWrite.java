package io.sibyl.client;

import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellBuilderFactory;
import org.apache.hadoop.hbase.CellBuilderType;
import org.apache.hadoop.hbase.CellComparator;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.CompareOperator;
import org.apache.hadoop.hbase.DoNotRetryIOException;
import org.apache.hadoop.hbase.HConstants;
import org.apache.hadoop.hbase.client.Append;
import org.apache.hadoop.hbase.client.CheckAndMutate;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Increment;
import org.apache.hadoop.hbase.client.Mutation;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.util.Bytes;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * The arithmetic of HBase's server-side read-modify-write operations ({@code Increment}, {@code Append} and the
 * condition of {@code CheckAndMutate}), applied to values read in a transaction's snapshot. The transaction then
 * writes the outcome like any put, so the write-write conflict check, not a row lock, keeps two of them from losing
 * each other's update.
 */
final class ReadModifyWrite {
    private ReadModifyWrite() {
    }

    /** The Get that reads every column {@code m} (an Increment or Append) changes. */
    static Get readFor(Mutation m) {
        Get get = new Get(m.getRow());
        for (Map.Entry<byte[], List<Cell>> f : m.getFamilyCellMap().entrySet()) {
            for (Cell c : f.getValue()) {
                get.addColumn(f.getKey(), CellUtil.cloneQualifier(c));
            }
        }
        return get;
    }

    /**
     * The new value of every column {@code m} names, in column order: the current value ({@code current}, the
     * snapshot plus own writes) with the increment added or the bytes appended. A column named twice gets both.
     *
     * @throws DoNotRetryIOException if an incremented column holds something other than an 8-byte long
     */
    static NavigableColumns apply(Mutation m, Result current) throws DoNotRetryIOException {
        NavigableColumns out = new NavigableColumns();
        for (Map.Entry<byte[], List<Cell>> f : m.getFamilyCellMap().entrySet()) {
            for (Cell c : f.getValue()) {
                byte[] family = f.getKey();
                byte[] qualifier = CellUtil.cloneQualifier(c);
                byte[] before = out.get(family, qualifier);
                if (before == null) {
                    before = current.getValue(family, qualifier);
                }
                byte[] operand = CellUtil.cloneValue(c);
                byte[] after;
                if (m instanceof Increment) {
                    long base = before == null ? 0 : asLong(before, m.getRow(), family, qualifier);
                    after = Bytes.toBytes(base + Bytes.toLong(operand));
                } else {
                    after = before == null ? operand : Bytes.add(before, operand);
                }
                out.put(family, qualifier, after);
            }
        }
        return out;
    }

    private static long asLong(byte[] value, byte[] row, byte[] family, byte[] qualifier)
            throws DoNotRetryIOException {
        if (value.length != Bytes.SIZEOF_LONG) {
            throw new DoNotRetryIOException("cannot increment column " + Bytes.toStringBinary(family) + ":"
                    + Bytes.toStringBinary(qualifier) + " of row " + Bytes.toStringBinary(row) + ": it holds "
                    + value.length + " bytes, not an 8-byte long (write counters with Bytes.toBytes(long))");
        }
        return Bytes.toLong(value);
    }

    /** Checks an Increment's or Append's shape: no time range or timestamps, 8-byte increments. */
    static void validate(Mutation m) {
        String kind = m.getClass().getSimpleName();
        if (m.isEmpty()) {
            throw new IllegalArgumentException("no columns in the " + kind + " for row "
                    + Bytes.toStringBinary(m.getRow()));
        }
        boolean allTime = m instanceof Increment inc ? inc.getTimeRange().isAllTime()
                : ((Append) m).getTimeRange().isAllTime();
        if (!allTime) {
            throw new IllegalArgumentException("a transactional " + kind + " reads the transaction's snapshot: a"
                    + " time range cannot be set (row " + Bytes.toStringBinary(m.getRow()) + ")");
        }
        NavigableColumns seen = new NavigableColumns();
        for (List<Cell> cells : m.getFamilyCellMap().values()) {
            for (Cell c : cells) {
                byte[] family = CellUtil.cloneFamily(c);
                byte[] qualifier = CellUtil.cloneQualifier(c);
                if (seen.get(family, qualifier) != null) {
                    // HBase applies each to the old value and keeps the last: name each column once instead.
                    throw new IllegalArgumentException("the " + kind + " for row " + Bytes.toStringBinary(m.getRow())
                            + " names column " + Bytes.toStringBinary(family) + ":" + Bytes.toStringBinary(qualifier)
                            + " twice; name each column once (with the sum of the amounts)");
                }
                seen.put(family, qualifier, new byte[0]);
                if (c.getTimestamp() != HConstants.LATEST_TIMESTAMP) {
                    throw new IllegalArgumentException("a transactional " + kind + " must not set a timestamp (row "
                            + Bytes.toStringBinary(m.getRow()) + "): the transaction writes at its start timestamp");
                }
                if (m instanceof Increment && c.getValueLength() != Bytes.SIZEOF_LONG) {
                    throw new IllegalArgumentException("an Increment's amount must be an 8-byte long; column "
                            + Bytes.toStringBinary(CellUtil.cloneQualifier(c)) + " of row "
                            + Bytes.toStringBinary(m.getRow()) + " has " + c.getValueLength() + " bytes");
                }
            }
        }
    }

    /** The Put that writes the changed columns of {@code values}, or null if nothing changes. */
    static Put putOfChanges(byte[] row, NavigableColumns values, Result current) {
        Put put = new Put(row);
        values.forEach((family, qualifier, value) -> {
            byte[] before = current.getValue(family, qualifier);
            if (before == null || !Bytes.equals(before, value)) {
                put.addColumn(family, qualifier, value);
            }
        });
        return put.isEmpty() ? null : put;
    }

    /** The result HBase would return: the new value of each column, at the transaction's version. */
    static Result resultOf(byte[] row, NavigableColumns values, long version) {
        List<Cell> cells = new ArrayList<>();
        values.forEach((family, qualifier, value) -> cells.add(CellBuilderFactory.create(CellBuilderType.DEEP_COPY)
                .setRow(row).setFamily(family).setQualifier(qualifier).setTimestamp(version)
                .setType(Cell.Type.Put).setValue(value).build()));
        cells.sort(CellComparator.getInstance());
        return Result.create(cells);
    }

    /**
     * Whether a column condition of a CheckAndMutate holds for {@code cells} (the column as the snapshot shows it,
     * zero or one cell), with HBase's meaning: an empty or null expected value asks for a missing or empty column,
     * and the operator compares the expected value with the column's ({@code LESS}: expected &lt; current).
     */
    static boolean conditionHolds(CheckAndMutate check, Cell[] cells) {
        CompareOperator op = check.getCompareOp();
        byte[] expected = check.getValue();
        boolean expectsNothing = expected == null || expected.length == 0;
        Cell cell = cells == null || cells.length == 0 ? null : cells[0];
        if (expectsNothing) {
            boolean nothing = cell == null || cell.getValueLength() == 0;
            return nothing == (op != CompareOperator.NOT_EQUAL);
        }
        if (cell == null) {
            return false;
        }
        int cmp = Bytes.compareTo(expected, 0, expected.length, cell.getValueArray(), cell.getValueOffset(),
                cell.getValueLength());
        return switch (op) {
            case LESS -> cmp < 0;
            case LESS_OR_EQUAL -> cmp <= 0;
            case EQUAL -> cmp == 0;
            case NOT_EQUAL -> cmp != 0;
            case GREATER_OR_EQUAL -> cmp >= 0;
            case GREATER -> cmp > 0;
            case NO_OP -> throw new IllegalArgumentException("CompareOperator.NO_OP is not a condition");
        };
    }

    /** Column values by family, then qualifier, in HBase's byte order. */
    static final class NavigableColumns {
        private final TreeMap<byte[], TreeMap<byte[], byte[]>> byFamily = new TreeMap<>(Bytes.BYTES_COMPARATOR);

        byte[] get(byte[] family, byte[] qualifier) {
            TreeMap<byte[], byte[]> f = byFamily.get(family);
            return f == null ? null : f.get(qualifier);
        }

        void put(byte[] family, byte[] qualifier, byte[] value) {
            byFamily.computeIfAbsent(family, k -> new TreeMap<>(Bytes.BYTES_COMPARATOR)).put(qualifier, value);
        }

        void forEach(ColumnConsumer consumer) {
            byFamily.forEach((family, columns) -> columns.forEach((q, v) -> consumer.accept(family, q, v)));
        }
    }

    /** Receives one column's value. */
    interface ColumnConsumer {
        void accept(byte[] family, byte[] qualifier, byte[] value);
    }
}
