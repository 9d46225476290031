package io.sibyl.bench.ttable;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;

import java.util.EnumSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;

/** The settings of one ttable-bench run, parsed from {@code --flag value} or {@code --flag=value} arguments. */
@Command(name = "ttable-bench", sortOptions = false, abbreviateSynopsis = true, usageHelpWidth = 110,
        description = {"Compares TTable (snapshot-isolation transactions) with a plain HBase Table in one JVM: the"
                + " no-HDFS HBase minicluster and an in-process oracle are started, a read table is loaded, then every"
                + " operation runs in interleaved rounds (raw, tx, raw, tx, ...; the order flips every round) with T"
                + " threads. Flags take '--flag value' or '--flag=value'.", ""},
        footer = {"", "Output: one line per variant and round, a table, and one RESULT line per comparison. Slowdown"
                + " is raw throughput / tx throughput - 1 (the extra time per row)."})
final class BenchFlags {
    /** The three operation groups; each compares raw HBase with TTable. */
    enum Group { GET, SCAN, PUT }

    @Option(names = "--rows", paramLabel = "N", converter = WholeNumber.class,
            description = "rows in the read table [${DEFAULT-VALUE}]")
    int rows = 10_000;

    @Option(names = "--write-rows", paramLabel = "N", converter = WholeNumber.class,
            description = "key space of the writes (random rows) [${DEFAULT-VALUE}]")
    int writeRows = 1_000_000;

    @Option(names = "--threads", paramLabel = "T", converter = WholeNumber.class,
            description = "client threads [${DEFAULT-VALUE}]")
    int threads = 4;

    @Option(names = "--rounds", paramLabel = "R", converter = WholeNumber.class,
            description = "measured rounds per variant [${DEFAULT-VALUE}]")
    int rounds = 6;

    @Option(names = "--round-seconds", paramLabel = "S",
            description = "length of one round of one variant [2]")
    double roundSeconds = 2;

    @Option(names = "--warmup-seconds", paramLabel = "W",
            description = "unrecorded warm-up of each variant, in 2 passes over all of them [10]")
    double warmupSeconds = 10;

    @Option(names = "--puts-per-tx", paramLabel = "K", converter = WholeNumber.class,
            description = "rows written per transaction in the amortized write test [${DEFAULT-VALUE}]")
    int putsPerTx = 10;

    @Option(names = "--reads-per-tx", paramLabel = "R", converter = WholeNumber.class,
            description = "gets (scans) per transaction in the amortized read tests [${DEFAULT-VALUE}]")
    int readsPerTx = 10;

    /** Versions per column the transactional reads fetch ({@code sibyl.client.read.versions}). */
    @Option(names = "--versions", paramLabel = "V", converter = WholeNumber.class,
            description = "versions per column a transactional read fetches (sibyl.client.read.versions)"
                    + " [${DEFAULT-VALUE}]")
    int versions = 3;

    /** Committed versions written per row of the read table at load (reads see the newest). */
    @Option(names = "--load-versions", paramLabel = "L", converter = WholeNumber.class,
            description = "committed versions per row in the read table [${DEFAULT-VALUE}]")
    int loadVersions = 1;

    @Option(names = "--value-size", paramLabel = "B", converter = WholeNumber.class,
            description = "bytes per cell value [${DEFAULT-VALUE}]")
    int valueSize = 100;

    @Option(names = "--columns", paramLabel = "C", converter = WholeNumber.class,
            description = "columns per row (family cf) [${DEFAULT-VALUE}]")
    int columns = 1;

    @Option(names = "--scan-rows", paramLabel = "N", converter = WholeNumber.class,
            description = "rows per scan [${DEFAULT-VALUE}]")
    int scanRows = 100;

    // Trimmed around the commas: '--ops "get, put"' meant get and put before picocli too.
    @Option(names = "--ops", paramLabel = "OP", split = "\\s*,\\s*", splitSynopsisLabel = ",",
            converter = OperationGroup.class,
            description = "comma list of get,scan,put [get,scan,put]")
    Set<Group> ops = EnumSet.allOf(Group.class);

    @Option(names = "--seed", paramLabel = "S", description = "random seed [${DEFAULT-VALUE}]")
    long seed = 42;

    /** If set, only the variants whose name contains one of these texts run (for profiling one of them). */
    @Option(names = "--only", paramLabel = "TEXT", split = "\\|", splitSynopsisLabel = "|",
            description = "run only the variants whose name contains a TEXT (to profile one)")
    List<String> only = List.of();

    /** Seconds of the staleness probe after the variants (0: none). */
    @Option(names = "--staleness-seconds", paramLabel = "S",
            description = "then measure for S s how long after its acknowledgement a commit of one client is in"
                    + " read-only snapshots another client begins; with --only none, the probe alone [0: not run]")
    double stalenessSeconds = 0;

    /** Extra variants that split the gap: raw requests shaped like TTable's, and the oracle's begin alone. */
    @Option(names = "--explain",
            description = "add variants that split the gap: raw get and scan with TTable's request shape (time"
                    + " range, V versions), and the oracle's begin+commit alone (read-only, and with K row ids on a"
                    + " second oracle connection), and print each round's wake-ups per op by thread group")
    boolean explain;

    @Option(names = {"-h", "--help"}, usageHelp = true, description = "this text")
    boolean help;

    @Spec
    private CommandSpec spec; // the parser, for errors raised by the checks after parsing

    /** The usage text, as '--help' prints it. */
    static String usage() {
        return new CommandLine(new BenchFlags()).getUsageMessage();
    }

    /** Parses {@code args}; a bad flag throws a {@link ParameterException} whose message names it. */
    static BenchFlags parse(String... args) {
        BenchFlags f = new BenchFlags();
        new CommandLine(f).parseArgs(args);
        if (!f.help) {
            f.check();
        }
        return f;
    }

    /** The ranges picocli's types do not express. */
    private void check() {
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

    private void require(boolean ok, String message) {
        if (!ok) {
            throw new ParameterException(spec.commandLine(), message);
        }
    }

    /** An int, with '_' allowed between digits as in Java ('--rows 1_000_000'). */
    static final class WholeNumber implements ITypeConverter<Integer> {
        @Override
        public Integer convert(String value) {
            try {
                return Integer.parseInt(value.replace("_", ""));
            } catch (NumberFormatException e) {
                throw new TypeConversionException("not an integer: " + value);
            }
        }
    }

    /** One of get, scan, put, in any case. */
    static final class OperationGroup implements ITypeConverter<Group> {
        @Override
        public Group convert(String value) {
            try {
                return Group.valueOf(value.toUpperCase(Locale.ROOT));
            } catch (IllegalArgumentException e) {
                throw new TypeConversionException("unknown operation '" + value + "' (get, scan, put)");
            }
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
