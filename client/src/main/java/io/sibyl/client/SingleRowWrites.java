package io.sibyl.client;

import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.Durability;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Table;

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
    private volatile long checkedAtNanos = System.nanoTime() - 2 * RECHECK_NANOS;

    SingleRowWrites(TableName name, Connection connection) {
        this.name = name;
        this.connection = connection;
    }

    /** Commits {@code put} (validated) on its own; {@code ordinary} writes it in a transaction instead. */
    void put(TransactionManager tm, Put put, Durability durability, TransactionalWrite ordinary)
            throws IOException, RollbackException {
        if (isServed()) {
            Put marked = FastPathRequest.mark(new Put(put.getRow()));
            for (Map.Entry<byte[], List<Cell>> f : put.getFamilyCellMap().entrySet()) {
                for (Cell c : f.getValue()) {
                    marked.addColumn(f.getKey(), CellUtil.cloneQualifier(c), UNSET_VERSION, CellUtil.cloneValue(c));
                }
            }
            marked.setDurability(durability);
            try (Table t = connection.getTable(name)) {
                t.put(marked);
                tm.fastPathCommitted();
                return;
            } catch (IOException e) {
                if (!isRefusal(e)) {
                    throw e;
                }
                TransactionManager.LOG.debug("{}: single-row transaction on the ordinary path: {}", name,
                        e.getMessage());
            }
        }
        runOrdinary(tm, ordinary);
    }

    /** Runs {@code write} as an ordinary transaction of its own ({@link TransactionManager#run}). */
    static void runOrdinary(TransactionManager tm, TransactionalWrite write) throws IOException, RollbackException {
        try {
            tm.run(tx -> {
                try {
                    write.write(tx);
                } catch (IOException e) {
                    throw new UncheckedIOException(e);
                }
                return null;
            });
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
    }

    /** The ordinary transaction's part of a single-row write. */
    @FunctionalInterface
    interface TransactionalWrite {
        void write(Transaction tx) throws IOException;
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
    private boolean isServed() throws IOException {
        long now = System.nanoTime();
        if (now - checkedAtNanos < RECHECK_NANOS) {
            return served;
        }
        try (Table t = connection.getTable(name)) {
            served = FastPathRequest.isServed(t.getDescriptor());
        }
        checkedAtNanos = now;
        if (!served && SAID_NO_FAST_PATH.add(name)) {
            TransactionManager.LOG.info("table {} does not load {}: its single-row transactions take the ordinary"
                    + " path (docs/user-guide.md, Fast paths)", name, FastPathRequest.COPROCESSOR);
        } else if (served) {
            SAID_NO_FAST_PATH.remove(name);
        }
        return served;
    }
}
