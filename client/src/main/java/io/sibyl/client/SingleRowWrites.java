package io.sibyl.client;

import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Append;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Durability;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Increment;
import org.apache.hadoop.hbase.client.Mutation;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.util.Bytes;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Single-row transactions of one table ({@link TTable#put(TransactionManager, Put)}): committed by the row's region
 * server when the table loads the fast-path coprocessor ({@link FastPathRequest}), with no round trip to the oracle
 * from here; as an ordinary transaction when it does not, or when the region server declines one
 * ({@link FastPathRefusedException}: a writer of the row whose outcome it cannot tell yet).
 */
final class SingleRowWrites {
    /** How long a look at the table's coprocessors is trusted before the next write looks again. */
    static final long RECHECK_NANOS = 60_000_000_000L;
    /**
     * The version the cells of a fast-path put carry until the coprocessor replaces it. Were the coprocessor removed
     * after the last look, the put would land there: a commit before every transaction, not after them all (which a
     * wall-clock version would be, shadowing every later write).
     */
    static final long UNSET_VERSION = 0;
    /** Tables logged about as having no fast path, so that each is said once. */
    private static final Set<TableName> SAID_NO_FAST_PATH = ConcurrentHashMap.newKeySet();

    private final TableName name;
    private final Connection connection;
    private volatile boolean served;
    /** Whether a fast-path put was seen committed by the region server since the table was last looked at. */
    private volatile boolean putSeenServed;
    private volatile long checkedAtNanos = System.nanoTime() - 2 * RECHECK_NANOS;

    SingleRowWrites(TableName name, Connection connection) {
        this.name = name;
        this.connection = connection;
    }

    /** Commits {@code put} (validated) on its own; {@code ordinary} writes it in a transaction instead. */
    void put(TransactionManager tm, Put put, Durability durability, TransactionalCall<Void> ordinary)
            throws IOException, RollbackException {
        Put marked = FastPathRequest.mark(new Put(put.getRow()));
        for (Map.Entry<byte[], List<Cell>> f : put.getFamilyCellMap().entrySet()) {
            for (Cell c : f.getValue()) {
                marked.addColumn(f.getKey(), CellUtil.cloneQualifier(c), UNSET_VERSION, CellUtil.cloneValue(c));
            }
        }
        marked.setDurability(durability);
        commit(tm, t -> {
            t.put(marked);
            if (!putSeenServed) {
                // Once per look at the table: a put left at the unset version was not committed by a coprocessor.
                Cell first = marked.getFamilyCellMap().values().iterator().next().get(0);
                Result left = t.get(new Get(marked.getRow()).addColumn(CellUtil.cloneFamily(first),
                        CellUtil.cloneQualifier(first)).setTimestamp(UNSET_VERSION));
                if (!left.isEmpty()) {
                    undo(t, marked.getRow(), marked.getFamilyCellMap().values());
                    return null;
                }
                putSeenServed = true;
            }
            return null;
        }, ordinary);
    }

    /**
     * Deletes columns of one row (validated) on its own: a delete of named columns is a put of tombstones, which may
     * take the fast path; one of whole families or of the row must read the row first, so {@code ordinary} runs it.
     */
    void delete(TransactionManager tm, Delete delete, Durability durability, TransactionalCall<Void> ordinary)
            throws IOException, RollbackException {
        Put tombstones = new Put(delete.getRow());
        boolean namedColumnsOnly = true;
        for (Map.Entry<byte[], List<Cell>> f : delete.getFamilyCellMap().entrySet()) {
            for (Cell c : f.getValue()) {
                namedColumnsOnly &= c.getType() != Cell.Type.DeleteFamily;
                tombstones.addColumn(f.getKey(), CellUtil.cloneQualifier(c), Tombstones.VALUE);
            }
        }
        if (!namedColumnsOnly || tombstones.isEmpty()) {
            runOrdinary(tm, ordinary);
            return;
        }
        put(tm, tombstones, durability, ordinary);
    }

    /**
     * Increments or appends to columns of one row (validated) on its own: the region server reads the committed
     * values under the row lock. Returns the new values, as HBase's increment and append do.
     */
    Result readModifyWrite(TransactionManager tm, Mutation m, Durability durability, TransactionalCall<Result> ordinary)
            throws IOException, RollbackException {
        Mutation marked;
        if (m instanceof Increment inc) {
            Increment copy = new Increment(inc.getRow());
            for (Map.Entry<byte[], List<Cell>> f : inc.getFamilyCellMap().entrySet()) {
                for (Cell c : f.getValue()) {
                    copy.addColumn(f.getKey(), CellUtil.cloneQualifier(c), Bytes.toLong(CellUtil.cloneValue(c)));
                }
            }
            copy.setReturnResults(true);
            marked = copy;
        } else {
            Append copy = new Append(m.getRow());
            for (Map.Entry<byte[], List<Cell>> f : m.getFamilyCellMap().entrySet()) {
                for (Cell c : f.getValue()) {
                    copy.addColumn(f.getKey(), CellUtil.cloneQualifier(c), CellUtil.cloneValue(c));
                }
            }
            copy.setReturnResults(true);
            marked = copy;
        }
        FastPathRequest.mark(marked).setDurability(durability);
        return commit(tm, t -> {
            Result r = marked instanceof Increment i ? t.increment(i) : t.append((Append) marked);
            if (!FastPathRequest.isFromCoprocessor(r)) {
                undo(t, marked.getRow(), List.of(List.of(r.rawCells())));
                return null;
            }
            return Result.create(r.rawCells());
        }, ordinary);
    }

    /**
     * The table named the coprocessor but its region server did not run it (not loaded, or removed since the last
     * look): HBase applied the write itself, at a version of its own. The versions it wrote are deleted, the table is
     * taken as having no fast path, and the caller's null answer sends the write to the ordinary path.
     */
    private void undo(Table t, byte[] row, java.util.Collection<List<Cell>> written) throws IOException {
        Delete d = new Delete(row);
        for (List<Cell> cells : written) {
            for (Cell c : cells) {
                d.addColumn(CellUtil.cloneFamily(c), CellUtil.cloneQualifier(c), c.getTimestamp());
            }
        }
        t.delete(d);
        served = false;
        checkedAtNanos = System.nanoTime();
        TransactionManager.LOG.error("table {} names {} but its region server did not commit a single-row"
                + " transaction (the coprocessor is not loaded there: check the region servers' log and lib/); the"
                + " write was undone and runs as an ordinary transaction, as every later one will for a minute", name,
                FastPathRequest.COPROCESSOR);
    }

    private <T> T commit(TransactionManager tm, FastCall<T> fast, TransactionalCall<T> ordinary)
            throws IOException, RollbackException {
        if (isServed()) {
            try (Table t = connection.getTable(name)) {
                T result = fast.call(t);
                if (served) { // else the region server did not commit it, and it was undone
                    tm.fastPathCommitted();
                    return result;
                }
            } catch (IOException e) {
                if (!isRefusal(e)) {
                    throw e;
                }
                TransactionManager.LOG.debug("{}: single-row transaction on the ordinary path: {}", name,
                        e.getMessage());
            }
        }
        return runOrdinary(tm, ordinary);
    }

    /** Runs {@code call} as an ordinary transaction of its own ({@link TransactionManager#run}). */
    private static <T> T runOrdinary(TransactionManager tm, TransactionalCall<T> call) throws IOException, RollbackException {
        try {
            return tm.run(tx -> {
                try {
                    return call.call(tx);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
            });
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    /** The ordinary transaction's part of a single-row write. */
    @FunctionalInterface
    interface TransactionalCall<T> {
        T call(Transaction tx) throws IOException;
    }

    /** The fast path's request to the region server. */
    @FunctionalInterface
    private interface FastCall<T> {
        T call(Table t) throws IOException;
    }

    private static boolean isRefusal(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof FastPathRefusedException
                    || (t.getMessage() != null && t.getMessage().contains(FastPathRefusedException.class.getName()))) {
                return true;
            }
        }
        return false;
    }

    /** True if the table loads the fast-path coprocessor, as of a look at most {@link #RECHECK_NANOS} old. */
    boolean isServed() throws IOException {
        long now = System.nanoTime();
        if (now - checkedAtNanos < RECHECK_NANOS) {
            return served;
        }
        try (Table t = connection.getTable(name)) {
            served = FastPathRequest.isServed(t.getDescriptor());
        }
        checkedAtNanos = now;
        putSeenServed = false;
        if (!served && SAID_NO_FAST_PATH.add(name)) {
            TransactionManager.LOG.info("table {} does not load {}: its single-row transactions take the ordinary"
                    + " path (docs/user-guide.md, Fast paths)", name, FastPathRequest.COPROCESSOR);
        } else if (served) {
            SAID_NO_FAST_PATH.remove(name);
        }
        return served;
    }
}
