package io.sibyl.bench;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The settings of one so-bench run, parsed from {@code --flag value} or {@code --flag=value} arguments. */
@Command(name = "so-bench", sortOptions = false, abbreviateSynopsis = true, usageHelpWidth = 110,
        description = {"Closed-loop load on the Sibyl status oracle: W transaction slots spread over C connections,"
                + " each looping begin -> commit of K distinct rows (or finish, if read-only) -> next transaction."
                + " Flags take '--flag value' or '--flag=value'.", ""},
        footer = {"", "Prints throughput, begin / commit / whole-transaction latency percentiles, abort rate, commit"
                + " metadata piggybacked per begin reply and CPU, then one machine-readable RESULT line."})
final class BenchOptions {
    /** How write-set sizes are drawn. */
    enum SizeDistribution { FIXED, UNIFORM }

    /** How keys are drawn. */
    enum KeyDistribution { UNIFORM, ZIPFIAN }

    /**
     * What a writing transaction sends at commit: SI its rows written ({@code COMMIT}, so-bench's figures before issue
     * 17); SI_GRANULES also the range granules written, as the client library sends an SI commit since issue 17;
     * SERIALIZABLE the rows and granules read too ({@code COMMIT_CERTIFIED} both).
     */
    enum Isolation { SI, SI_GRANULES, SERIALIZABLE }

    /** How a serializable transaction's scan is certified: by its range granules, or by its exact rows. */
    enum ScanCertification { GRANULES, ROWS }

    int connections = 1;
    int window = 256;
    int writeSet = 8;
    SizeDistribution writeSetDistribution = SizeDistribution.FIXED;
    long keys = 20_000_000;
    KeyDistribution keyDistribution = KeyDistribution.UNIFORM;
    double zipfTheta = 0.99;
    double readOnlyFraction = 0;
    /** Rows read per writing transaction; sent (certified) under SERIALIZABLE only. */
    int readSet = 0;
    Isolation isolation = Isolation.SI;
    /** Consecutive keys one scan per writing transaction reads; 0 = no scan. Sent under SERIALIZABLE only. */
    int scanRows = 0;
    ScanCertification scanCertification = ScanCertification.GRANULES;
    double durationSeconds = 30;
    double warmupSeconds = 10;
    /** Null for an oracle started in this JVM. */
    String oracleHost;
    int oraclePort;
    /** Transactions per second over all slots; 0 = as fast as the replies come (saturation). */
    double rate;
    int ioThreads = 1;
    /** Process id of a separate oracle whose CPU is reported; 0 = none. */
    long serverPid;
    /** Process id of the bookies' process (bin/bookies) whose CPU is reported; 0 = none. */
    long bookiesPid;
    String label = "sibyl";
    /** Seconds between progress lines during the measurement. */
    double progressSeconds = 5;
    /**
     * Directory of self-signed TLS stores (io.sibyl.protocol.SelfSignedTls) to connect with TLS and a client
     * certificate; an in-process oracle then requires them too. Null: plaintext.
     */
    String tlsDir;
    /** {@code key=value} settings for an in-process oracle (keys of OracleConfig.describe()). */
    final List<String> oracleSettings = new ArrayList<>();

    @Option(names = {"-h", "--help"}, usageHelp = true, order = 99, description = "this text")
    boolean help;

    /** Only check the flags: bin/so-bench does so before it starts an oracle process. */
    @Option(names = "--check", hidden = true)
    boolean check;

    boolean inProcess() {
        return oracleHost == null;
    }

    /** Largest write set the size distribution can draw. */
    int maxWriteSet() {
        return writeSetDistribution == SizeDistribution.FIXED ? writeSet : 2 * writeSet - 1;
    }

    /** The usage text, as {@code --help} prints it. */
    static String usage() {
        return BenchCommandLine.usage(new BenchOptions());
    }

    /**
     * Parses {@code args}; {@link #help} set means only the usage was asked for.
     *
     * @throws UsageException naming the flag that is wrong, and why
     */
    static BenchOptions parse(String... args) throws UsageException {
        BenchOptions o = new BenchOptions();
        o.help = BenchCommandLine.parse(o, args);
        if (!o.help) {
            o.validate();
        }
        return o;
    }

    // The flags: each setter reads and checks its value, so that a mistake names the flag and what it allows.

    @Option(names = "--connections", paramLabel = "C", order = 1,
            description = "client connections to the oracle (1)")
    private void connections(String v) throws UsageException {
        connections = (int) whole("connections", v, 1, 100_000);
    }

