package io.sibyl.client;

import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.util.Bytes;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Small helpers shared by the tests: one family "cf", one qualifier "v" unless said otherwise. */
final class TestSupport {
    static final byte[] CF = Bytes.toBytes("cf");
    static final byte[] V = Bytes.toBytes("v");

    private TestSupport() {
    }

    /** The manager's own implementation behind {@code tx}, for tests that look inside a transaction. */
    static HBaseTransaction internals(Transaction tx) {
        return (HBaseTransaction) tx;
    }

    static byte[] b(String s) {
        return Bytes.toBytes(s);
    }

    static void put(TTable t, Transaction tx, String row, String value) throws IOException {
        t.put(tx, new Put(b(row)).addColumn(CF, V, b(value)));
    }

    static void put(TTable t, Transaction tx, String row, String qualifier, String value) throws IOException {
        t.put(tx, new Put(b(row)).addColumn(CF, b(qualifier), b(value)));
    }

    static void putInt(TTable t, Transaction tx, String row, long value) throws IOException {
        t.put(tx, new Put(b(row)).addColumn(CF, V, Bytes.toBytes(value)));
    }

    static long getInt(TTable t, Transaction tx, String row) throws IOException {
        byte[] v = t.get(tx, new Get(b(row)).addColumn(CF, V)).getValue(CF, V);
        if (v == null) {
            throw new AssertionError("row " + row + " has no value in the snapshot of " + tx);
        }
        return Bytes.toLong(v);
    }

    /** The value of cf:v in the snapshot, or null. */
    static String get(TTable t, Transaction tx, String row) throws IOException {
        return get(t, tx, row, "v");
    }

    static String get(TTable t, Transaction tx, String row, String qualifier) throws IOException {
        byte[] v = t.get(tx, new Get(b(row))).getValue(CF, b(qualifier));
        return v == null ? null : Bytes.toString(v);
    }

    static void delete(TTable t, Transaction tx, String row) throws IOException {
        t.delete(tx, new Delete(b(row)));
    }

    /** row -> (qualifier -> value) of family cf, for a scan. */
    static Map<String, Map<String, String>> scan(TTable t, Transaction tx, Scan scan) throws IOException {
        Map<String, Map<String, String>> out = new TreeMap<>();
        try (ResultScanner s = t.getScanner(tx, scan)) {
            for (Result r : s) {
                Map<String, String> cols = out.computeIfAbsent(Bytes.toString(r.getRow()), k -> new TreeMap<>());
                for (Cell c : r.rawCells()) {
                    cols.put(Bytes.toString(CellUtil.cloneFamily(c)) + ":" + Bytes.toString(CellUtil.cloneQualifier(c)),
                            Bytes.toString(CellUtil.cloneValue(c)));
                }
            }
        }
        return out;
    }

    /** Rows of a scan, in order. */
    static List<String> rows(TTable t, Transaction tx, Scan scan) throws IOException {
        List<String> out = new ArrayList<>();
        try (ResultScanner s = t.getScanner(tx, scan)) {
            for (Result r : s) {
                out.add(Bytes.toString(r.getRow()));
            }
        }
        return out;
    }

    /** Runs IO code inside a lambda of TransactionManager.run. */
    interface IoWork<T> {
        T apply(Transaction tx) throws IOException;
    }

    static <T> java.util.function.Function<Transaction, T> io(IoWork<T> work) {
        return tx -> {
            try {
                return work.apply(tx);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        };
    }

    /** Cells of {@code name} at exactly {@code ts}, in every version HBase holds (a plain scan, not a snapshot). */
    static int versionsAt(TableName name, long ts) throws IOException {
        int n = 0;
        try (Table raw = MiniCluster.get().raw(name); ResultScanner s = raw.getScanner(new Scan().readAllVersions())) {
            for (Result r : s) {
                for (Cell cell : r.rawCells()) {
                    if (cell.getTimestamp() == ts) {
                        n++;
                    }
                }
            }
        }
        return n;
    }

    private static String adminSecretFile;

    /**
     * A file holding an admin secret, for oracles ({@code withAdminSecretFile}) and sweepers
     * ({@link TransactionManager#ADMIN_SECRET_FILE}) of tests: the sweep's reports need the admin role.
     */
    static synchronized String adminSecretFile() {
        if (adminSecretFile == null) {
            try {
                java.nio.file.Path f = java.nio.file.Files.createTempFile("sibyl-admin", ".secret");
                f.toFile().deleteOnExit();
                java.nio.file.Files.writeString(f, "test-admin-secret-" + System.nanoTime() + "\n");
                adminSecretFile = f.toString();
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        return adminSecretFile;
    }

    /** A manager of {@code c} on the oracle at {@code port} with the admin role ({@link #adminSecretFile}). */
    static TransactionManager adminManager(MiniCluster c, int port) throws IOException {
        return c.manager(Map.of(TransactionManager.ORACLE_ADDRESS, "127.0.0.1:" + port,
                TransactionManager.ADMIN_SECRET_FILE, adminSecretFile()));
    }
}
