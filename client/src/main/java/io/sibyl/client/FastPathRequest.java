package io.sibyl.client;

import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.client.Mutation;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.TableDescriptor;

import java.util.List;

/**
 * What the client and the fast-path coprocessor agree on: the attribute that marks a put as a single-row transaction
 * for its region server to commit, and the coprocessor class whose presence on a table makes that possible.
 */
public final class FastPathRequest {
    /** Mutation attribute that asks the region server to commit the put on its own (any value). */
    public static final String ATTRIBUTE = "sibyl.fast-path";
    /** The region observer that serves such puts ({@code hbase-gc-coprocessor}, the same jar as the collector). */
    public static final String COPROCESSOR = "io.sibyl.gc.SibylFastPathCoprocessor";
    private static final byte[] MARK = {1};

    private FastPathRequest() {
    }

    /** Marks {@code m} for the fast path. */
    public static <M extends Mutation> M mark(M m) {
        m.setAttribute(ATTRIBUTE, MARK);
        return m;
    }

    /** True if {@code m} asks for the fast path. */
    public static boolean isMarked(Mutation m) {
        return m.getAttribute(ATTRIBUTE) != null;
    }

    /**
     * The coprocessor's answer to a marked increment or append: its cells, flagged stale (a flag HBase sets only on
     * reads of region replicas), so that the client tells it from HBase's own answer, which means the coprocessor did
     * not run. The client clears the flag before handing the result on.
     */
    public static Result answer(List<Cell> cells) {
        return Result.create(cells, null, true);
    }

    /** True if {@code r} is the coprocessor's {@link #answer}. */
    public static boolean isFromCoprocessor(Result r) {
        return r.isStale();
    }

    /** True if {@code table} loads the fast-path coprocessor. */
    public static boolean isServed(TableDescriptor table) {
        return table.hasCoprocessor(COPROCESSOR);
    }
}