    @Option(names = "--window", paramLabel = "W", order = 2,
            description = "outstanding transactions in total, spread over the connections (256)")
    private void window(String v) throws UsageException {
        window = (int) whole("window", v, 1, 10_000_000);
    }

    @Option(names = "--write-set", paramLabel = "K", order = 3, description = "rows written per transaction (8)")
    private void writeSet(String v) throws UsageException {
        writeSet = (int) whole("write-set", v, 1, 1 << 20);
    }

    @Option(names = "--write-set-dist", paramLabel = "D", order = 4,
            description = "fixed | uniform (uniform: 1..2K-1, mean K) (fixed)")
    private void writeSetDistribution(String v) throws UsageException {
        writeSetDistribution = switch (v.toLowerCase(Locale.ROOT)) {
            case "fixed" -> SizeDistribution.FIXED;
            case "uniform" -> SizeDistribution.UNIFORM;
            default -> throw new UsageException("--write-set-dist must be fixed or uniform, got '" + v + "'");
        };
    }

    @Option(names = "--keys", paramLabel = "N", order = 5, description = "key space; suffixes k, M, G allowed (20M)")
    private void keys(String v) throws UsageException {
        keys = whole("keys", v, 1, Long.MAX_VALUE / 2);
    }

    @Option(names = "--key-dist", paramLabel = "D", order = 6, description = "uniform | zipfian (uniform)")
    private void keyDistribution(String v) throws UsageException {
        keyDistribution = switch (v.toLowerCase(Locale.ROOT)) {
            case "uniform" -> KeyDistribution.UNIFORM;
            case "zipfian", "zipf" -> KeyDistribution.ZIPFIAN;
            default -> throw new UsageException("--key-dist must be uniform or zipfian, got '" + v + "'");
        };
    }

    @Option(names = "--zipf-theta", paramLabel = "T", order = 7,
            description = "skew of the zipfian distribution, 0 < T < 1 (0.99)")
    private void zipfTheta(String v) throws UsageException {
        zipfTheta = decimal("zipf-theta", v);
        if (!(zipfTheta > 0 && zipfTheta < 1)) {
            throw new UsageException("--zipf-theta must be between 0 and 1 (exclusive), got " + v);
        }
    }

    @Option(names = "--read-only-fraction", paramLabel = "F", order = 8,
            description = "share of transactions that write nothing and just finish (0)")
    private void readOnlyFraction(String v) throws UsageException {
        readOnlyFraction = decimal("read-only-fraction", v);
        if (!(readOnlyFraction >= 0 && readOnlyFraction <= 1)) {
            throw new UsageException("--read-only-fraction must be between 0 and 1, got " + v);
        }
    }

    @Option(names = "--isolation", paramLabel = "I", order = 9,
            description = "si: commit sends the rows written (COMMIT); si-granules: and the range granules written"
                    + " (COMMIT_CERTIFIED, as the client library's SI commits); serializable: and the rows and"
                    + " granules read too (si)")
    private void isolation(String v) throws UsageException {
        isolation = switch (v.toLowerCase(Locale.ROOT)) {
            case "si", "snapshot" -> Isolation.SI;
            case "si-granules" -> Isolation.SI_GRANULES;
            case "serializable" -> Isolation.SERIALIZABLE;
            default -> throw new UsageException("--isolation must be si, si-granules or serializable, got '" + v
                    + "'");
        };
    }

    @Option(names = "--read-set", paramLabel = "R", order = 10,
            description = "rows read per writing transaction, distinct, drawn like the writes; certified under"
                    + " serializable, not sent otherwise (0)")
    private void readSet(String v) throws UsageException {
        readSet = (int) whole("read-set", v, 0, 1 << 20);
    }

    @Option(names = "--scan-rows", paramLabel = "N", order = 11,
            description = "one scan of N consecutive keys per writing transaction, certified under serializable"
                    + " (keys lie in order over 65,536 granules) (0: none)")
    private void scanRows(String v) throws UsageException {
        scanRows = (int) whole("scan-rows", v, 0, 1 << 20);
    }

    @Option(names = "--scan-certify", paramLabel = "C", order = 12,
            description = "granules (what the client sends: a granule per two-byte prefix, the table's above 256)"
                    + " | rows (the N exact rows, to count the aborts the granules add) (granules)")
    private void scanCertification(String v) throws UsageException {
        scanCertification = switch (v.toLowerCase(Locale.ROOT)) {
            case "granules" -> ScanCertification.GRANULES;
            case "rows" -> ScanCertification.ROWS;
            default -> throw new UsageException("--scan-certify must be granules or rows, got '" + v + "'");
        };
    }

