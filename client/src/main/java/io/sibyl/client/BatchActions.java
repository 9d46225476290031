package io.sibyl.client;

import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellComparator;
import org.apache.hadoop.hbase.client.Append;
import org.apache.hadoop.hbase.client.CheckAndMutate;
import org.apache.hadoop.hbase.client.CheckAndMutateResult;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Increment;
import org.apache.hadoop.hbase.client.Mutation;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.Row;
import org.apache.hadoop.hbase.client.RowMutations;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

/**
 * The composite requests of one {@link TTable}: {@code batch}, {@code mutateRow} and {@code checkAndMutate}, run as
 * the table's single gets, puts, deletes, increments and appends in order, all checked before any is applied. Each
 * runs inside the table's write operation (TTable.underWrite).
 */
final class BatchActions {
    private final TTable table;
    private final RequestChecks checks;
    private final BufferedMutations mutations;

    BatchActions(TTable table, RequestChecks checks, BufferedMutations mutations) {
        this.table = table;
        this.checks = checks;
        this.mutations = mutations;
    }

    /** Runs {@code actions} in their order, consecutive gets, puts or deletes together; one result per action. */
    Result[] batch(HBaseTransaction tx, List<? extends Row> actions) throws IOException {
        table.checkUsable(tx);
        List<Row> flat = new ArrayList<>(actions.size());
        int[] owner = new int[actions.size() * 2 + 4];
        for (int i = 0; i < actions.size(); i++) {
            Row a = actions.get(i);
            List<? extends Row> parts = a instanceof RowMutations rm ? rm.getMutations() : List.of(a);
            for (Row part : parts) {
                if (!checks.action(part)) {
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
                    Result changed = mutations.readModifyWrite(tx, (Mutation) first);
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
                    Result[] got = table.get(tx, castAll(run, Get.class));
                    for (int k = 0; k < got.length; k++) {
                        out[owner[from + k]] = got[k];
                    }
                } else {
                    applied = true;
                    if (first instanceof Put) {
                        table.put(tx, castAll(run, Put.class));
                    } else {
                        table.delete(tx, castAll(run, Delete.class));
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
        cells.sort(CellComparator.getInstance());
        return Result.create(cells);
    }

    private static <T> List<T> castAll(List<Row> rows, Class<T> type) {
        List<T> out = new ArrayList<>(rows.size());
        for (Row r : rows) {
            out.add(type.cast(r));
        }
        return out;
    }

    /** Applies the check's action if its condition holds in the transaction's snapshot. */
    CheckAndMutateResult checkAndMutate(HBaseTransaction tx, CheckAndMutate check) throws IOException {
        table.checkUsable(tx);
        checks.checkAndMutate(check);
        boolean holds;
        if (check.hasFilter()) {
            holds = !table.get(tx, new Get(check.getRow()).setFilter(check.getFilter())).isEmpty();
        } else {
            Result column = table.get(tx, new Get(check.getRow()).addColumn(check.getFamily(), check.getQualifier()));
            holds = ReadModifyWrite.conditionHolds(check, column.rawCells());
        }
        if (!holds) {
            return new CheckAndMutateResult(false, null);
        }
        Row action = check.getAction();
        Result result = table.batch(tx, List.of(action))[0];
        // A success writes the checked row, even a no-op action.
        tx.writes().touchRow(tx.writes().forTable(table), check.getRow());
        // As HBase: values only from increments and appends, also inside a RowMutations (of only puts and deletes,
        // the result is null, not an empty Result).
        boolean returnsValues = action instanceof Increment || action instanceof Append
                || (action instanceof RowMutations rm && rm.getMutations().stream()
                        .anyMatch(m -> m instanceof Increment || m instanceof Append));
        return new CheckAndMutateResult(true, returnsValues ? result : null);
    }

    /** Runs several checks in order, all checked before the first runs; one result each. */
    List<CheckAndMutateResult> checkAndMutate(HBaseTransaction tx, List<CheckAndMutate> checkList)
            throws IOException {
        table.checkUsable(tx);
        for (CheckAndMutate check : checkList) {
            checks.checkAndMutate(check);
        }
        List<CheckAndMutateResult> out = new ArrayList<>(checkList.size());
        for (CheckAndMutate check : checkList) {
            out.add(table.checkAndMutate(tx, check));
        }
        return out;
    }
}
