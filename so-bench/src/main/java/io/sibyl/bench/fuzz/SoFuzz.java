package io.sibyl.bench.fuzz;

import io.sibyl.bench.UsageException;

/**
 * so-fuzz: attacks a running status oracle with at least a million random, mutated and hostile frames, bad
 * handshakes and TLS ClientHellos over real sockets while good clients check their answers ({@link FuzzRun}), prints
 * the {@link FuzzReport} and exits 0 only if it passed (always through {@link System#exit}).
 */
public final class SoFuzz {
    private SoFuzz() {
    }

    public static void main(String[] args) {
        FuzzOptions options;
        try {
            options = FuzzOptions.parse(args);
        } catch (UsageException e) {
            System.err.println("so-fuzz: " + e.getMessage());
            System.err.println(FuzzOptions.usage());
            System.exit(2);
            return;
        }
        if (options.check) { // "--check FLAGS...": bin/so-fuzz checks the flags before it starts an oracle
            System.exit(0);
        }
        if (options.help) {
            System.out.println(FuzzOptions.usage());
            System.exit(0);
        }
        int code;
        try {
            System.out.println("so-fuzz: attacking " + options.oracleHost + ":" + options.oraclePort
                    + (options.serverPid > 0 ? " (pid " + options.serverPid + ")" : "") + " with "
                    + options.frames + " frames, seed " + options.seed + " (rerun with --seed " + options.seed + ")");
            FuzzReport report = FuzzRun.run(options, System.out);
            report.print(System.out);
            code = report.failures().isEmpty() ? 0 : 1;
        } catch (IllegalArgumentException e) {
            System.err.println("so-fuzz: " + e.getMessage());
            code = 2;
        } catch (Exception e) {
            System.err.println("so-fuzz: failed: " + e);
            e.printStackTrace();
            code = 1;
        }
        System.out.flush();
        System.exit(code);
    }
}
