package io.sibyl.bench.fuzz;

import io.sibyl.bench.BenchCommandLine;
import io.sibyl.bench.UsageException;
import picocli.CommandLine.Command;
import picocli.CommandLine.Option;

import java.nio.file.Path;

/** The settings of one so-fuzz run, from {@code --flag value} or {@code --flag=value} arguments. */
@Command(name = "so-fuzz", sortOptions = false, abbreviateSynopsis = true, usageHelpWidth = 110,
        customSynopsis = "so-fuzz --oracle HOST:PORT [flags]",
        description = {"Sends random, mutated and hostile frames, bad handshakes and TLS ClientHellos to a running"
                + " status oracle over real sockets, while good clients run transactions and check every answer."
                + " Flags take '--flag value' or '--flag=value'.", ""},
        footer = {"", "Exit status: 0 if every answer was right and the oracle survived; 1 otherwise; 2 for bad"
                + " flags."})
final class FuzzOptions {
    long frames = 1_000_000;
    int connections = 8;
    int goodClients = 2;
    long seed = System.nanoTime();
    String oracleHost;
    int oraclePort;
    /** Process id of the oracle, for its memory and whether it is alive; 0 = unknown. */
    long serverPid;
    /** The oracle's admin.secret.file: the sweeper runs with it, and attackers replay proofs made with it. */
    Path adminSecretFile;
    /** The oracle's output, looked through at the end; null = not checked. */
    Path oracleLog;
    /** Largest resident memory of the oracle the run accepts, in MiB; 0 = report only. */
    long maxRssMb;
    int sessionFrames = 16;
    /** Rows the good clients write: few, so that they conflict with each other. */
    int goodRows = 256;
    long progressSeconds = 10;

    @Option(names = {"-h", "--help"}, usageHelp = true, order = 99, description = "this text")
    boolean help;

    /** Only check the flags: bin/so-fuzz does so before it starts an oracle, and fills in --oracle afterwards. */
    @Option(names = "--check", hidden = true)
    boolean check;

    /** The usage text, as {@code --help} prints it. */
    static String usage() {
        return BenchCommandLine.usage(new FuzzOptions());
    }

    /**
     * Parses {@code args}; {@link #help} set means only the usage was asked for.
     *
     * @throws UsageException naming the flag that is wrong, and why
     */
    static FuzzOptions parse(String... args) throws UsageException {
        FuzzOptions o = new FuzzOptions();
        o.help = BenchCommandLine.parse(o, args);
        if (!o.help && !o.check && o.oracleHost == null) {
            throw new UsageException("--oracle HOST:PORT is required (bin/so-fuzz starts an oracle itself)");
        }
        return o;
    }

    // The flags: each setter reads and checks its value, so that a mistake names the flag and what it allows.

    @Option(names = "--frames", paramLabel = "N", order = 1,
            description = "attack frames to send in all; suffixes k, M allowed (1M)")
    private void frames(String v) throws UsageException {
        frames = whole("frames", v, 1, Long.MAX_VALUE);
    }

    @Option(names = "--connections", paramLabel = "C", order = 2,
            description = "attacking threads, one connection open each at a time (8)")
    private void connections(String v) throws UsageException {
        connections = (int) whole("connections", v, 1, 4096);
    }

    @Option(names = "--good-clients", paramLabel = "G", order = 3,
            description = "well-behaved clients on OracleClient, each its own connection (2)")
    private void goodClients(String v) throws UsageException {
        goodClients = (int) whole("good-clients", v, 1, 1024);
    }

    @Option(names = "--seed", paramLabel = "S", order = 4,
            description = "seed of the attacks' randomness (from the clock); the thread interleaving is not"
                    + " reproduced, the attacks each thread draws are")
    private void seed(String v) throws UsageException {
        seed = whole("seed", v, Long.MIN_VALUE, Long.MAX_VALUE);
    }

    @Option(names = "--oracle", paramLabel = "HOST:PORT", order = 5,
            description = "the oracle to attack (required; bin/so-fuzz starts one and fills it in)")
    private void oracle(String v) throws UsageException {
        int colon = v.lastIndexOf(':');
        if (colon <= 0) {
            throw new UsageException("--oracle must be HOST:PORT, got '" + v + "'");
        }
        oracleHost = v.substring(0, colon);
        oraclePort = (int) whole("oracle", v.substring(colon + 1), 0, 65535);
    }

    @Option(names = "--server-pid", paramLabel = "PID", order = 6,
            description = "the oracle's process id: its VmRSS is sampled and it must be alive at the end")
    private void serverPid(String v) throws UsageException {
        serverPid = whole("server-pid", v, 1, Long.MAX_VALUE);
    }

    @Option(names = "--admin-secret-file", paramLabel = "F", order = 7,
            description = "the oracle's admin.secret.file: a sweeper reports the attackers' aborted transactions"
                    + " cleaned up (else their dropped connections fill max.aborted.transactions), and attackers"
                    + " replay proofs of other connections")
    private void adminSecretFile(String v) {
        adminSecretFile = Path.of(v);
    }

    @Option(names = "--oracle-log", paramLabel = "FILE", order = 8,
            description = "the oracle's output, checked at the end for unexpected errors and leaks")
    private void oracleLog(String v) {
        oracleLog = Path.of(v);
    }

    @Option(names = "--max-rss-mb", paramLabel = "M", order = 9,
            description = "fail if the oracle's resident memory goes above M MiB (0: report only) (0)")
    private void maxRssMb(String v) throws UsageException {
        maxRssMb = whole("max-rss-mb", v, 0, Long.MAX_VALUE);
    }

    @Option(names = "--session-frames", paramLabel = "N", order = 10,
            description = "most frames one attacking connection sends after its handshake (16)")
    private void sessionFrames(String v) throws UsageException {
        sessionFrames = (int) whole("session-frames", v, 1, 1 << 20);
    }

    @Option(names = "--good-rows", paramLabel = "N", order = 11,
            description = "rows the good clients write, few so that they conflict (256)")
    private void goodRows(String v) throws UsageException {
        goodRows = (int) whole("good-rows", v, 1, Integer.MAX_VALUE);
    }

    @Option(names = "--progress", paramLabel = "S", order = 12, description = "seconds between progress lines (10)")
    private void progress(String v) throws UsageException {
        progressSeconds = whole("progress", v, 1, 3600);
    }

    /** A whole number in [min, max], written with _ or , between digits and an optional k (10^3) or M (10^6). */
    private static long whole(String flag, String value, long min, long max) throws UsageException {
        String digits = value.trim().replace("_", "").replace(",", "");
        long unit = digits.endsWith("k") ? 1_000 : digits.endsWith("M") ? 1_000_000 : 1;
        try {
            long n = Math.multiplyExact(Long.parseLong(unit == 1 ? digits : digits.substring(0,
                    digits.length() - 1)), unit);
            if (n >= min && n <= max) {
                return n;
            }
        } catch (NumberFormatException | ArithmeticException e) {
            // said below
        }
        throw new UsageException("--" + flag + " must be a whole number from " + min + " to " + max
                + ", got '" + value + "'");
    }
}
