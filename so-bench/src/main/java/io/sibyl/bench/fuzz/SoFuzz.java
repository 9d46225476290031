package io.sibyl.bench.fuzz;

/**
 * so-fuzz: attacks a running status oracle with at least a million random, mutated and hostile frames, bad
 * handshakes and TLS ClientHellos over real sockets while good clients check their answers ({@link FuzzRun}), prints
 * the {@link FuzzReport} and exits 0 only if it passed (always through {@link System#exit}).
 */
public final class SoFuzz {
    private SoFuzz() {
    }

    public static void main(String[] args) {
        // "--check FLAGS...": only validate the flags (bin/so-fuzz does so before it starts an oracle process).
        boolean checkOnly = args.length > 0 && args[0].equals("--check");
        if (checkOnly) {
            args = java.util.Arrays.copyOfRange(args, 1, args.length + 1);
            args[args.length - 1] = "--oracle=127.0.0.1:0"; // filled in by bin/so-fuzz
        }
        FuzzOptions options;
        try {
            options = FuzzOptions.parse(args);
        } catch (IllegalArgumentException e) {
            System.err.println("so-fuzz: " + e.getMessage());
            System.err.println(FuzzOptions.usage());
            System.exit(2);
            return;
        }
        if (checkOnly) {
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
