package io.sibyl.bench;

import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/** The settings of one so-bench-clients sweep, parsed from {@code --flag value} or {@code --flag=value} arguments. */
@Command(name = "so-bench-clients", sortOptions = false, abbreviateSynopsis = true, usageHelpWidth = 110,
        description = {"Many oracle clients at once: for each number of connections and each rate, starts a fresh"
                + " oracle (bin/so-server, its own process), opens the connections from a few driver processes, loops"
                + " begin -> commit of K rows on each, and reports throughput, begin / commit latency, the oracle's"
                + " CPU and memory and the bytes the clients received. The connections are real protocol clients"
                + " (handshake, requests, every reply frame and its replicated metadata read and decoded) without a"
                + " replica, so that thousands fit in a few processes; the replica's own cost is measured by"
                + " so-bench. Flags take '--flag value' or '--flag=value'.", ""},
        footer = {"", "Environment: SO_SERVER_JAVA_OPTS (the oracle's JVM, see bin/so-server),"
                + " SO_BENCH_CLIENTS_DRIVER_OPTS (each driver's JVM; default -Xmx512m -XX:+UseParallelGC).",
                "Prints a report per point and one machine-readable RESULT line per point."})
final class ClientsOptions {
    /** Most connections in one point: each holds a file descriptor in the oracle and a local port on this machine. */
    static final int MAX_CONNECTIONS = 20_000;
    /** The window when none is given: so-bench's 256, or one outstanding transaction per connection if more. */
    static final int DEFAULT_MIN_WINDOW = 256;

    /** Connection counts of the sweep, in order. */
    final List<Integer> connections = new ArrayList<>(List.of(1, 100, 1000, 2000));
    /** Target total rates of the sweep, in order; 0 is saturation (as fast as the replies come). */
    final List<Double> rates = new ArrayList<>(List.of(100_000.0, 0.0));
    double durationSeconds = 10;
    double warmupSeconds = 5;
    int processes = 2;
    /** Outstanding transactions over all connections; 0: the larger of 256 and the number of connections. */
    int window;
    int writeSet = 8;
    long keys = 20_000_000;
    /** Null: start bin/so-server afresh for every point. */
    String oracleHost;
    int oraclePort;
    long serverPid;
    /** {@code key=value} settings for the oracles this tool starts. */
    final List<String> oracleSettings = new ArrayList<>();

    @Option(names = {"-h", "--help"}, usageHelp = true, order = 99, description = "this text")
    boolean help;

    /** The usage text, as {@code --help} prints it. */
    static String usage() {
        return BenchCommandLine.usage(new ClientsOptions());
    }

    /**
     * Parses {@code args}; {@link #help} set means only the usage was asked for.
     *
     * @throws UsageException naming the flag that is wrong, and why
     */
    static ClientsOptions parse(String... args) throws UsageException {
        ClientsOptions o = new ClientsOptions();
        o.help = BenchCommandLine.parse(o, args);
        if (!o.help) {
            o.validate();
        }
        return o;
    }

    // The flags: each setter reads and checks its value, so that a mistake names the flag and what it allows.

    @Option(names = "--connections", paramLabel = "LIST", order = 1,
            description = "connection counts to sweep, comma-separated (1,100,1000,2000)")
    private void connections(String v) throws UsageException {
        connections.clear();
        for (String item : list("connections", v)) {
            connections.add((int) BenchOptions.whole("connections", item, 1, MAX_CONNECTIONS));
        }
    }

    @Option(names = "--rate", paramLabel = "LIST", order = 2,
            description = "total transactions/s to sweep; 'max' = saturation (100000,max)")
    private void rate(String v) throws UsageException {
        rates.clear();
        for (String item : list("rate", v)) {
            rates.add(oneRate(item));
        }
    }

    @Option(names = "--duration", paramLabel = "S", order = 3, description = "measured seconds per point (10)")
    private void duration(String v) throws UsageException {
        durationSeconds = seconds("duration", v, 0.5);
    }

    @Option(names = "--warmup", paramLabel = "S", order = 4, description = "seconds of load before measuring (5)")
    private void warmup(String v) throws UsageException {
        warmupSeconds = seconds("warmup", v, 0);
    }

    @Option(names = "--processes", paramLabel = "P", order = 5,
            description = "driver processes the connections are spread over (2; at most one per connection)")
    private void processes(String v) throws UsageException {
        processes = (int) BenchOptions.whole("processes", v, 1, 64);
    }

    @Option(names = "--window", paramLabel = "W", order = 6,
            description = "outstanding transactions over all connections (the larger of 256 and the number of"
                    + " connections); at least one per connection")
    private void window(String v) throws UsageException {
        window = (int) BenchOptions.whole("window", v, 1, 10_000_000);
    }

    @Option(names = "--write-set", paramLabel = "K", order = 7, description = "rows written per transaction (8)")
    private void writeSet(String v) throws UsageException {
        writeSet = (int) BenchOptions.whole("write-set", v, 1, 1 << 20);
    }

