package io.sibyl.bench.ttable;

import org.HdrHistogram.Histogram;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.StringJoiner;
import java.util.TreeMap;

/**
 * One measured thing (e.g. "raw Table.get" or "TTable get, 10 gets per transaction") and its results summed over
 * the measured rounds.
 */
final class Variant {
    /** One operation of a variant, run by a worker thread; returns the rows it read or wrote (0 if it aborted). */
    interface Op {
        int run(Worker w) throws Exception;
    }

    final BenchFlags.Group group;
    final String name;
    /** What one operation is, for the table (e.g. "1 row", "tx of 10 rows"). */
    final String opUnit;
    final Op op;

    final Histogram latency = newHistogram();
    long units;
    long ops;
    long aborts;
    long errors;
    long nanos;
    /** CPU time of the whole JVM (clients, minicluster, oracle) during the measured rounds. */
    long cpuNanos;
    /** CPU time of the calling (bench) threads alone: the client-side work not done by HBase's or Netty's threads. */
    long callerCpuNanos;
    final List<Double> roundRates = new ArrayList<>();
    /** Voluntary context switches of the JVM's threads during the measured rounds (-1: unknown). */
    long switches;
    /** HBase RPCs during the measured rounds, per method. */
    final Map<String, Long> rpcs = new TreeMap<>();

    Variant(BenchFlags.Group group, String name, String opUnit, Op op) {
        this.group = group;
        this.name = name;
        this.opUnit = opUnit;
        this.op = op;
    }

    static Histogram newHistogram() {
        return new Histogram(60_000_000_000L, 3); // nanoseconds, up to a minute
    }

    void add(long units, long ops, long aborts, long errors, long nanos, Histogram h) {
        this.units += units;
        this.ops += ops;
        this.aborts += aborts;
        this.errors += errors;
        this.nanos += nanos;
        latency.add(h);
        roundRates.add(units * 1e9 / nanos);
    }

    /** Rows per second over all measured rounds. */
    double rate() {
        return nanos == 0 ? 0 : units * 1e9 / nanos;
    }

    double opsRate() {
        return nanos == 0 ? 0 : ops * 1e9 / nanos;
    }

    /** HBase RPCs per operation, e.g. "Get 1.00" or "Multi 1.00 Scan 2.00"; "-" if none. */
    String rpcsPerOp() {
        StringJoiner j = new StringJoiner(" ");
        rpcs.forEach((method, n) -> {
            if (n > 0 && ops > 0 && n * 100 >= ops) { // skip background calls (< 0.01 per operation)
                j.add(String.format(Locale.ROOT, "%s %.2f", method, (double) n / ops));
            }
        });
        return j.length() == 0 ? "-" : j.toString();
    }

    /** Thread wake-ups (voluntary context switches) per operation, whole JVM; -1 if unknown. */
    double switchesPerOp() {
        return switches < 0 || ops == 0 ? -1 : (double) switches / ops;
    }

    /** CPU time of the whole JVM per operation, in microseconds. */
    double cpuMicrosPerOp() {
        return ops == 0 ? 0 : cpuNanos / 1e3 / ops;
    }

    double callerCpuMicrosPerOp() {
        return ops == 0 ? 0 : callerCpuNanos / 1e3 / ops;
    }

    /** Latency percentile of one operation, in microseconds. */
    double micros(double percentile) {
        return latency.getTotalCount() == 0 ? 0 : latency.getValueAtPercentile(percentile) / 1e3;
    }
}
