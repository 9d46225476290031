package io.sibyl.bench.fuzz;

import java.nio.file.Path;

/** The settings of one so-fuzz run, from {@code --flag value} or {@code --flag=value} arguments. */
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
    boolean help;

    static String usage() {
        return String.join("\n",
                "usage: so-fuzz --oracle HOST:PORT [flags]   (flags take '--flag value' or '--flag=value')",
                "Sends random, mutated and hostile frames, bad handshakes and TLS ClientHellos to a running status",
                "oracle over real sockets, while good clients run transactions and check every answer.",
                "  --frames N             attack frames to send in all; suffixes k, M allowed (1M)",
                "  --connections C        attacking threads, one connection open each at a time (8)",
                "  --good-clients G       well-behaved clients on OracleClient, each its own connection (2)",
                "  --seed S               seed of the attacks' randomness (from the clock); the thread interleaving",
                "                         is not reproduced, the attacks each thread draws are",
                "  --oracle HOST:PORT     the oracle to attack (required; bin/so-fuzz starts one and fills it in)",
                "  --server-pid PID       the oracle's process id: its VmRSS is sampled and it must be alive at the end",
                "  --admin-secret-file F  the oracle's admin.secret.file: a sweeper reports the attackers' aborted",
                "                         transactions cleaned up (else their dropped connections fill",
                "                         max.aborted.transactions), and attackers replay proofs of other connections",
                "  --oracle-log FILE      the oracle's output, checked at the end for unexpected errors and leaks",
                "  --max-rss-mb M         fail if the oracle's resident memory goes above M MiB (0: report only) (0)",
                "  --session-frames N     most frames one attacking connection sends after its handshake (16)",
                "  --good-rows N          rows the good clients write, few so that they conflict (256)",
                "  --progress S           seconds between progress lines (10)",
                "Exit status: 0 if every answer was right and the oracle survived; 1 otherwise; 2 for bad flags.");
    }

    static FuzzOptions parse(String[] args) throws IllegalArgumentException {
        FuzzOptions o = new FuzzOptions();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--help") || a.equals("-h")) {
                o.help = true;
                continue;
            }
            if (!a.startsWith("--")) {
                throw new IllegalArgumentException("unexpected argument '" + a + "'");
            }
            int eq = a.indexOf('=');
            String flag = eq > 0 ? a.substring(2, eq) : a.substring(2);
            String value;
            if (eq > 0) {
                value = a.substring(eq + 1);
            } else if (i + 1 < args.length) {
                value = args[++i];
            } else {
                throw new IllegalArgumentException("--" + flag + " needs a value");
            }
            o.set(flag, value);
        }
        if (!o.help && o.oracleHost == null) {
            throw new IllegalArgumentException("--oracle HOST:PORT is required (bin/so-fuzz starts an oracle itself)");
        }
        return o;
    }

    private void set(String flag, String value) {
        switch (flag) {
            case "frames" -> frames = whole(flag, value, 1, Long.MAX_VALUE);
            case "connections" -> connections = (int) whole(flag, value, 1, 4096);
            case "good-clients" -> goodClients = (int) whole(flag, value, 1, 1024);
            case "seed" -> seed = whole(flag, value, Long.MIN_VALUE, Long.MAX_VALUE);
            case "oracle" -> {
                int colon = value.lastIndexOf(':');
                if (colon <= 0) {
                    throw new IllegalArgumentException("--oracle must be HOST:PORT, got '" + value + "'");
                }
                oracleHost = value.substring(0, colon);
                oraclePort = (int) whole(flag, value.substring(colon + 1), 0, 65535);
            }
            case "server-pid" -> serverPid = whole(flag, value, 1, Long.MAX_VALUE);
            case "admin-secret-file" -> adminSecretFile = Path.of(value);
            case "oracle-log" -> oracleLog = Path.of(value);
            case "max-rss-mb" -> maxRssMb = whole(flag, value, 0, Long.MAX_VALUE);
            case "session-frames" -> sessionFrames = (int) whole(flag, value, 1, 1 << 20);
            case "good-rows" -> goodRows = (int) whole(flag, value, 1, Integer.MAX_VALUE);
            case "progress" -> progressSeconds = whole(flag, value, 1, 3600);
            default -> throw new IllegalArgumentException("unknown flag --" + flag);
        }
    }

    /** A whole number in [min, max], written with _ or , between digits and an optional k (10^3) or M (10^6). */
    private static long whole(String flag, String value, long min, long max) {
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
        throw new IllegalArgumentException("--" + flag + " must be a whole number from " + min + " to " + max
                + ", got '" + value + "'");
    }
}
