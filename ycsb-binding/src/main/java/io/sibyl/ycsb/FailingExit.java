package io.sibyl.ycsb;

import java.util.ArrayList;
import java.util.List;

/**
 * Makes the JVM exit with status 1 once a failure has been recorded. YCSB 0.17's {@code site.ycsb.Client} exits 0
 * even when a binding cannot start or a workload throws from its cleanup, and it calls {@code System.exit(0)}
 * only after printing its summary; a shutdown hook that halts with 1 keeps that summary and still fails the run.
 */
public final class FailingExit {
    /** The exit status of a run in which a failure was recorded. */
    public static final int STATUS = 1;

    private static final List<String> REASONS = new ArrayList<>();
    private static boolean hooked;

    private FailingExit() {
    }

    /** Prints {@code reason} to stderr now and again at exit, which then ends with status {@value #STATUS}. */
    public static synchronized void fail(String reason) {
        if (REASONS.contains(reason)) {
            return; // every YCSB client thread may hit the same failure (e.g. a missing table): say it once
        }
        System.err.println("FAILED: " + reason);
        REASONS.add(reason);
        if (!hooked) {
            hooked = true;
            Runtime.getRuntime().addShutdownHook(new Thread(FailingExit::haltFailed, "sibyl-failing-exit"));
        }
    }

    /** The reasons recorded so far. */
    public static synchronized List<String> reasons() {
        return List.copyOf(REASONS);
    }

    private static void haltFailed() {
        synchronized (FailingExit.class) {
            for (String r : REASONS) {
                System.err.println("FAILED: " + r);
            }
        }
        System.out.flush();
        System.err.flush();
        // Inside a shutdown hook halt is the only way to change the status System.exit(0) was called with.
        Runtime.getRuntime().halt(STATUS);
    }
}