    @Option(names = "--duration", paramLabel = "S", order = 13, description = "measured seconds (30)")
    private void duration(String v) throws UsageException {
        durationSeconds = decimal("duration", v);
        if (!(durationSeconds > 0 && durationSeconds <= 86_400)) {
            throw new UsageException("--duration must be more than 0 seconds (at most a day), got " + v);
        }
    }

    @Option(names = "--warmup", paramLabel = "S", order = 14, description = "seconds of load before measuring (10)")
    private void warmup(String v) throws UsageException {
        warmupSeconds = decimal("warmup", v);
        if (!(warmupSeconds >= 0 && warmupSeconds <= 86_400)) {
            throw new UsageException("--warmup must be 0 or more seconds (at most a day), got " + v);
        }
    }

    @Option(names = "--oracle", paramLabel = "HOST:PORT", order = 15,
            description = "oracle to drive, or 'in-process' to start one in this JVM (in-process)")
    private void oracle(String v) throws UsageException {
        if (v.equalsIgnoreCase("in-process")) {
            oracleHost = null;
            return;
        }
        int colon = v.lastIndexOf(':');
        if (colon <= 0 || colon == v.length() - 1) {
            throw new UsageException("--oracle takes HOST:PORT or in-process, got '" + v + "'");
        }
        String host = v.substring(0, colon);
        if (host.startsWith("[") && host.endsWith("]")) {
            host = host.substring(1, host.length() - 1);
        }
        oracleHost = host;
        oraclePort = (int) whole("oracle port", v.substring(colon + 1), 1, 65535);
    }

    @Option(names = "--in-process", order = 16, description = "same as --oracle in-process")
    private void inProcess(boolean on) {
        if (on) {
            oracleHost = null;
        }
    }

    @Option(names = "--oracle-setting", paramLabel = "K=V", order = 17,
            description = "setting for the in-process oracle, e.g. conflict.table.rows=4194304 (repeatable; keys as"
                    + " in 'so-server --help')")
    private void oracleSetting(String v) throws UsageException {
        if (v.indexOf('=') <= 0) {
            throw new UsageException("--oracle-setting takes key=value, got '" + v + "'");
        }
        oracleSettings.add(v);
    }

    @Option(names = "--rate", paramLabel = "R", order = 18,
            description = "target transactions/s over all slots; latency is then measured from each transaction's"
                    + " scheduled start (no coordinated omission) (unlimited)")
    private void rate(String v) throws UsageException {
        rate = multiplied("rate", v);
        if (!(rate > 0 && rate <= 1e9)) {
            throw new UsageException("--rate must be a positive number of transactions per second, got " + v);
        }
    }

    @Option(names = "--io-threads", paramLabel = "T", order = 19,
            description = "client I/O threads shared by the connections (1)")
    private void ioThreads(String v) throws UsageException {
        ioThreads = (int) whole("io-threads", v, 1, 256);
    }

    @Option(names = "--server-pid", paramLabel = "PID", order = 20,
            description = "process id of a separate oracle, to report its CPU from /proc/PID/stat")
    private void serverPid(String v) throws UsageException {
        serverPid = whole("server-pid", v, 1, Long.MAX_VALUE);
    }

    @Option(names = "--bookies-pid", paramLabel = "PID", order = 21,
            description = "process id of the bookies (bin/bookies) the oracle journals to, to report their CPU too")
    private void bookiesPid(String v) throws UsageException {
        bookiesPid = whole("bookies-pid", v, 1, Long.MAX_VALUE);
    }

    @Option(names = "--label", paramLabel = "TEXT", order = 22, description = "name put in the RESULT line (sibyl)")
    private void label(String v) throws UsageException {
        if (v.isEmpty() || v.chars().anyMatch(Character::isWhitespace)) {
            throw new UsageException("--label must be one word without spaces (it goes into the RESULT line), got '"
                    + v + "'");
        }
        label = v;
    }

    @Option(names = "--tls", paramLabel = "DIR", order = 23,
            description = "connect with TLS and a client certificate from the stores in DIR (made by"
                    + " io.sibyl.protocol.SelfSignedTls; the in-process oracle requires them too)")
    private void tls(String v) {
        tlsDir = v;
    }

