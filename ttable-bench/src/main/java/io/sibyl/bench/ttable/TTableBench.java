package io.sibyl.bench.ttable;

import io.sibyl.client.FastPathRequest;
import io.sibyl.client.TTable;
import io.sibyl.client.Transaction;
import io.sibyl.client.TransactionManager;
import io.sibyl.client.oracle.OracleClient;
import io.sibyl.client.oracle.OracleCredentials;
import io.sibyl.client.oracle.OracleTransport;
import io.sibyl.embedded.EmbeddedHBase;
import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import org.HdrHistogram.Histogram;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ClusterConnection;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.CoprocessorDescriptorBuilder;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Increment;
import org.apache.hadoop.hbase.client.MetricsConnection;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.util.Bytes;
import picocli.CommandLine.ParameterException;


import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * ttable-bench: {@link TTable} against a plain HBase {@code Table} in the same run, on the no-HDFS HBase minicluster
 * ({@link EmbeddedHBase}) with an in-process status oracle (the same set-up as the client tests' MiniCluster).
 *
 * <p>Operations, each a raw variant and transactional variants, measured in interleaved rounds (raw, tx, raw, tx,
 * ...; the order is reversed every other round, so drift in the machine's load hits both sides alike):
 * <ul>
 *   <li>single-row get of a random row: raw {@code Table.get}; TTable with one get per transaction (begin, get,
 *       commit: a read-only commit is local) and with G gets per transaction;</li>
 *   <li>scan of 100 rows from a random start row;</li>
 *   <li>put + commit: raw {@code Table.put} of one row against a TTable transaction of one put; and, commit
 *       amortized, a raw {@code Table.put} of a batch of K rows against a TTable transaction of K puts (both one
 *       HBase Multi of K rows), reported per row. HBase has no commit: a raw put is durable when it returns.</li>
 * </ul>
 * Reads go to a table loaded (transactionally, then flushed) before the rounds; raw and transactional writes go to
 * two separate tables so that neither side reads or writes the other's versions.
 */
public final class TTableBench {
    static final byte[] CF = Bytes.toBytes("cf");
    static final TableName READ_TABLE = TableName.valueOf("bench_read");
    static final TableName RAW_WRITE_TABLE = TableName.valueOf("bench_write_raw");
    static final TableName TX_WRITE_TABLE = TableName.valueOf("bench_write_tx");
    /** Written by single-row transactions that the region server commits (the fast-path coprocessor loaded). */
    static final TableName FAST_WRITE_TABLE = TableName.valueOf("bench_write_fast");
    static final byte[] COUNTER = Bytes.toBytes("n");

    private final BenchFlags f;
    private final PrintStream out = System.out;
    private byte[][] keys;
    private byte[][] qualifiers;
    private TransactionManager tm;
    private TTable readT;
    private TTable writeT;
    private TTable fastT;
    private Worker[] workers;
    private ExecutorService pool;
    private Throwable firstError;
    private MetricsConnection rpcMetrics;
    /** Snapshot timestamp of the --explain variants (raw requests shaped like TTable's). */
    private long shapeTs;
    /** The oracle connection of the --explain variant that commits without HBase writes. */
    private OracleClient explainOracle;
    /** How long the --explain variants wait for one reply of the oracle. */
    private static final long ORACLE_WAIT_NANOS = TimeUnit.SECONDS.toNanos(30);

    private TTableBench(BenchFlags flags) {
        this.f = flags;
    }

    public static void main(String[] args) {
        // Keeps the minicluster's INFO chatter out of the report (unless set on the command line).
        EmbeddedHBase.quietLogging(Map.of("io.sibyl", "warn"));
        BenchFlags flags;
        try {
            flags = BenchFlags.parse(args);
        } catch (ParameterException e) {
            System.err.println("ttable-bench: " + e.getMessage());
            System.err.println(BenchFlags.usage());
            System.exit(2);
            return;
        }
        if (flags.help) {
            System.out.println(BenchFlags.usage());
            System.exit(0);
        }
        int code;
        try {
            code = new TTableBench(flags).run();
        } catch (Throwable t) {
            System.err.println("ttable-bench: failed: " + t);
            t.printStackTrace();
            code = 1;
        }
        System.out.flush();
        System.err.flush();
        System.exit(code); // the minicluster's and the oracle's threads die with the JVM
    }

    private int run() throws Exception {
        out.println("ttable-bench: " + f.describe());
        out.printf(Locale.ROOT, "machine: %d cores, load average %s at start; %s, heap %d MB%n",
                Runtime.getRuntime().availableProcessors(), MachineLoad.loadAverage(),
                System.getProperty("java.vm.name") + " " + System.getProperty("java.version"),
                Runtime.getRuntime().maxMemory() >> 20);
        out.flush();

        long t0 = System.nanoTime();
        // Not closed: the minicluster goes with the JVM at System.exit.
        EmbeddedHBase hbase = EmbeddedHBase.start(c -> {
            c.setInt("hbase.regionserver.handler.count", 16);
            c.setInt("hbase.master.handler.count", 8);
            c.setInt("hbase.client.retries.number", 10);
        });
        OracleServer oracle = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(1 << 20, 1 << 20, 1 << 14));
        Configuration cc = hbase.configuration();
        cc.setInt(TransactionManager.READ_VERSIONS, f.versions);
        cc.setBoolean(MetricsConnection.CLIENT_SIDE_METRICS_ENABLED_KEY, true); // RPCs per operation, per method
        Connection connection = ConnectionFactory.createConnection(cc);
        rpcMetrics = connection instanceof ClusterConnection cl ? cl.getConnectionMetrics() : null;
        if (rpcMetrics == null) {
            out.println("(no HBase client metrics: RPCs per operation are not reported)");
        }
        tm = TransactionManager.create(connection, "127.0.0.1", oracle.port());
        if (f.explain && f.ops.contains(BenchFlags.Group.PUT)) {
            // A second client, its replies read by the waiting threads as the manager's are: see --explain.
            explainOracle = OracleClient.connect("127.0.0.1", oracle.port(), 10_000, OracleCredentials.newClient(),
                    OracleTransport.WAITING_THREAD);
        }
        out.printf(Locale.ROOT, "minicluster (no HDFS) and in-process oracle up in %.1f s; one HBase connection"
                + " shared by raw and transactional clients%n", (System.nanoTime() - t0) / 1e9);

        try (Admin admin = connection.getAdmin()) {
            for (TableName t : new TableName[] {READ_TABLE, RAW_WRITE_TABLE, TX_WRITE_TABLE}) {
                admin.createTable(TableDescriptorBuilder.newBuilder(t).setColumnFamily(TTable.familyDescriptor(CF))
                        .build());
            }
            // The region server finds the oracle through the coprocessor's properties (it started before it).
            admin.createTable(TableDescriptorBuilder.newBuilder(FAST_WRITE_TABLE)
                    .setColumnFamily(TTable.familyDescriptor(CF))
                    .setCoprocessor(CoprocessorDescriptorBuilder.newBuilder(FastPathRequest.COPROCESSOR)
                            .setProperty(TransactionManager.ORACLE_ADDRESS, "127.0.0.1:" + oracle.port()).build())
                    .build());
            keys = new byte[f.rows][];
            for (int i = 0; i < f.rows; i++) {
                keys[i] = Keys.key(i);
            }
            qualifiers = new byte[f.columns][];
            for (int i = 0; i < f.columns; i++) {
                qualifiers[i] = Bytes.toBytes("c" + i);
            }
            readT = new TTable(connection, READ_TABLE);
            writeT = new TTable(connection, TX_WRITE_TABLE);
            fastT = new TTable(connection, FAST_WRITE_TABLE);
            workers = new Worker[f.threads];
            for (int i = 0; i < f.threads; i++) {
                workers[i] = new Worker(i, f.seed, f.valueSize, connection.getTable(READ_TABLE),
                        connection.getTable(RAW_WRITE_TABLE));
            }
            long t1 = System.nanoTime();
            load();
            admin.flush(READ_TABLE);
            Transaction after = tm.begin();
            shapeTs = after.getStartTimestamp(); // above every loaded version, like a later snapshot
            tm.commit(after);
            out.printf(Locale.ROOT, "loaded %d rows x %d columns x %d committed versions into %s through TTable,"
                            + " flushed, in %.1f s%n", f.rows, f.columns, f.loadVersions, READ_TABLE,
                    (System.nanoTime() - t1) / 1e9);
        }

        AtomicInteger threadNo = new AtomicInteger();
        pool = Executors.newFixedThreadPool(f.threads, r -> {
            Thread t = new Thread(r, "bench-" + threadNo.incrementAndGet());
            t.setDaemon(true);
            return t;
        });
        List<Variant> variants = variants();
        if (variants.isEmpty()) {
            if (f.stalenessSeconds > 0) { // the probe alone
                StalenessProbe.run(connection, oracle.port(), TX_WRITE_TABLE, CF, f.stalenessSeconds, out);
                return 0;
            }
            System.err.println("ttable-bench: no variant left to run (--ops/--only)");
            return 2;
        }
        if (f.warmupSeconds > 0) {
            // The minicluster's and the client's code paths need JIT compilation (on a busy 2-core machine HBase
            // gets run 3-4 times slower for the first 10-15 s): two passes over every variant, not recorded. Each
            // variant gets the whole warm-up: a transaction runs more code than a raw call, and with a warm-up shared
            // by all variants (1-2 s each) its CPU per operation still fell by half over the measured rounds.
            long tw = System.nanoTime();
            double each = f.warmupSeconds / 2.0;
            for (int pass = 0; pass < 2; pass++) {
                for (Variant v : variants) {
                    round(v, each, false, 0);
                }
            }
            out.printf(Locale.ROOT, "warm-up: %.0f s over all variants, not recorded%n",
                    (System.nanoTime() - tw) / 1e9);
        }
        System.gc();

        MachineLoad.Sample cpu0 = MachineLoad.Sample.take();
        long tm0 = System.nanoTime();
        for (int r = 1; r <= f.rounds; r++) {
            for (BenchFlags.Group g : BenchFlags.Group.values()) {
                List<Variant> order = new ArrayList<>();
                for (Variant v : variants) {
                    if (v.group == g) {
                        order.add(v);
                    }
                }
                if (r % 2 == 0) {
                    Collections.reverse(order);
                }
                for (Variant v : order) {
                    round(v, f.roundSeconds, true, r);
                }
            }
        }
        double measured = (System.nanoTime() - tm0) / 1e9;
        MachineLoad.Sample cpu1 = MachineLoad.Sample.take();

        Report report = new Report(f, variants);
        out.println();
        out.printf(Locale.ROOT, "measured %.0f s; load average %s at the end; %s%n", measured,
                MachineLoad.loadAverage(), MachineLoad.describe(cpu0, cpu1));
        report.print(out);
        if (f.stalenessSeconds > 0) {
            out.println();
            StalenessProbe.run(connection, oracle.port(), TX_WRITE_TABLE, CF, f.stalenessSeconds, out);
        }
        long errors = 0;
        for (Variant v : variants) {
            errors += v.errors;
        }
        if (errors > 0) {
            out.println("ERRORS: " + errors + " operations failed; first: " + firstError);
            if (firstError != null) {
                firstError.printStackTrace(out);
            }
            return 1;
        }
        return 0;
    }

    /** Loads the read table: {@code loadVersions} passes over every row, 1000 rows per transaction. */
    private void load() throws Exception {
        byte[] value = workers[0].value;
        for (int pass = 0; pass < f.loadVersions; pass++) {
            for (int i = 0; i < f.rows; i += 1000) {
                Transaction tx = tm.begin();
                for (int j = i; j < Math.min(f.rows, i + 1000); j++) {
                    readT.put(tx, put(keys[j], value));
                }
                tm.commit(tx);
            }
        }
    }

    private Put put(byte[] row, byte[] value) {
        Put p = new Put(row);
        for (byte[] q : qualifiers) {
            p.addColumn(CF, q, value);
        }
        return p;
    }

    private byte[] randomKey(Worker w) {
        return keys[w.random.nextInt(keys.length)];
    }

    /** A random row of the write tables (a larger key space: concurrent transactions rarely conflict). */
    private byte[] randomWriteKey(Worker w) {
        return Keys.key(w.random.nextInt(f.writeRows));
    }


    private Scan randomScan(Worker w) {
        int start = w.random.nextInt(keys.length - f.scanRows + 1);
        return new Scan().withStartRow(keys[start]).setLimit(f.scanRows).setCaching(f.scanRows);
    }

    private void checkRow(Result r) {
        if (r.size() != f.columns) {
            throw new AssertionError("read " + r.size() + " cells instead of " + f.columns + ": " + r);
        }
    }

    private int countScan(ResultScanner s) throws IOException {
        int n = 0;
        for (Result r : s) {
            checkRow(r);
            n++;
        }
        if (n != f.scanRows) {
            throw new AssertionError("scan returned " + n + " rows instead of " + f.scanRows);
        }
        return n;
    }

    /** One read in a transaction of the worker that is kept open for {@code perTx} reads (begin amortized). */
    private int readInTx(Worker w, int perTx, Read read) throws Exception {
        if (w.openTx == null) {
            w.openTx = tm.begin();
        }
        int n = read.run(w.openTx);
        if (++w.openTxReads >= perTx) {
            Transaction tx = w.openTx;
            w.openTx = null;
            w.openTxReads = 0;
            tm.commit(tx); // read-only: local, no round trip
        }
        return n;
    }

    /** One read in a read-only transaction begun from the replica (no begin round trip). */
    private int readInReadOnlyTx(Read read) throws Exception {
        Transaction tx = tm.beginReadOnly();
        try {
            return read.run(tx);
        } finally {
            tm.commit(tx); // ends without the oracle
        }
    }

    /** One read of an amortized-read variant, inside the worker's open transaction. */
    private interface Read {
        int run(Transaction tx) throws Exception;
    }

    private List<Variant> variants() {
        List<Variant> v = new ArrayList<>();
        int r = f.readsPerTx;
        int k = f.putsPerTx;
        if (f.ops.contains(BenchFlags.Group.GET)) {
            v.add(new Variant(BenchFlags.Group.GET, "raw Table.get", "get", w -> {
                checkRow(w.rawRead.get(new Get(randomKey(w))));
                return 1;
            }));
            if (f.explain) {
                v.add(new Variant(BenchFlags.Group.GET, "raw Table.get shaped like TTable's",
                        "get, time range, " + f.versions + " versions", w -> {
                    checkRow(w.rawRead.get(new Get(randomKey(w)).setTimeRange(0, shapeTs + 1)
                            .readVersions(f.versions)));
                    return 1;
                }));
                v.add(new Variant(BenchFlags.Group.GET, "oracle only: begin+commit", "begin+commit, no read",
                        w -> {
                    tm.commit(tm.begin()); // a read-only commit is local: this is the begin round trip
                    return 1;
                }));
            }
            v.add(new Variant(BenchFlags.Group.GET, "TTable.get, 1 get per tx", "begin+get+commit",
                    w -> readInTx(w, 1, tx -> get(tx, w))));
            if (r > 1) {
                v.add(new Variant(BenchFlags.Group.GET, "TTable.get, " + r + " gets per tx", "get",
                        w -> readInTx(w, r, tx -> get(tx, w))));
            }
            v.add(new Variant(BenchFlags.Group.GET, "TTable.get, 1 per read-only tx", "beginReadOnly+get+commit",
                    w -> readInReadOnlyTx(tx -> get(tx, w))));
            v.add(new Variant(BenchFlags.Group.GET, "TTable.getLatest", "getLatest (linearizable)", w -> {
                checkRow(readT.getLatest(tm, new Get(randomKey(w))));
                return 1;
            }));
        }
        if (f.ops.contains(BenchFlags.Group.SCAN)) {
            v.add(new Variant(BenchFlags.Group.SCAN, "raw Table scan", f.scanRows + "-row scan", w -> {
                try (ResultScanner s = w.rawRead.getScanner(randomScan(w))) {
                    return countScan(s);
                }
            }));
            if (f.explain) {
                v.add(new Variant(BenchFlags.Group.SCAN, "raw scan shaped like TTable's",
                        "scan, time range, " + f.versions + " versions", w -> {
                    Scan scan = randomScan(w).setTimeRange(0, shapeTs + 1).readVersions(f.versions);
                    try (ResultScanner s = w.rawRead.getScanner(scan)) {
                        return countScan(s);
                    }
                }));
            }
            v.add(new Variant(BenchFlags.Group.SCAN, "TTable scan, 1 scan per tx",
                    "begin+" + f.scanRows + "-row scan+commit", w -> readInTx(w, 1, tx -> scan(tx, w))));
            if (r > 1) {
                v.add(new Variant(BenchFlags.Group.SCAN, "TTable scan, " + r + " scans per tx",
                        f.scanRows + "-row scan", w -> readInTx(w, r, tx -> scan(tx, w))));
            }
            v.add(new Variant(BenchFlags.Group.SCAN, "TTable scan, 1 per read-only tx",
                    "beginReadOnly+" + f.scanRows + "-row scan+commit", w -> readInReadOnlyTx(tx -> scan(tx, w))));
        }
        if (f.ops.contains(BenchFlags.Group.PUT)) {
            v.add(new Variant(BenchFlags.Group.PUT, "raw Table.put, 1 row", "put", w -> {
                w.rawWrite.put(put(randomWriteKey(w), w.value));
                return 1;
            }));
            if (f.explain) {
                v.add(new Variant(BenchFlags.Group.PUT, "oracle only: begin+commit of " + k + " rows",
                        "begin+commit, no HBase", w -> {
                    long[] rowIds = new long[k];
                    for (int i = 0; i < k; i++) {
                        rowIds[i] = w.random.nextLong();
                    }
                    long startTs = explainOracle.await(explainOracle.begin(), ORACLE_WAIT_NANOS);
                    explainOracle.await(explainOracle.commit(startTs, rowIds), ORACLE_WAIT_NANOS);
                    return k;
                }));
            }
            v.add(new Variant(BenchFlags.Group.PUT, "TTable, 1 put per tx", "begin+put+commit",
                    w -> putTx(w, 1)));
            v.add(new Variant(BenchFlags.Group.PUT, "TTable.put(tm), fast path", "put committed by the server",
                    w -> {
                        fastT.put(tm, put(randomWriteKey(w), w.value));
                        return 1;
                    }));
            v.add(new Variant(BenchFlags.Group.PUT, "raw Table.increment", "increment", w -> {
                w.rawWrite.increment(new Increment(randomWriteKey(w)).addColumn(CF, COUNTER, 1));
                return 1;
            }));
            v.add(new Variant(BenchFlags.Group.PUT, "TTable, 1 increment per tx", "begin+increment+commit", w -> {
                Transaction tx = tm.begin();
                try {
                    writeT.increment(tx, new Increment(randomWriteKey(w)).addColumn(CF, COUNTER, 1));
                } catch (IOException | RuntimeException e) {
                    tm.rollback(tx);
                    throw e;
                }
                tm.commit(tx);
                return 1;
            }));
            v.add(new Variant(BenchFlags.Group.PUT, "TTable.increment(tm), fast path",
                    "increment committed by the server", w -> {
                        fastT.increment(tm, new Increment(randomWriteKey(w)).addColumn(CF, COUNTER, 1));
                        return 1;
                    }));
            if (k > 1) {
                v.add(new Variant(BenchFlags.Group.PUT, "TTable, " + k + " puts per tx",
                        "begin+" + k + " puts+commit", w -> putTx(w, k)));
                v.add(new Variant(BenchFlags.Group.PUT, "raw Table.put, batch of " + k + " rows",
                        "put of " + k + " rows", w -> {
                    List<Put> puts = new ArrayList<>(k);
                    for (int i = 0; i < k; i++) {
                        puts.add(put(randomWriteKey(w), w.value));
                    }
                    w.rawWrite.put(puts);
                    return k;
                }));
            }
        }
        if (!f.only.isEmpty()) {
            v.removeIf(x -> f.only.stream().noneMatch(x.name::contains));
        }
        return v;
    }

    private int get(Transaction tx, Worker w) throws IOException {
        checkRow(readT.get(tx, new Get(randomKey(w))));
        return 1;
    }

    private int scan(Transaction tx, Worker w) throws IOException {
        try (ResultScanner s = readT.getScanner(tx, randomScan(w))) {
            return countScan(s);
        }
    }

    private int putTx(Worker w, int k) throws Exception {
        Transaction tx = tm.begin();
        try {
            for (int i = 0; i < k; i++) {
                writeT.put(tx, put(randomWriteKey(w), w.value));
            }
        } catch (IOException | RuntimeException e) {
            tm.rollback(tx);
            throw e;
        }
        tm.commit(tx); // RollbackException (a write-write conflict) counts as an abort
        return k;
    }

    /** Runs one variant on every worker for {@code seconds}; records it if {@code record}. */
    private void round(Variant v, double seconds, boolean record, int roundNo) throws Exception {
        Map<String, Long> rpcs0 = rpcCounts();
        long cpu0 = processCpuNanos();
        long switches0 = MachineLoad.voluntarySwitches();
        Map<String, Long> byThread0 = f.explain ? MachineLoad.voluntarySwitchesByThread() : Map.of();
        long start = System.nanoTime();
        long deadline = start + (long) (seconds * 1e9);
        List<Future<?>> futures = new ArrayList<>();
        for (Worker w : workers) {
            futures.add(pool.submit(() -> w.runUntil(v.op, deadline, tm)));
        }
        for (Future<?> fu : futures) {
            fu.get();
        }
        long nanos = System.nanoTime() - start;
        long cpu = processCpuNanos() - cpu0;
        long switches1 = MachineLoad.voluntarySwitches();
        long switches = switches0 < 0 || switches1 < 0 ? -1 : switches1 - switches0;
        Map<String, Long> byThread = f.explain ? MachineLoad.voluntarySwitchesByThread() : Map.of();
        Map<String, Long> rpcs = rpcCounts();
        rpcs0.forEach((k, n) -> rpcs.merge(k, -n, Long::sum));
        Histogram h = Variant.newHistogram();
        long units = 0;
        long ops = 0;
        long aborts = 0;
        long errors = 0;
        long callerCpu = 0;
        for (Worker w : workers) {
            h.add(w.histogram);
            callerCpu += w.cpuNanos;
            units += w.units;
            ops += w.ops;
            aborts += w.aborts;
            errors += w.errors;
            if (firstError == null && w.firstError != null) {
                firstError = w.firstError;
            }
        }
        if (!record) {
            return;
        }
        v.add(units, ops, aborts, errors, nanos, h);
        v.cpuNanos += cpu;
        v.callerCpuNanos += callerCpu;
        v.switches = v.switches < 0 || switches < 0 ? -1 : v.switches + switches;
        rpcs.forEach((k, n) -> v.rpcs.merge(k, n, Long::sum));
        out.printf(Locale.ROOT, "  round %d/%d  %-5s %-34s %9.0f rows/s  p50 %6.0f  p99 %6.0f  mean %6.0f"
                        + "  max %7.0f us  cpu %5.0f us/op (caller %4.0f)  wake-ups %5.1f/op%s%s%n",
                roundNo, f.rounds, v.group.name().toLowerCase(Locale.ROOT), v.name, units * 1e9 / nanos,
                h.getValueAtPercentile(50) / 1e3, h.getValueAtPercentile(99) / 1e3, h.getMean() / 1e3,
                h.getMaxValue() / 1e3, ops == 0 ? 0.0 : cpu / 1e3 / ops, ops == 0 ? 0.0 : callerCpu / 1e3 / ops,
                ops == 0 || switches < 0 ? -1.0 : (double) switches / ops, aborts > 0 ? "  aborts " + aborts : "", errors > 0 ? "  ERRORS " + errors : "");
        if (f.explain && ops > 0) {
            StringBuilder b = new StringBuilder("      wake-ups per op by thread:");
            long opsDone = ops;
            byThread.forEach((group, n) -> {
                double perOp = (double) (n - byThread0.getOrDefault(group, 0L)) / opsDone;
                if (perOp >= 0.05) {
                    b.append(String.format(Locale.ROOT, "  %s %.2f", group, perOp));
                }
            });
            out.println(b);
        }
        out.flush();
    }

    /** CPU time used by this JVM so far (clients, minicluster and oracle), or 0 if unknown. */
    private static long processCpuNanos() {
        java.lang.management.OperatingSystemMXBean os = java.lang.management.ManagementFactory
                .getOperatingSystemMXBean();
        return os instanceof com.sun.management.OperatingSystemMXBean sun ? sun.getProcessCpuTime() : 0;
    }

    /** HBase RPCs made so far by the shared connection, per method (e.g. "Get", "Scan", "Multi", "Mutate"). */
    private Map<String, Long> rpcCounts() {
        Map<String, Long> m = new TreeMap<>();
        if (rpcMetrics != null) {
            rpcMetrics.getRpcCounters().forEach((name, counter) -> {
                String method = name.substring(name.lastIndexOf('_') + 1);
                m.merge(method, counter.getCount(), Long::sum);
            });
        }
        return m;
    }
}
