package io.sibyl.client;

import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.CompareOperator;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Mutation;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.filter.BinaryComparator;
import org.apache.hadoop.hbase.filter.BinaryPrefixComparator;
import org.apache.hadoop.hbase.filter.ColumnPrefixFilter;
import org.apache.hadoop.hbase.filter.Filter;
import org.apache.hadoop.hbase.filter.PrefixFilter;
import org.apache.hadoop.hbase.filter.ValueFilter;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.NavigableMap;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.function.BiPredicate;
import java.util.function.Predicate;
import java.util.stream.LongStream;

import static io.sibyl.client.TestSupport.b;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * Transactional reads return exactly the snapshot: seeded random histories of interleaved transactions (puts,
 * column, family and row deletes, commits with first-committer-wins conflicts, rollbacks, and clients that crash
 * leaving aborted versions behind) run single-threaded on the minicluster and the real oracle, and every get,
 * multi-get, exists and scan is compared, cell by cell and with each cell's timestamp, with an exact in-memory model:
 * the commits that completed before the reader began, overlaid with the reader's own writes.
 */
@ExtendWith(MiniCluster.class)
class SnapshotReadModelTest {
    private static final int STEPS = 600;
    private static final int ROWS = 12;
    private static final List<String> FAMILIES = List.of("f1", "f2");
    private static final List<String> QUALIFIERS = List.of("q0", "q1", "q2");
    private static final int MAX_OPEN = 4;
    /** Readers fetch 3 versions (default) or 1 at a time; writers buffer, send at once, or spill some early. */
    private static final Map<String, Map<String, String>> SETTINGS = new LinkedHashMap<>();
    private static final Map<String, TransactionManager> MANAGERS = new LinkedHashMap<>();
    /** The oracle of a history run on a private oracle (see {@link #manager}); null: the shared one. */
    private static volatile OracleServer privateOracle;

    static {
        SETTINGS.put("buffered", Map.of());
        SETTINGS.put("writeThrough", Map.of(TransactionManager.WRITE_BUFFER_BYTES, "0"));
        SETTINGS.put("oneVersion", Map.of(TransactionManager.READ_VERSIONS, "1",
                TransactionManager.WRITE_BUFFER_BYTES, "256"));
    }

    @BeforeAll
    static void managers() throws IOException {
        for (String name : SETTINGS.keySet()) {
            MANAGERS.put(name, manager(SETTINGS.get(name)));
        }
    }

    /** A manager with {@code settings}, on the private oracle while one is set, else on the shared one. */
    static TransactionManager manager(Map<String, String> settings) throws IOException {
        OracleServer o = privateOracle;
        if (o == null) {
            return MiniCluster.get().manager(settings);
        }
        Map<String, String> s = new HashMap<>(settings);
        s.put(TransactionManager.ORACLE_ADDRESS, "127.0.0.1:" + o.port());
        return MiniCluster.get().manager(s);
    }

    @AfterAll
    static void close() {
        MANAGERS.values().forEach(TransactionManager::close);
        MANAGERS.clear();
    }

    /**
     * The fixed seeds, or others given as {@code -Dsibyl.model.seeds=7,8,9} to explore (then keep a failing one).
     * Each fixed seed failed before filters were told a scan is reversed and before a filter's NEXT_ROW ended only
     * its family; seed 1 also before scans of an empty one-row range with buffered rows stopped throwing.
     */
    static LongStream seeds() {
        String given = System.getProperty("sibyl.model.seeds", "");
        return given.isBlank() ? LongStream.of(1L, 42L, 20250607L)
                : Arrays.stream(given.split(",")).mapToLong(x -> Long.parseLong(x.trim()));
    }

    @ParameterizedTest(name = "seed {0}")
    @MethodSource("seeds")
    void randomHistoriesReadExactlyTheirSnapshot(long seed) throws Exception {
        MiniCluster c = MiniCluster.get();
        try (TTable table = new TTable(c.connection(), c.createTable("snapmodel", "f1", "f2"));
             History history = new History(seed, table)) {
            history.run();
        }
    }

