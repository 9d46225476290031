package io.sibyl.bench.ttable;

import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/** The settings of one ttable-bench run, parsed from {@code --flag value} or {@code --flag=value} arguments. */
final class BenchFlags {
    /** The three operation groups; each compares raw HBase with TTable. */
    enum Group { GET, SCAN, PUT }

    /** A bad command line, with the message to print before the usage. */
    static final class UsageException extends Exception {
        private static final long serialVersionUID = 1L;

        UsageException(String message) {
            super(message);
        }
    }

    private static final Set<String> VALUED = Set.of("rows", "write-rows", "threads", "rounds", "round-seconds",
            "warmup-seconds", "puts-per-tx", "reads-per-tx", "versions", "load-versions", "value-size", "columns",
            "scan-rows", "ops", "seed", "only", "staleness-seconds");

    int rows = 10_000;
    /** Key space of the writes (random rows of the two write tables). */
    int writeRows = 1_000_000;
    int threads = 4;
    int rounds = 6;
    double roundSeconds = 2;
    double warmupSeconds = 25;
    int putsPerTx = 10;
    int readsPerTx = 10;
    /** Versions per column the transactional reads fetch ({@code sibyl.client.read.versions}). */
    int versions = 3;
    /** Committed versions written per row of the read table at load (reads see the newest). */
    int loadVersions = 1;
    int valueSize = 100;
    int columns = 1;
    int scanRows = 100;
    /** Seconds of the staleness probe after the variants (0: none). */
    double stalenessSeconds = 0;
    Set<Group> ops = EnumSet.allOf(Group.class);
    long seed = 42;
    /** Extra variants that split the gap: raw requests shaped like TTable's, and the oracle's begin alone. */
    boolean explain;
    /** If set, only the variants whose name contains one of these texts run (for profiling one of them). */
    List<String> only = List.of();
    boolean help;

    static String usage() {
        return String.join("\n",
                "usage: ttable-bench [flags]   (flags take '--flag value' or '--flag=value')",
                "Compares TTable (snapshot-isolation transactions) with a plain HBase Table in one JVM: the no-HDFS",
                "HBase minicluster and an in-process oracle are started, a read table is loaded, then every operation",
                "runs in interleaved rounds (raw, tx, raw, tx, ...; the order flips every round) with T threads.",
                "",
                "  --rows N            rows in the read table                                     [10000]",
                "  --write-rows N      key space of the writes (random rows)                      [1000000]",
                "  --threads T         client threads                                             [4]",
                "  --rounds R          measured rounds per variant                                [6]",
                "  --round-seconds S   length of one round of one variant                         [2]",
                "  --warmup-seconds W  unrecorded warm-up, shared by all variants (2 passes)      [25]",
                "  --puts-per-tx K     rows written per transaction in the amortized write test   [10]",
                "  --reads-per-tx R    gets (scans) per transaction in the amortized read tests   [10]",
                "  --versions V        versions per column a transactional read fetches           [3]",
                "                      (sibyl.client.read.versions)",
                "  --load-versions L   committed versions per row in the read table               [1]",
                "  --value-size B      bytes per cell value                                       [100]",
                "  --columns C         columns per row (family cf)                                [1]",
                "  --scan-rows N       rows per scan                                              [100]",
                "  --ops LIST          comma list of get,scan,put                                 [get,scan,put]",
                "  --seed S            random seed                                                [42]",
                "  --only 'TEXT|TEXT'  run only the variants whose name contains a TEXT (to profile one)",
                "  --staleness-seconds S  then measure for S s how long after its acknowledgement a commit of",
                "                      one client is in read-only snapshots another client begins; with --only none,",
                "                      the probe alone                                            [0: not run]",
                "  --explain           add variants that split the gap: raw get and scan with TTable's request",
                "                      shape (time range, V versions), and the oracle's begin+commit alone",
                "                      (read-only, and with K row ids on a second oracle connection)",
                "",
                "Output: one line per variant and round, a table, and one RESULT line per comparison. Slowdown is",
                "raw throughput / tx throughput - 1 (the extra time per row).");
    }

