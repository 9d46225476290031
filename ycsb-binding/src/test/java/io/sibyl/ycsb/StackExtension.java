package io.sibyl.ycsb;

import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.util.concurrent.atomic.AtomicInteger;

/**
 * One {@link EmbeddedStack} (HBase minicluster + oracle) for the whole test JVM, started by the first test class
 * that uses this extension and stopped when JUnit finishes; test classes take fresh tables from {@link #table}.
 */
public final class StackExtension implements BeforeAllCallback {
    private static final AtomicInteger TABLES = new AtomicInteger();
    private static volatile EmbeddedStack stack;

    /** Keeps the stack in JUnit's root store, which closes it after the last test. */
    private record Holder(EmbeddedStack stack) implements ExtensionContext.Store.CloseableResource {
        @Override
        public void close() throws Throwable {
            stack.close();
        }
    }

    @Override
    public void beforeAll(ExtensionContext context) {
        context.getRoot().getStore(ExtensionContext.Namespace.GLOBAL).getOrComputeIfAbsent(Holder.class, k -> {
            try {
                long t0 = System.nanoTime();
                Holder h = new Holder(EmbeddedStack.start());
                stack = h.stack();
                System.out.printf("embedded stack up in %.1f s%n", (System.nanoTime() - t0) / 1e9);
                return h;
            } catch (Exception e) {
                throw new IllegalStateException("could not start the HBase minicluster and the oracle", e);
            }
        }, Holder.class);
    }

    /** The running stack (for test classes annotated {@code @ExtendWith(StackExtension.class)}). */
    public static EmbeddedStack stack() {
        EmbeddedStack s = stack;
        if (s == null) {
            throw new IllegalStateException("annotate the test class with @ExtendWith(StackExtension.class)");
        }
        return s;
    }

    /** Creates a table with a unique name ({@code prefix_N}) and the default column family. */
    public static String table(String prefix) throws Exception {
        String name = prefix + "_" + TABLES.incrementAndGet();
        stack().createTable(name, BindingSettings.DEFAULT_COLUMN_FAMILY);
        return name;
    }
}