    @Option(names = "--progress", paramLabel = "S", order = 24,
            description = "seconds between progress lines while measuring (5)")
    private void progress(String v) throws UsageException {
        progressSeconds = decimal("progress", v);
        if (!(progressSeconds >= 0.1)) {
            throw new UsageException("--progress must be at least 0.1 seconds, got " + v);
        }
    }

    private void validate() throws UsageException {
        if (window < connections) {
            throw new UsageException("--window " + window + " is smaller than --connections " + connections
                    + ": every connection needs at least one outstanding transaction");
        }
        if (keys < maxWriteSet()) {
            throw new UsageException("--keys " + keys + " is smaller than the largest write set (" + maxWriteSet()
                    + " distinct rows)");
        }
        if (keys < Math.max(readSet, scanRows)) {
            throw new UsageException("--keys " + keys + " is smaller than the read set (" + readSet + " distinct rows)"
                    + " or the scan (" + scanRows + " rows)");
        }
        if (keyDistribution == KeyDistribution.ZIPFIAN && keys > Integer.MAX_VALUE) {
            throw new UsageException("--key-dist zipfian supports at most " + Integer.MAX_VALUE + " keys");
        }
        if (!oracleSettings.isEmpty() && !inProcess()) {
            throw new UsageException("--oracle-setting applies only to an in-process oracle; set a separate oracle's"
                    + " settings on its own command line");
        }
        if (serverPid != 0 && !Files.isReadable(Path.of("/proc/" + serverPid + "/stat"))) {
            throw new UsageException("--server-pid " + serverPid + ": no such process (cannot read /proc/"
                    + serverPid + "/stat)");
        }
        if (bookiesPid != 0 && !Files.isReadable(Path.of("/proc/" + bookiesPid + "/stat"))) {
            throw new UsageException("--bookies-pid " + bookiesPid + ": no such process (cannot read /proc/"
                    + bookiesPid + "/stat)");
        }
    }

    static long whole(String name, String v, long min, long max) throws UsageException {
        double d = multiplied(name, v);
        if (d != Math.rint(d) || d < min || d > max) {
            throw new UsageException("--" + name + " must be a whole number from " + min + " to " + max
                    + ", got '" + v + "'");
        }
        return (long) d;
    }

    /** A number with an optional k / M / G suffix (thousands, millions, billions). */
    static double multiplied(String name, String v) throws UsageException {
        String s = v.replace("_", "");
        double factor = 1;
        if (!s.isEmpty()) {
            char last = s.charAt(s.length() - 1);
            factor = switch (last) {
                case 'k', 'K' -> 1e3;
                case 'm', 'M' -> 1e6;
                case 'g', 'G' -> 1e9;
                default -> 1;
            };
            if (factor != 1) {
                s = s.substring(0, s.length() - 1);
            }
        }
        return decimal(name, s) * factor;
    }

    static double decimal(String name, String v) throws UsageException {
        try {
            double d = Double.parseDouble(v);
            if (Double.isNaN(d) || Double.isInfinite(d)) {
                throw new NumberFormatException();
            }
            return d;
        } catch (NumberFormatException e) {
            throw new UsageException("--" + name + " must be a number, got '" + v + "'");
        }
    }

    /** The {@code --isolation} value that selects {@link #isolation}. */
    String isolationName() {
        return isolation.name().toLowerCase(Locale.ROOT).replace('_', '-');
    }

    /** One line describing the workload, for the report. */
    String describeWorkload() {
        String sizes = writeSetDistribution == SizeDistribution.FIXED ? "fixed " + writeSet
                : "uniform 1.." + maxWriteSet() + " (mean " + writeSet + ")";
        String dist = keyDistribution == KeyDistribution.UNIFORM ? "uniform"
                : "zipfian(theta=" + zipfTheta + ")";
        String scan = scanRows == 0 ? "none"
                : scanRows + " rows as " + scanCertification.name().toLowerCase(Locale.ROOT);
        String reads = String.format(Locale.ROOT, "isolation=%s read-set=%d scan=%s%s",
                isolationName(), readSet, scan,
                isolation != Isolation.SERIALIZABLE && readSet + scanRows > 0 ? " (reads not sent)" : "");
        return String.format(Locale.ROOT, "connections=%d window=%d write-set=%s keys=%d key-dist=%s read-only=%s"
                        + " rate=%s io-threads=%d %s", connections, window, sizes, keys, dist, readOnlyFraction,
                rate > 0 ? String.format(Locale.ROOT, "%.0f/s", rate) : "unlimited", ioThreads, reads);
    }
}