    @Option(names = "--keys", paramLabel = "N", order = 8,
            description = "uniform key space; suffixes k, M, G allowed (20M)")
    private void keys(String v) throws UsageException {
        keys = BenchOptions.whole("keys", v, 1, Long.MAX_VALUE / 2);
    }

    @Option(names = "--decode-deltas", order = 9,
            description = "walk every record of the replicated metadata (a replica's decoding, not its"
                    + " bookkeeping) instead of skipping the blocks by their length")
    boolean decodeDeltas;

    @Option(names = "--oracle", paramLabel = "HOST:PORT", order = 10,
            description = "drive this running oracle at every point instead of starting one each time")
    private void oracle(String v) throws UsageException {
        int colon = v.lastIndexOf(':');
        if (colon <= 0 || colon == v.length() - 1) {
            throw new UsageException("--oracle takes HOST:PORT, got '" + v + "'");
        }
        oracleHost = v.substring(0, colon);
        oraclePort = (int) BenchOptions.whole("oracle port", v.substring(colon + 1), 1, 65535);
    }

    @Option(names = "--server-pid", paramLabel = "PID", order = 11,
            description = "with --oracle: its process id, for its CPU and memory")
    private void serverPid(String v) throws UsageException {
        serverPid = BenchOptions.whole("server-pid", v, 1, Long.MAX_VALUE);
    }

    @Option(names = "--oracle-setting", paramLabel = "K=V", order = 12,
            description = "setting for the oracles started here, as in 'so-server --help' (repeatable)")
    private void oracleSetting(String v) throws UsageException {
        if (v.indexOf('=') <= 0) {
            throw new UsageException("--oracle-setting takes key=value, got '" + v + "'");
        }
        oracleSettings.add(v);
    }

    private static List<String> list(String name, String v) throws UsageException {
        List<String> items = new ArrayList<>();
        for (String item : v.split(",")) {
            if (item.isBlank()) {
                throw new UsageException("--" + name + " takes a comma-separated list without empty items, got '"
                        + v + "'");
            }
            items.add(item.trim());
        }
        return items;
    }

    private static double oneRate(String v) throws UsageException {
        String s = v.toLowerCase(Locale.ROOT);
        if (s.equals("max") || s.equals("saturation")) {
            return 0;
        }
        double r = BenchOptions.multiplied("rate", v);
        if (!(r > 0 && r <= 1e9)) {
            throw new UsageException("--rate takes transactions per second above 0 (or 'max'), got '" + v + "'");
        }
        return r;
    }

    private static double seconds(String name, String v, double min) throws UsageException {
        double s = BenchOptions.decimal(name, v);
        if (!(s >= min && s <= 86_400)) {
            throw new UsageException("--" + name + " must be " + min + " to 86400 seconds, got " + v);
        }
        return s;
    }

    private void validate() throws UsageException {
        int most = connections.stream().mapToInt(Integer::intValue).max().orElse(1);
        if (window != 0 && window < most) {
            throw new UsageException("--window " + window + " is smaller than " + most + " connections: every"
                    + " connection needs at least one outstanding transaction");
        }
        if (keys < writeSet) {
            throw new UsageException("--keys " + keys + " is smaller than the write set (" + writeSet
                    + " distinct rows)");
        }
        if (oracleHost != null && !oracleSettings.isEmpty()) {
            throw new UsageException("--oracle-setting applies only to the oracles so-bench-clients starts; set a"
                    + " running oracle's settings on its own command line");
        }
        if (serverPid != 0 && oracleHost == null) {
            throw new UsageException("--server-pid goes with --oracle (the oracles started here are measured anyway)");
        }
    }

    /** Outstanding transactions over all connections for a point with {@code n} connections. */
    int windowFor(int n) {
        return window > 0 ? window : Math.max(DEFAULT_MIN_WINDOW, n);
    }

    /** The arguments of a driver process that runs {@code settings}; {@link #driverSettings} reads them back. */
    static List<String> driverArguments(DriverLoad.Settings s) {
        List<String> a = new ArrayList<>(List.of("--oracle", s.host() + ":" + s.port(),
                "--connections", Integer.toString(s.connections()), "--window", Integer.toString(s.window()),
                "--rate", s.rate() > 0 ? String.format(Locale.ROOT, "%.3f", s.rate()) : "max",
                "--write-set", Integer.toString(s.writeSet()), "--keys", Long.toString(s.keys())));
        if (s.decodeDeltas()) {
            a.add("--decode-deltas");
        }
        return a;
    }

    /** A driver's settings from the arguments {@link #driverArguments} made: one oracle, one point. */
    static DriverLoad.Settings driverSettings(String[] args) throws UsageException {
        ClientsOptions o = parse(args);
        if (o.oracleHost == null || o.connections.size() != 1 || o.rates.size() != 1) {
            throw new UsageException("a driver needs --oracle, one connection count and one rate");
        }
        int n = o.connections.get(0);
        return new DriverLoad.Settings(o.oracleHost, o.oraclePort, n, o.windowFor(n), o.rates.get(0), o.writeSet,
                o.keys, o.decodeDeltas);
    }
}
