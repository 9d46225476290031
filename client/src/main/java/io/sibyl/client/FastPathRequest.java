package io.sibyl.client;

import org.apache.hadoop.hbase.client.Mutation;
import org.apache.hadoop.hbase.client.TableDescriptor;

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

    /** True if {@code table} loads the fast-path coprocessor. */
    public static boolean isServed(TableDescriptor table) {
        return table.hasCoprocessor(COPROCESSOR);
    }
}
