package io.sibyl.bench.fuzz;

import io.sibyl.protocol.Wire;

import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/** The figures of a finished run and its verdict: PASS only if nothing went wrong. */
final class FuzzReport {
    private static final String[] REQUEST_NAMES = {"", "BEGIN", "COMMIT", "ABORT", "CLEANED_UP", "QUERY", "FINISH",
            "WATERMARK_QUERY", "RANGE_CLEANED_UP", "AUTHENTICATE"};
    private static final String[] ERROR_NAMES = {"", "malformed", "too large", "version", "unknown transaction",
            "fell behind", "shutting down", "refused for a limit", "forbidden"};

    final FuzzOptions options;
    final FuzzCounters counters;
    final GoodOutcomes good;
    final double seconds;
    final List<String> historyViolations;
    /** Null when the run had no oracle pid. */
    final Boolean oracleAlive;
    final boolean freshClientServed;
    final RssSampler rss;
    final Map<String, Long> logProblems;
    final String firstLogProblem;

    FuzzReport(FuzzOptions options, FuzzCounters counters, GoodOutcomes good, double seconds,
               List<String> historyViolations, Boolean oracleAlive, boolean freshClientServed, RssSampler rss,
               Map<String, Long> logProblems, String firstLogProblem) {
        this.options = options;
        this.counters = counters;
        this.good = good;
        this.seconds = seconds;
        this.historyViolations = historyViolations;
        this.oracleAlive = oracleAlive;
        this.freshClientServed = freshClientServed;
        this.rss = rss;
        this.logProblems = logProblems;
        this.firstLogProblem = firstLogProblem;
    }

    /** Why the run failed; empty if it passed. */
    List<String> failures() {
        List<String> f = new ArrayList<>();
        if (counters.misbehaviours() > 0) {
            f.add(counters.misbehaviours() + " answers to attackers broke the protocol");
        }
        if (good.wrongAnswers() > 0) {
            f.add(good.wrongAnswers() + " wrong answers to good clients");
        }
        if (!historyViolations.isEmpty()) {
            f.add(historyViolations.size() + " violations of snapshot isolation or timestamp uniqueness");
        }
        if (good.commits.sum() == 0) {
            f.add("the good clients committed nothing");
        }
        if (Boolean.FALSE.equals(oracleAlive)) {
            f.add("the oracle process is gone");
        }
        if (!freshClientServed) {
            f.add("a fresh client was not served at the end");
        }
        if (options.maxRssMb > 0 && rss != null && rss.maxKb() > options.maxRssMb * 1024) {
            f.add("the oracle's resident memory reached " + rss.maxKb() / 1024 + " MiB, above --max-rss-mb "
                    + options.maxRssMb);
        }
        if (!logProblems.isEmpty()) {
            f.add("the oracle's output holds " + logProblems + "; first: " + firstLogProblem);
        }
        return f;
    }

    void print(PrintStream out) {
        long frames = counters.frames();
        out.printf(Locale.ROOT, "so-fuzz: %,d attack frames in %.1f s (%,.0f/s), seed %d, %d attacking threads, "
                + "%d good clients%n", frames, seconds, frames / seconds, options.seed, options.connections,
                options.goodClients);
        StringBuilder kinds = new StringBuilder();
        for (FrameKind k : FrameKind.values()) {
            kinds.append(String.format(Locale.ROOT, "%s%s %,d", kinds.length() == 0 ? "" : ", ", k.label,
                    counters.frames(k)));
        }
        out.println("  frames by kind: " + kinds);
        StringBuilder requests = new StringBuilder();
        for (byte t = Wire.BEGIN; t <= Wire.AUTHENTICATE; t++) {
            requests.append(String.format(Locale.ROOT, "%s%s %,d", requests.length() == 0 ? "" : ", ",
                    REQUEST_NAMES[t], counters.requests(t)));
        }
        out.println("  requests in hostile frames: " + requests);
        out.println("  errors closing the connection: " + errors(true));
        out.println("  errors for one request: " + errors(false));
        out.printf(Locale.ROOT, "  connections: %,d opened by attackers, %,d closed by the oracle (each after an ERROR"
                + " unless listed below), %,d dropped by the attacker mid-frame%n",
                counters.connectionsOpened.sum(), counters.closedByOracle.sum(), counters.droppedMidFrame.sum());
        out.printf(Locale.ROOT, "  request-level ERRORs with request id 0 (mutated requests numbered 0; protocol.md"
                + " keeps id 0 for errors that close the connection): %,d%n", counters.requestErrorsForIdZero.sum());
        out.println("  a TLS ClientHello was answered: " + counters.tlsAnswer.get());
        out.printf(Locale.ROOT, "  good clients: %,d transactions, %,d committed, %,d conflicts, %,d too old, %,d own"
                + " aborts, %,d read-only, %,d queries checked, %,d begins refused for a limit; %,d wrong answers%n",
                good.transactions.sum(), good.commits.sum(), good.conflicts.sum(), good.tooOld.sum(),
                good.ownAborts.sum(), good.readOnly.sum(), good.queriesChecked.sum(), good.refusedBegins.sum(),
                good.wrongAnswers());
        out.printf(Locale.ROOT, "  sweeper (admin role): %,d aborted transactions reported cleaned up%n",
                good.swept.sum());
        if (rss != null && rss.samples() > 0) {
            out.printf(Locale.ROOT, "  oracle memory (VmRSS, %d samples): first %,d MiB, max %,d MiB, end %,d MiB%n",
                    rss.samples(), rss.firstKb() / 1024, rss.maxKb() / 1024, rss.lastKb() / 1024);
        }
        out.println("  oracle process alive at the end: " + (oracleAlive == null ? "unknown (no --server-pid)"
                : oracleAlive ? "yes" : "NO") + "; a fresh client served: " + (freshClientServed ? "yes" : "NO"));
        out.println("  oracle log: " + (options.oracleLog == null ? "not checked (no --oracle-log)"
                : logProblems.isEmpty() ? "no unexpected errors, leaks or OutOfMemoryError" : logProblems.toString()));
        for (String s : counters.misbehaviourTexts()) {
            out.println("  PROTOCOL BREACH: " + s);
        }
        for (String s : good.wrongAnswerTexts()) {
            out.println("  WRONG ANSWER: " + s);
        }
        historyViolations.stream().limit(20).forEach(s -> out.println("  SNAPSHOT ISOLATION: " + s));
        List<String> failures = failures();
        out.println(failures.isEmpty() ? "so-fuzz: PASS" : "so-fuzz: FAIL: " + String.join("; ", failures));
    }

    private String errors(boolean connectionLevel) {
        StringBuilder b = new StringBuilder();
        for (int code = 1; code < ERROR_NAMES.length; code++) {
            long n = connectionLevel ? counters.connectionErrors(code) : counters.requestErrors(code);
            if (n > 0) {
                b.append(String.format(Locale.ROOT, "%scode %d %s %,d", b.length() == 0 ? "" : ", ", code,
                        ERROR_NAMES[code], n));
            }
        }
        return b.length() == 0 ? "none" : b.toString();
    }
}