    static BenchFlags parse(String... args) throws UsageException {
        BenchFlags f = new BenchFlags();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--help") || a.equals("-h")) {
                f.help = true;
                continue;
            }
            if (!a.startsWith("--")) {
                throw new UsageException("unexpected argument '" + a + "'");
            }
            String name = a.substring(2);
            String value;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            } else if (VALUED.contains(name)) {
                if (i + 1 >= args.length) {
                    throw new UsageException("--" + name + " needs a value");
                }
                value = args[++i];
            } else {
                value = null;
            }
            if (name.equals("explain") && value == null) {
                f.explain = true;
                continue;
            }
            if (!VALUED.contains(name)) {
                throw new UsageException("unknown flag --" + name);
            }
            f.set(name, value);
        }
        f.check();
        return f;
    }

    private void set(String name, String value) throws UsageException {
        switch (name) {
            case "rows" -> rows = intValue(name, value);
            case "write-rows" -> writeRows = intValue(name, value);
            case "threads" -> threads = intValue(name, value);
            case "rounds" -> rounds = intValue(name, value);
            case "round-seconds" -> roundSeconds = doubleValue(name, value);
            case "warmup-seconds" -> warmupSeconds = doubleValue(name, value);
            case "puts-per-tx" -> putsPerTx = intValue(name, value);
            case "reads-per-tx" -> readsPerTx = intValue(name, value);
            case "versions" -> versions = intValue(name, value);
            case "load-versions" -> loadVersions = intValue(name, value);
            case "value-size" -> valueSize = intValue(name, value);
            case "columns" -> columns = intValue(name, value);
            case "scan-rows" -> scanRows = intValue(name, value);
            case "staleness-seconds" -> stalenessSeconds = doubleValue(name, value);
            case "seed" -> seed = longValue(name, value);
            case "only" -> only = List.of(value.split("\\|"));
            case "ops" -> {
                ops = EnumSet.noneOf(Group.class);
                for (String s : value.split(",")) {
                    String op = s.trim().toUpperCase(Locale.ROOT);
                    try {
                        ops.add(Group.valueOf(op));
                    } catch (IllegalArgumentException e) {
                        throw new UsageException("--ops: unknown operation '" + s.trim() + "' (get, scan, put)");
                    }
                }
            }
            default -> throw new UsageException("unknown flag --" + name);
        }
    }

    private void check() throws UsageException {
        require(rows >= 1, "--rows must be >= 1");
        require(writeRows >= 1 && writeRows < 1_000_000_000, "--write-rows must be in 1..999999999");
        require(rows < 1_000_000_000, "--rows must be < 1000000000");
        require(threads >= 1, "--threads must be >= 1");
        require(rounds >= 1, "--rounds must be >= 1");
        require(roundSeconds > 0, "--round-seconds must be > 0");
        require(warmupSeconds >= 0, "--warmup-seconds must be >= 0");
        require(putsPerTx >= 1, "--puts-per-tx must be >= 1");
        require(readsPerTx >= 1, "--reads-per-tx must be >= 1");
        require(versions >= 1, "--versions must be >= 1");
        require(loadVersions >= 1, "--load-versions must be >= 1");
        require(valueSize >= 1, "--value-size must be >= 1");
        require(columns >= 1, "--columns must be >= 1");
        require(scanRows >= 1, "--scan-rows must be >= 1");
        require(stalenessSeconds >= 0, "--staleness-seconds must be >= 0");
        require(!ops.contains(Group.SCAN) || scanRows <= rows, "--scan-rows must not exceed --rows");
        require(!ops.isEmpty(), "--ops is empty");
    }

    private static void require(boolean ok, String message) throws UsageException {
        if (!ok) {
            throw new UsageException(message);
        }
    }

    private static int intValue(String name, String value) throws UsageException {
        try {
            return Integer.parseInt(value.replace("_", ""));
        } catch (NumberFormatException | NullPointerException e) {
            throw new UsageException("--" + name + ": not an integer: " + value);
        }
    }

    private static long longValue(String name, String value) throws UsageException {
        try {
            return Long.parseLong(value);
        } catch (NumberFormatException | NullPointerException e) {
            throw new UsageException("--" + name + ": not an integer: " + value);
        }
    }

    private static double doubleValue(String name, String value) throws UsageException {
        try {
            return Double.parseDouble(value);
        } catch (NumberFormatException | NullPointerException e) {
            throw new UsageException("--" + name + ": not a number: " + value);
        }
    }

    String describe() {
        return String.format(Locale.ROOT, "rows=%d write-rows=%d threads=%d rounds=%d round-seconds=%s"
                        + " warmup-seconds=%s puts-per-tx=%d reads-per-tx=%d versions=%d load-versions=%d"
                        + " value-size=%d columns=%d scan-rows=%d ops=%s seed=%d%s", rows, writeRows, threads, rounds,
                fmt(roundSeconds), fmt(warmupSeconds), putsPerTx, readsPerTx, versions, loadVersions, valueSize,
                columns, scanRows,
                ops.toString().toLowerCase(Locale.ROOT).replace(" ", "").replace("[", "").replace("]", ""), seed,
                explain ? " explain" : "");
    }

    /** A number without a trailing ".0" when it is whole. */
    static String fmt(double d) {
        return d == Math.rint(d) ? Long.toString((long) d) : Double.toString(d);
    }
}
