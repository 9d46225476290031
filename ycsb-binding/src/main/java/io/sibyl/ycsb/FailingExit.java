package io.sibyl.ycsb;

import java.util.ArrayList;
import java.util.List;

/**
 * Makes the JVM exit with status 1 once a failure has been recorded. YCSB 0.17's {@code site.ycsb.Client} exits 0
 * even when a binding cannot start or a workload throws from its cleanup, and it calls {@code System.exit(0)}
 * only after printing its summary; a shutdown hook that halts with 1 keeps that summary and still fails the run.
 * Only in a JVM that YCSB's {@code Client.main} runs: a program or a test that calls the binding itself gets the
 * exception and decides, and its JVM's exit status is its own (a test JVM halted with 1 fails the whole build).
 */
public final class FailingExit {
    /** The exit status of a run in which a failure was recorded. */
    public static final int STATUS = 1;

    private static final List<String> REASONS = new ArrayList<>();
    private static boolean hooked;

    private FailingExit() {
    }

    /**
     * Prints {@code reason} to stderr now and, in a YCSB Client JVM, again at exit, which then ends with status
     * {@value #STATUS}.
     */
    public static synchronized void fail(String reason) {
        if (REASONS.contains(reason)) {
            return; // every YCSB client thread may hit the same failure (e.g. a missing table): say it once
        }
        System.err.println("FAILED: " + reason);
        REASONS.add(reason);
        if (!hooked && underYcsbClient()) {
            hooked = true;
            Runtime.getRuntime().addShutdownHook(new Thread(FailingExit::haltFailed, "sibyl-failing-exit"));
        }
    }

    /** True once the JVM will exit with status {@value #STATUS}. */
    public static synchronized boolean armed() {
        return hooked;
    }

    /** True if some thread runs YCSB's {@code site.ycsb.Client.main} (directly or under another main). */
    private static boolean underYcsbClient() {
        for (StackTraceElement[] stack : Thread.getAllStackTraces().values()) {
            for (StackTraceElement frame : stack) {
                if (frame.getClassName().equals("site.ycsb.Client") && frame.getMethodName().equals("main")) {
                    return true;
                }
            }
        }
        return false;
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
