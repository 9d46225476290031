package io.sibyl.bench;

import org.HdrHistogram.Histogram;

import java.io.PrintStream;
import java.util.Locale;

/** Turns one measurement window into the human-readable report and the machine-readable RESULT line. */
final class Report {
    private final BenchOptions options;
    private final String oracle;
    private final double seconds;
    private final Metrics.Counts counts;
    private final Metrics.Latencies latencies;
    private final long deltaBytes;
    private final long startReplies;
    private final double benchCpu;
    private final double oracleCpu;
    private final double bookiesCpu;
    private final int lostConnections;
    private final String firstError;
    private final long replicaCommits;

    Report(BenchOptions options, String oracle, double seconds, Metrics.Counts counts, Metrics.Latencies latencies,
           long deltaBytes, long startReplies, double benchCpu, double oracleCpu, double bookiesCpu,
           int lostConnections,
           String firstError, long replicaCommits) {
        this.options = options;
        this.oracle = oracle;
        this.seconds = seconds;
        this.counts = counts;
        this.latencies = latencies;
        this.deltaBytes = deltaBytes;
        this.startReplies = startReplies;
        this.benchCpu = benchCpu;
        this.oracleCpu = oracleCpu;
        this.bookiesCpu = bookiesCpu;
        this.lostConnections = lostConnections;
        this.firstError = firstError;
        this.replicaCommits = replicaCommits;
    }

    /** Transactions that ended well per second: committed writers plus finished read-only ones. */
    double txnPerSecond() {
        return (counts.committed() + counts.readOnly()) / seconds;
    }

    /** Transactions that reached an outcome (committed, aborted or finished read-only) per second. */
    double attemptedPerSecond() {
        return (counts.committed() + counts.aborted() + counts.readOnly()) / seconds;
    }

    /** Aborted writers as a percentage of the writers that asked to commit. */
    double abortPercent() {
        long writers = counts.committed() + counts.aborted();
        return writers == 0 ? 0 : 100.0 * counts.aborted() / writers;
    }

    /** Read conflicts (a certified read overwritten since the start) as a percentage of the writers. */
    double readConflictPercent() {
        long writers = counts.committed() + counts.aborted();
        return writers == 0 ? 0 : 100.0 * counts.readConflicts() / writers;
    }

    double piggybackBytesPerBegin() {
        return startReplies == 0 ? 0 : (double) deltaBytes / startReplies;
    }

    void print(PrintStream out) {
        out.println();
        out.println("so-bench " + options.label + ": oracle " + oracle);
        out.println("  workload   " + options.describeWorkload());
        out.printf(Locale.ROOT, "  measured   %.1f s after a %.0f s warmup%n", seconds, options.warmupSeconds);
        out.printf(Locale.ROOT, "  throughput %.0f txn/s committed (%d writers, %d read-only), %.0f txn/s attempted"
                        + " (%d begins sent)%n", txnPerSecond(), counts.committed(), counts.readOnly(),
                attemptedPerSecond(), counts.begins());
        out.printf(Locale.ROOT, "  aborts     %.3f%% of commits (%d conflict, %d read conflict, %d too old, %d already"
                        + " aborted)%n", abortPercent(), counts.conflicts(), counts.readConflicts(), counts.tooOld(),
                counts.alreadyAborted());
        if (counts.errors() > 0 || lostConnections > 0) {
            out.printf(Locale.ROOT, "  errors     %d (first: %s), connections lost %d%n", counts.errors(), firstError,
                    lostConnections);
        }
        out.println("  latency (ms)        p50      p90      p99    p99.9      max     mean  count");
        out.println(latencyLine("begin", latencies.begin()));
        out.println(latencyLine("commit", latencies.commit()));
        out.println(latencyLine("transaction", latencies.txn()));
        out.printf(Locale.ROOT, "  piggyback  %.1f bytes of commit metadata per begin reply (%d bytes over %d begin"
                + " replies, all connections)%n", piggybackBytesPerBegin(), deltaBytes, startReplies);
        out.printf(Locale.ROOT, "  replica    %d commit timestamps held by each connection's replica (commits above"
                + " T_max), %d connection(s)%n", replicaCommits, options.connections);
        out.printf(Locale.ROOT, "  cpu        bench %s, oracle %s%s (100%% = one core)%n", pct(benchCpu),
                pct(oracleCpu), Double.isNaN(bookiesCpu) ? "" : ", bookies " + pct(bookiesCpu));
        out.println(resultLine());
        out.flush();
    }

    private static String latencyLine(String name, Histogram h) {
        if (h.getTotalCount() == 0) {
            return String.format(Locale.ROOT, "  %-14s %8s", name, "-");
        }
        return String.format(Locale.ROOT, "  %-14s%9.3f%9.3f%9.3f%9.3f%9.3f%9.3f  %d", name, ms(h, 50), ms(h, 90),
                ms(h, 99), ms(h, 99.9), h.getMaxValue() / 1e6, h.getMean() / 1e6, h.getTotalCount());
    }

    private static double ms(Histogram h, double percentile) {
        return h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(percentile) / 1e6;
    }

    private static String pct(double v) {
        return Double.isNaN(v) ? "n/a" : String.format(Locale.ROOT, "%.0f%%", v);
    }

    String resultLine() {
        Histogram b = latencies.begin();
        Histogram c = latencies.commit();
        Histogram t = latencies.txn();
        return String.format(Locale.ROOT, "RESULT label=%s ws=%d conns=%d window=%d txn_per_s=%.0f begin_p50=%.3f"
                        + " begin_p99=%.3f commit_p50=%.3f commit_p99=%.3f commit_p999=%.3f txn_p99=%.3f abort_pct=%.3f"
                        + " piggyback_bytes=%.1f bench_cpu=%s oracle_cpu=%s attempted_per_s=%.0f txn_p50=%.3f"
                        + " commit_max=%.3f ws_dist=%s keys=%d key_dist=%s ro=%s rate=%s io_threads=%d errors=%d secs=%.1f"
                        + " bookies_cpu=%s isolation=%s read_set=%d scan_rows=%d scan_certify=%s"
                        + " read_conflict_pct=%.3f",
                options.label, options.writeSet, options.connections, options.window, txnPerSecond(), ms(b, 50),
                ms(b, 99), ms(c, 50), ms(c, 99), ms(c, 99.9), ms(t, 99), abortPercent(), piggybackBytesPerBegin(),
                pct(benchCpu), pct(oracleCpu), attemptedPerSecond(), ms(t, 50),
                c.getTotalCount() == 0 ? Double.NaN : c.getMaxValue() / 1e6,
                options.writeSetDistribution.name().toLowerCase(Locale.ROOT), options.keys,
                options.keyDistribution == BenchOptions.KeyDistribution.UNIFORM ? "uniform"
                        : "zipfian" + options.zipfTheta,
                options.readOnlyFraction, options.rate > 0 ? String.format(Locale.ROOT, "%.0f", options.rate) : "max",
                options.ioThreads, counts.errors(), seconds, pct(bookiesCpu),
                options.isolationName(), options.readSet, options.scanRows,
                options.scanCertification.name().toLowerCase(Locale.ROOT), readConflictPercent());
    }
}
