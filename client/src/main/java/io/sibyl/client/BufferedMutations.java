package io.sibyl.client;

import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Mutation;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Map;

/**
 * The puts, deletes, increments and appends of one {@link TTable} in a transaction, turned into the cells the
 * transaction buffers at its version: a delete into tombstones of the columns it sees, an increment or append into a
 * read in the snapshot and a put of the new values. Each runs inside the table's write operation (TTable.underWrite).
 */
final class BufferedMutations {
    private final TTable table;
    private final RequestChecks checks;

    BufferedMutations(TTable table, RequestChecks checks) {
        this.table = table;
        this.checks = checks;
    }

    /** Buffers {@code puts}, all checked first, so a refused one leaves none of them buffered. */
    void put(HBaseTransaction tx, List<Put> puts) throws IOException {
        table.checkUsable(tx);
        for (Put p : puts) {
            checks.put(p);
        }
        TableWrites w = tx.writes().forTable(table);
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

    /** Buffers a tombstone for each column of {@code deletes} the transaction sees; every row joins the write set. */
    void delete(HBaseTransaction tx, List<Delete> deletes) throws IOException {
        table.checkUsable(tx);
        for (Delete d : deletes) {
            checks.delete(d);
        }
        TableWrites w = tx.writes().forTable(table);
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
                Cell[] visible = table.get(tx, toRead).rawCells();
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
     * Applies one Increment or Append ({@code m}) as an operation of its own; its new values, or an empty result
     * unless {@code returnResults}.
     */
    Result incrementOrAppend(HBaseTransaction tx, Mutation m, boolean returnResults) throws IOException {
        table.checkUsable(tx);
        checks.readModifyWrite(m);
        Result changed = readModifyWrite(tx, m);
        return returnResults ? changed : Result.create(Collections.emptyList());
    }

    /** Reads the columns of an Increment or Append (checked), writes their new values, and returns them. */
    Result readModifyWrite(Transaction tx, Mutation m) throws IOException {
        Result current = table.get(tx, ReadModifyWrite.readFor(m));
        ReadModifyWrite.NavigableColumns values = ReadModifyWrite.apply(m, current);
        Put changes = ReadModifyWrite.putOfChanges(m.getRow(), values, current);
        if (changes != null) {
            table.put(tx, changes);
        }
        return ReadModifyWrite.resultOf(m.getRow(), values, tx.getStartTimestamp());
    }
}