    /**
     * One history on an oracle whose commit window holds 2 commits, so that T_max runs right behind the newest
     * commit: readers begin as T_max passes their writers, replicas trim around the readers still running, writers
     * below T_max (crashed clients' included) are judged by the aborted set alone, and transactions T_max passes end
     * too old, which the model takes as a rollback.
     */
    @Test
    void aHistoryReadsExactlyItsSnapshotWhileTmaxRacesBehindTheNewestCommit() throws Exception {
        MiniCluster c = MiniCluster.get();
        try (OracleServer small = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(8, 2, 1 << 12))) {
            close();
            privateOracle = small;
            try (TTable table = new TTable(c.connection(), c.createTable("snapmodel_tmax", "f1", "f2"));
                 History history = new History(6L, table)) {
                managers();
                history.run();
                assertTrue(history.tooOld > 0, "T_max passed running writers");
            } finally {
                close();
                privateOracle = null;
                managers();
            }
        }
    }

    // ---- the model ----------------------------------------------------------------------------------------------

    /** A column of one row, ordered as HBase orders cells (row, family, qualifier; all ASCII here). */
    record Col(String row, String family, String qualifier) implements Comparable<Col> {
        private static final Comparator<Col> ORDER = Comparator.comparing(Col::row).thenComparing(Col::family)
                .thenComparing(Col::qualifier);

        @Override
        public int compareTo(Col o) {
            return ORDER.compare(this, o);
        }

        @Override
        public String toString() {
            return row + "/" + family + ":" + qualifier;
        }
    }

    /** A version of a column: its value (null: deleted) and the start timestamp of the transaction that wrote it. */
    record Version(String value, long writer) {
    }

    /** Snapshot isolation, exactly: the committed state after each commit, and first-committer-wins per row. */
    static final class Model {
        /** Visible committed cells. Replaced, never changed, by a commit, so a transaction keeps its snapshot. */
        private NavigableMap<Col, Version> committed = new TreeMap<>();
        private int commits;
        private final Map<String, Integer> lastCommitOfRow = new HashMap<>();

        Tx begin(Transaction tx, TransactionManager manager, String label, String managerName) {
            return new Tx(tx, manager, label, managerName, committed, commits);
        }

        /** False if a row {@code t} wrote was committed by another transaction after {@code t} began. */
        boolean mayCommit(Tx t) {
            for (String row : t.rows) {
                if (lastCommitOfRow.getOrDefault(row, 0) > t.commitsAtStart) {
                    return false;
                }
            }
            return true;
        }

        void commit(Tx t) {
            if (t.rows.isEmpty()) {
                return; // read-only: nothing to order
            }
            commits++;
            committed = overlay(committed, t.own);
            for (String row : t.rows) {
                lastCommitOfRow.put(row, commits);
            }
        }

        static NavigableMap<Col, Version> overlay(NavigableMap<Col, Version> base, NavigableMap<Col, Version> own) {
            NavigableMap<Col, Version> out = new TreeMap<>(base);
            own.forEach((col, v) -> {
                if (v.value() == null) {
                    out.remove(col);
                } else {
                    out.put(col, v);
                }
            });
            return out;
        }
    }

    /** An open transaction: the snapshot it began with, its own writes (null value: deleted) and the rows written. */
    static final class Tx {
        final Transaction tx;
        final TransactionManager manager;
        final String label;
        final String managerName;
        final NavigableMap<Col, Version> snapshot;
        final int commitsAtStart;
        final NavigableMap<Col, Version> own = new TreeMap<>();
        final Set<String> rows = new TreeSet<>();

        Tx(Transaction tx, TransactionManager manager, String label, String managerName,
           NavigableMap<Col, Version> snapshot, int commitsAtStart) {
            this.tx = tx;
            this.manager = manager;
            this.label = label;
            this.managerName = managerName;
            this.snapshot = snapshot;
            this.commitsAtStart = commitsAtStart;
        }

        /** What this transaction must read: its snapshot overlaid with its own writes. */
        NavigableMap<Col, Version> view() {
            return Model.overlay(snapshot, own);
        }

        void put(Col c, String value) {
            own.put(c, new Version(value, tx.getStartTimestamp()));
            rows.add(c.row());
        }

        void delete(Col c) {
            own.put(c, new Version(null, tx.getStartTimestamp()));
            rows.add(c.row());
        }

        /** A row or family delete: every column this transaction sees there; the row is written even if none. */
        void deleteVisible(String row, String familyOrAll) {
            for (Col c : view().keySet()) {
                if (c.row().equals(row) && (familyOrAll == null || c.family().equals(familyOrAll))) {
                    delete(c);
                }
            }
            rows.add(row);
        }

        @Override
        public String toString() {
            List<String> writes = new ArrayList<>();
            own.forEach((c, v) -> writes.add(c + (v.value() == null ? " deleted" : "=" + v.value())));
            return label + " (manager " + managerName + ", start " + tx.getStartTimestamp() + ", began after "
                    + commitsAtStart + " commits, own writes " + writes + ")";
        }
    }

    // ---- reads as generated: the HBase request and what the model applies --------------------------------------

    /** Columns a read selects: family -> qualifiers (empty: the whole family); no family at all: every column. */
    record Selection(Map<String, Set<String>> columns) {
        static final Selection ALL = new Selection(Map.of());

        boolean selects(Col c) {
            Set<String> qs = columns.get(c.family());
            return columns.isEmpty() || qs != null && (qs.isEmpty() || qs.contains(c.qualifier()));
        }

        Get addTo(Get g) {
            columns.forEach((f, qs) -> {
                if (qs.isEmpty()) {
                    g.addFamily(b(f));
                }
                qs.forEach(q -> g.addColumn(b(f), b(q)));
            });
            return g;
        }

        Scan addTo(Scan s) {
            columns.forEach((f, qs) -> {
                if (qs.isEmpty()) {
                    s.addFamily(b(f));
                }
                qs.forEach(q -> s.addColumn(b(f), b(q)));
            });
            return s;
        }

        @Override
        public String toString() {
            return columns.isEmpty() ? "all columns" : columns.toString();
        }
    }

    /** A filter as HBase gets it, and as the model applies it: to the row key and to each selected cell. */
    record ReadFilter(String name, Filter hbase, Predicate<String> keepsRow, BiPredicate<Col, String> keepsCell) {
        static final ReadFilter NONE = new ReadFilter("no filter", null, row -> true, (c, v) -> true);

        @Override
        public String toString() {
            return name;
        }
    }

    /** A generated Get. */
    record GetSpec(String row, Selection columns, ReadFilter filter) {
        Get toGet() {
            return columns.addTo(new Get(b(row))).setFilter(filter.hbase());
        }

        @Override
        public String toString() {
            return row + " " + columns + ", " + filter;
        }
    }

    /** A generated Scan; {@code low}/{@code high} are the row bounds whatever the direction (null: open). */
    record ScanSpec(String low, boolean lowIncluded, String high, boolean highIncluded, boolean reversed, int limit,
                    int batch, int caching, Selection columns, ReadFilter filter) {
        Scan toScan() {
            Scan s = columns.addTo(new Scan());
            String start = reversed ? high : low;
            String stop = reversed ? low : high;
            if (start != null) {
                s.withStartRow(b(start), reversed ? highIncluded : lowIncluded);
            }
            if (stop != null) {
                s.withStopRow(b(stop), reversed ? lowIncluded : highIncluded);
            }
            s.setReversed(reversed).setFilter(filter.hbase());
            if (limit > 0) {
                s.setLimit(limit);
            }
            if (batch > 0) {
                s.setBatch(batch);
            }
            if (caching > 0) {
                s.setCaching(caching);
            }
            return s;
        }

        boolean inRange(String row) {
            int lo = low == null ? 1 : row.compareTo(low);
            int hi = high == null ? -1 : row.compareTo(high);
            return (lo > 0 || lo == 0 && lowIncluded) && (hi < 0 || hi == 0 && highIncluded);
        }

        @Override
        public String toString() {
            return (reversed ? "reversed " : "") + (lowIncluded ? "[" : "(") + (low == null ? "-" : low) + ", "
                    + (high == null ? "-" : high) + (highIncluded ? "]" : ")") + " " + columns + ", " + filter
                    + (limit > 0 ? ", limit " + limit : "") + (batch > 0 ? ", batch " + batch : "")
                    + (caching > 0 ? ", caching " + caching : "");
        }
    }

    // ---- one seeded history: step generator, model and comparator ----------------------------------------------

    /** Picks steps with a seeded random generator, runs each on the cluster and on the model, and compares reads. */
    private static final class History implements AutoCloseable {
        private final long seed;
        private final Random rnd;
        private final TTable table;
        private final Model model = new Model();
        private final List<Tx> open = new ArrayList<>();
        /** Start timestamp to label (t7, z3), so that cell timestamps read as writers in messages. */
        private final Map<Long, String> writers = new HashMap<>();
        private final ArrayDeque<String> recent = new ArrayDeque<>();
        /** Writes at once and is killed now and then: its transactions abort and leave their versions behind. */
        private TransactionManager crashy;
        private final List<Transaction> zombies = new ArrayList<>();
        private int step;
        private int transactions;
        private int values;
        private int reads;
        private int conflicts;
        private int rollbacks;
        private int crashes;
        private int tooOld;
        private int reconnects;

        History(long seed, TTable table) throws IOException {
            this.seed = seed;
            this.rnd = new Random(seed);
            this.table = table;
            this.crashy = newCrashy();
        }

        private static TransactionManager newCrashy() throws IOException {
            return manager(Map.of(TransactionManager.WRITE_BUFFER_BYTES, "0"));
        }

        void run() throws Exception {
            for (step = 1; step <= STEPS; step++) {
                try {
                    randomStep();
                } catch (IOException | RuntimeException e) {
                    throw new AssertionError(context(null, "unexpected " + e), e);
                }
            }
            while (!open.isEmpty()) {
                commit(pick());
            }
            // Readers that begin after the whole history see exactly the final committed state.
            for (String name : MANAGERS.keySet()) {
                Tx t = begin(name);
                ScanSpec all = new ScanSpec(null, true, null, false, false, 0, 0, 0, Selection.ALL, ReadFilter.NONE);
                compare(t, "final scan " + all, expectedScan(t, all), actualScan(t, all));
                commit(t);
            }
            int versions = mostVersionsOfAColumn();
            System.out.printf("seed %d: %d steps, %d reads, %d commits with writes, %d conflicts, %d rollbacks,"
                    + " %d crashes, %d new managers, up to %d versions of a column%n", seed, STEPS, reads,
                    model.commits, conflicts, rollbacks, crashes, reconnects, versions);
            // The history must have reached what it is meant to check, or a change of the generator went unnoticed.
            assertTrue(conflicts > 0 && rollbacks > 0 && crashes > 0 && reconnects > 0,
                    "conflicts, rollbacks, crashes and new managers happen");
            assertTrue(versions >= 6, "columns pile up twice the versions a reader fetches at once (default 3), not "
                    + versions);
        }

        private void randomStep() throws IOException {
            int r = rnd.nextInt(100);
            if (open.isEmpty() || r < 12 && open.size() < MAX_OPEN) {
                begin();
            } else if (r < 37) {
                write(pick());
            } else if (r < 70) {
                read(pick());
            } else if (r < 82) {
                commit(pick());
            } else if (r < 85) {
                rollback(pick());
            } else if (r < 97 || zombies.isEmpty()) {
                zombieWrite();
            } else if (r < 98) {
                crash();
            } else {
                reconnect(); // does nothing while every manager runs a transaction
            }
        }

        /** The most versions one column has in HBase (committed, aborted and never committed alike). */
        private int mostVersionsOfAColumn() throws IOException {
            int most = 0;
            try (Table raw = MiniCluster.get().raw(table.getName());
                 ResultScanner scanner = raw.getScanner(new Scan().readAllVersions())) {
                for (Result r : scanner) {
                    for (NavigableMap<byte[], NavigableMap<Long, byte[]>> family : r.getMap().values()) {
                        for (NavigableMap<Long, byte[]> versions : family.values()) {
                            most = Math.max(most, versions.size());
                        }
                    }
                }
            }
            return most;
        }

        private Tx pick() {
            return open.get(rnd.nextInt(open.size()));
        }

        private void log(String what) {
            recent.addLast("step " + step + ": " + what);
            if (recent.size() > 40) {
                recent.removeFirst();
            }
        }

        private Tx begin() {
            List<String> names = List.copyOf(MANAGERS.keySet());
            return begin(names.get(rnd.nextInt(names.size())));
        }

        private Tx begin(String managerName) {
            TransactionManager m = MANAGERS.get(managerName);
            Tx t = model.begin(m.begin(), m, "t" + ++transactions, managerName);
            writers.put(t.tx.getStartTimestamp(), t.label);
            open.add(t);
            log("begin " + t);
            return t;
        }

        private void commit(Tx t) {
            boolean mayCommit = model.mayCommit(t);
            String outcome;
            try {
                t.manager.commit(t.tx);
                outcome = "committed";
            } catch (RollbackException e) {
                outcome = "rolled back: " + e.getReason();
            }
            open.remove(t);
            log("commit " + t.label + ": " + outcome);
            OracleServer o = privateOracle;
            if (o != null && outcome.equals("rolled back: " + RollbackException.Reason.TOO_OLD)
                    && o.tMax() > t.tx.getStartTimestamp()) {
                tooOld++; // T_max passed it (the oracle checks that before conflicts): rolled back
                return;
            }
            String expected = mayCommit ? "committed" : "rolled back: CONFLICT";
            if (!expected.equals(outcome)) {
                fail(context(t, "commit") + "expected " + expected + ", got " + outcome);
            }
            if (mayCommit) {
                model.commit(t);
            } else {
                conflicts++;
            }
        }

        private void rollback(Tx t) {
            t.manager.rollback(t.tx);
            open.remove(t);
            rollbacks++;
            log("rollback " + t.label);
        }

        // ---- writes ---------------------------------------------------------------------------------------------

        private void write(Tx t) throws IOException {
            String row = randomRow();
            int k = rnd.nextInt(10);
            if (k < 5) {
                List<Put> puts = new ArrayList<>();
                puts.add(randomPut(t, row));
                if (k == 0) {
                    puts.add(randomPut(t, randomRow())); // several puts in one call
                }
                table.put(t.tx, puts);
                log(t.label + " put " + puts.stream().map(History::describe).toList());
            } else if (k < 7) {
                Delete d = new Delete(b(row));
                for (Col c : randomColumns(row, 1 + rnd.nextInt(2))) {
                    if (rnd.nextBoolean()) {
                        d.addColumn(b(c.family()), b(c.qualifier()));
                    } else {
                        d.addColumns(b(c.family()), b(c.qualifier()));
                    }
                    t.delete(c);
                }
                table.delete(t.tx, d);
                log(t.label + " delete columns " + describe(d));
            } else if (k < 9) {
                String f = FAMILIES.get(rnd.nextInt(FAMILIES.size()));
                t.deleteVisible(row, f);
                table.delete(t.tx, new Delete(b(row)).addFamily(b(f)));
                log(t.label + " delete family " + row + "/" + f);
            } else {
                t.deleteVisible(row, null);
                table.delete(t.tx, new Delete(b(row)));
                log(t.label + " delete row " + row);
            }
        }

        private Put randomPut(Tx t, String row) {
            return randomPut(t, row, 3);
        }

        private Put randomPut(Tx t, String row, int maxColumns) {
            Put p = new Put(b(row));
            for (Col c : randomColumns(row, 1 + rnd.nextInt(maxColumns))) {
                String v = randomValue();
                p.addColumn(b(c.family()), b(c.qualifier()), b(v));
                if (t != null) {
                    t.put(c, v);
                }
            }
            return p;
        }

        /** Versions of transactions that abort without cleaning up: on HBase, never in any snapshot. */
        private void zombieWrite() throws IOException {
            Transaction z;
            if (zombies.isEmpty() || zombies.size() < 6 && rnd.nextInt(3) != 0) {
                z = crashy.begin();
                zombies.add(z);
                writers.put(z.getStartTimestamp(), "z" + ++transactions);
            } else {
                z = zombies.get(rnd.nextInt(zombies.size()));
            }
            String row = rnd.nextInt(4) == 0 ? randomRow() : row(rnd.nextInt(3)); // mostly the hot rows
            if (rnd.nextInt(4) == 0) {
                Col c = randomColumns(row, 1).iterator().next();
                table.delete(z, new Delete(b(row)).addColumn(b(c.family()), b(c.qualifier())));
                log(writers.get(z.getStartTimestamp()) + " (never commits) deletes " + c);
            } else {
                // Wide puts on hot rows stack invisible versions over the columns other transactions read.
                Put p = randomPut(null, row, FAMILIES.size() * QUALIFIERS.size());
                table.put(z, p);
                log(writers.get(z.getStartTimestamp()) + " (never commits) puts " + describe(p));
            }
        }

        /** Like kill -9 of a client: the oracle aborts its transactions, and nobody deletes their versions. */
        private void crash() throws IOException {
            crashy.oracle().close();
            // Frees its HBase resources. The manager itself is dropped unclosed, as a dead process leaves it:
            // closing it would roll its transactions back and delete their versions.
            crashy.getConnection().close();
            log("crash of the client running " + zombies.size() + " unfinished transaction(s)");
            zombies.clear();
            crashy = newCrashy();
            crashes++;
        }

        /**
         * Replaces a manager that runs no transaction by a new one, whose replica begins now: writers older than its
         * connection are judged by the aborted set it receives then, or by asking the oracle.
         */
        private void reconnect() throws IOException {
            List<String> idle = new ArrayList<>(MANAGERS.keySet());
            open.forEach(t -> idle.remove(t.managerName));
            if (idle.isEmpty()) {
                return;
            }
            String name = idle.get(rnd.nextInt(idle.size()));
            MANAGERS.get(name).close();
            MANAGERS.put(name, manager(SETTINGS.get(name)));
            reconnects++;
            log("manager " + name + " replaced by a new one");
        }

        // ---- reads ----------------------------------------------------------------------------------------------

        private void read(Tx t) throws IOException {
            reads++;
            int k = rnd.nextInt(10);
            if (k < 3) {
                GetSpec g = randomGet();
                log(t.label + " get " + g);
                compare(t, "get " + g, List.of(expectedGet(t, g)), List.of(line(table.get(t.tx, g.toGet()))));
            } else if (k < 4) {
                List<GetSpec> specs = new ArrayList<>();
                for (int i = 1 + rnd.nextInt(4); i > 0; i--) {
                    specs.add(randomGet());
                }
                List<Get> gets = new ArrayList<>();
                List<String> expected = new ArrayList<>();
                for (GetSpec g : specs) {
                    gets.add(g.toGet());
                    expected.add(expectedGet(t, g));
                }
                List<String> actual = new ArrayList<>();
                for (Result r : table.get(t.tx, gets)) {
                    actual.add(line(r));
                }
                log(t.label + " multi-get " + specs);
                compare(t, "multi-get " + specs, expected, actual);
            } else if (k < 5) {
                GetSpec g = randomGet();
                log(t.label + " exists " + g);
                boolean expected = !expectedGet(t, g).equals(EMPTY);
                compare(t, "exists " + g, List.of(Boolean.toString(expected)),
                        List.of(Boolean.toString(table.exists(t.tx, g.toGet()))));
            } else {
                ScanSpec s = randomScan();
                log(t.label + " scan " + s);
                compare(t, "scan " + s, expectedScan(t, s), actualScan(t, s));
            }
        }

        private GetSpec randomGet() {
            String row = rnd.nextInt(20) == 0 ? "r99" : randomRow();
            return new GetSpec(row, randomSelection(), rnd.nextInt(5) == 0 ? randomFilter() : ReadFilter.NONE);
        }

        private ScanSpec randomScan() {
            String low = null;
            String high = null;
            if (rnd.nextInt(3) != 0) {
                int lo = rnd.nextInt(ROWS + 1);
                low = rnd.nextInt(4) == 0 ? null : row(lo);
                high = rnd.nextInt(4) == 0 ? null : row(lo + rnd.nextInt(ROWS + 1 - lo));
            }
            return new ScanSpec(low, rnd.nextBoolean(), high, rnd.nextBoolean(), rnd.nextInt(3) == 0,
                    rnd.nextInt(4) == 0 ? 1 + rnd.nextInt(5) : 0, rnd.nextInt(4) == 0 ? 1 + rnd.nextInt(4) : 0,
                    rnd.nextInt(4) == 0 ? 1 + rnd.nextInt(3) : 0,
                    rnd.nextInt(10) < 3 ? randomSelection() : Selection.ALL,
                    rnd.nextInt(20) < 7 ? randomFilter() : ReadFilter.NONE);
        }

        private Selection randomSelection() {
            int k = rnd.nextInt(10);
            if (k < 4) {
                return Selection.ALL;
            }
            Map<String, Set<String>> m = new TreeMap<>();
            if (k < 6) {
                m.put(FAMILIES.get(rnd.nextInt(FAMILIES.size())), Set.of());
            } else {
                for (Col c : randomColumns("", 1 + rnd.nextInt(3))) {
                    m.computeIfAbsent(c.family(), f -> new TreeSet<>()).add(c.qualifier());
                }
            }
            return new Selection(m);
        }

        private ReadFilter randomFilter() {
            switch (rnd.nextInt(4)) {
                case 0 -> {
                    String p = letter();
                    return new ReadFilter("value starts with " + p,
                            new ValueFilter(CompareOperator.EQUAL, new BinaryPrefixComparator(b(p))),
                            row -> true, (c, v) -> v.startsWith(p));
                }
                case 1 -> {
                    String x = letter() + rnd.nextInt(10);
                    return new ReadFilter("value > " + x,
                            new ValueFilter(CompareOperator.GREATER, new BinaryComparator(b(x))),
                            row -> true, (c, v) -> v.compareTo(x) > 0);
                }
                case 2 -> {
                    String q = QUALIFIERS.get(rnd.nextInt(QUALIFIERS.size()));
                    return new ReadFilter("qualifier starts with " + q, new ColumnPrefixFilter(b(q)),
                            row -> true, (c, v) -> c.qualifier().startsWith(q));
                }
                default -> {
                    String p = rnd.nextBoolean() ? randomRow().substring(0, 2) : randomRow();
                    return new ReadFilter("row starts with " + p, new PrefixFilter(b(p)),
                            row -> row.startsWith(p), (c, v) -> true);
                }
            }
        }

        /** A put or column delete as {@code row f:q=value ...}, for the step log. */
        private static String describe(Mutation m) {
            StringBuilder sb = new StringBuilder(Bytes.toString(m.getRow()));
            m.getFamilyCellMap().values().forEach(cells -> cells.forEach(c -> sb.append(' ')
                    .append(Bytes.toString(CellUtil.cloneFamily(c))).append(':')
                    .append(Bytes.toString(CellUtil.cloneQualifier(c)))
                    .append(m instanceof Put ? "=" + Bytes.toString(CellUtil.cloneValue(c)) : "")));
            return sb.toString();
        }

        /** Half the time one of three hot rows, so that their columns pile up versions readers must walk past. */
        private String randomRow() {
            return row(rnd.nextInt(rnd.nextBoolean() ? 3 : ROWS));
        }

        private static String row(int i) {
            return String.format("r%02d", i);
        }

        /** {@code n} distinct columns of {@code row}, in random order. */
        private Set<Col> randomColumns(String row, int n) {
            Set<Col> out = new TreeSet<>();
            while (out.size() < n) {
                out.add(new Col(row, FAMILIES.get(rnd.nextInt(FAMILIES.size())),
                        QUALIFIERS.get(rnd.nextInt(QUALIFIERS.size()))));
            }
            return out;
        }

        /** Values start with a, b or c, so that value filters keep some cells and drop others. */
        private String randomValue() {
            return letter() + ++values;
        }

        private String letter() {
            return String.valueOf((char) ('a' + rnd.nextInt(3)));
        }

        // ---- expected (model) and actual (cluster) results, one line per Result --------------------------------

        private static final String EMPTY = "(empty)";

        /** The rows {@code t} must read through this selection and filter: each row's cells, in HBase order. */
        private NavigableMap<String, List<Map.Entry<Col, Version>>> expectedRows(Tx t, Selection sel, ReadFilter f) {
            NavigableMap<String, List<Map.Entry<Col, Version>>> rows = new TreeMap<>();
            for (Map.Entry<Col, Version> e : t.view().entrySet()) {
                Col c = e.getKey();
                if (sel.selects(c) && f.keepsRow().test(c.row()) && f.keepsCell().test(c, e.getValue().value())) {
                    rows.computeIfAbsent(c.row(), r -> new ArrayList<>()).add(e);
                }
            }
            return rows;
        }

        private String expectedGet(Tx t, GetSpec g) {
            List<Map.Entry<Col, Version>> cells = expectedRows(t, g.columns(), g.filter()).get(g.row());
            return cells == null ? EMPTY : line(g.row(), cells);
        }

        private List<String> expectedScan(Tx t, ScanSpec s) {
            NavigableMap<String, List<Map.Entry<Col, Version>>> rows = expectedRows(t, s.columns(), s.filter());
            List<String> out = new ArrayList<>();
            int returned = 0;
            for (Map.Entry<String, List<Map.Entry<Col, Version>>> r
                    : (s.reversed() ? rows.descendingMap() : rows).entrySet()) {
                if (!s.inRange(r.getKey()) || s.limit() > 0 && returned == s.limit()) {
                    continue;
                }
                returned++;
                List<Map.Entry<Col, Version>> cells = r.getValue();
                int chunk = s.batch() > 0 ? s.batch() : cells.size();
                for (int i = 0; i < cells.size(); i += chunk) {
                    out.add(line(r.getKey(), cells.subList(i, Math.min(cells.size(), i + chunk))));
                }
            }
            return out;
        }

        private List<String> actualScan(Tx t, ScanSpec s) throws IOException {
            List<String> out = new ArrayList<>();
            try (ResultScanner scanner = table.getScanner(t.tx, s.toScan())) {
                for (Result r : scanner) {
                    out.add(line(r));
                }
            }
            return out;
        }

        private String line(String row, List<Map.Entry<Col, Version>> cells) {
            StringBuilder sb = new StringBuilder(row);
            for (Map.Entry<Col, Version> e : cells) {
                sb.append(' ').append(cell(e.getKey().family(), e.getKey().qualifier(), e.getValue().value(),
                        e.getValue().writer()));
            }
            return sb.toString();
        }

        private String line(Result r) {
            if (r.isEmpty()) {
                return EMPTY;
            }
            StringBuilder sb = new StringBuilder(Bytes.toStringBinary(r.getRow()));
            for (Cell c : r.rawCells()) {
                if (!CellUtil.matchingRows(c, r.getRow())) {
                    sb.append(" [row ").append(Bytes.toStringBinary(CellUtil.cloneRow(c))).append("]");
                }
                sb.append(' ').append(cell(Bytes.toStringBinary(CellUtil.cloneFamily(c)),
                        Bytes.toStringBinary(CellUtil.cloneQualifier(c)), Bytes.toStringBinary(CellUtil.cloneValue(c)),
                        c.getTimestamp()));
            }
            return sb.toString();
        }

        private String cell(String family, String qualifier, String value, long ts) {
            return family + ":" + qualifier + "=" + value + "@" + writers.getOrDefault(ts, Long.toString(ts));
        }

        // ---- comparator -----------------------------------------------------------------------------------------

        private void compare(Tx t, String what, List<String> expected, List<String> actual) {
            if (expected.equals(actual)) {
                return;
            }
            StringBuilder m = new StringBuilder(context(t, what));
            m.append("expected (- not read):\n");
            for (String line : expected) {
                m.append(actual.contains(line) ? "    " : "  - ").append(line).append('\n');
            }
            m.append("actual (+ not expected):\n");
            for (String line : actual) {
                m.append(expected.contains(line) ? "    " : "  + ").append(line).append('\n');
            }
            fail(m.toString());
        }

        private String context(Tx t, String what) {
            StringBuilder m = new StringBuilder("seed " + seed + ", step " + step + ": " + what
                    + (t == null ? "" : " in " + t) + "\n");
            m.append("last steps:\n");
            recent.forEach(s -> m.append("  ").append(s).append('\n'));
            return m.toString();
        }

        @Override
        public void close() {
            for (Tx t : open) {
                t.manager.rollback(t.tx);
            }
            crashy.close();
        }
    }
}
