package io.sibyl.bench;

import org.HdrHistogram.Histogram;

import java.nio.ByteBuffer;
import java.util.Arrays;
import java.util.Base64;
import java.util.HashMap;
import java.util.Locale;
import java.util.Map;
import java.util.zip.DataFormatException;

/**
 * What one so-bench-clients driver process measured in the measurement window, and its one-line form on the
 * driver's standard output, which the coordinator parses and adds up (histograms travel compressed, in base64, so
 * that percentiles are computed over every connection's transactions, not averaged).
 */
record DriverResult(int connections, long elapsedNanos, long cpuNanos, int lostConnections, Metrics.Counts counts,
                    ReceiveCounters.Snapshot received, Metrics.Latencies latencies) {
    static final String PREFIX = "DRIVER-RESULT ";

    /** The sum of two drivers' results over the same window (the longer elapsed time is kept). */
    DriverResult plus(DriverResult o) {
        Metrics.Latencies sum = Metrics.Latencies.empty();
        sum.add(latencies);
        sum.add(o.latencies);
        Metrics.Counts c = o.counts;
        Metrics.Counts total = new Metrics.Counts(counts.begins() + c.begins(), counts.committed() + c.committed(),
                counts.readOnly() + c.readOnly(), counts.conflicts() + c.conflicts(),
                counts.readConflicts() + c.readConflicts(), counts.tooOld() + c.tooOld(),
                counts.alreadyAborted() + c.alreadyAborted(), counts.errors() + c.errors());
        return new DriverResult(connections + o.connections, Math.max(elapsedNanos, o.elapsedNanos),
                cpuNanos + o.cpuNanos, lostConnections + o.lostConnections, total, received.plus(o.received), sum);
    }

    String encode() {
        Metrics.Counts c = counts;
        ReceiveCounters.Snapshot r = received;
        return PREFIX + String.format(Locale.ROOT, "connections=%d elapsed=%d cpu=%d lost=%d begins=%d committed=%d"
                        + " conflicts=%d too_old=%d already_aborted=%d errors=%d frames=%d bytes=%d replies=%d"
                        + " start_replies=%d delta_bytes=%d delta_records=%d begin=%s commit=%s txn=%s",
                connections, elapsedNanos, cpuNanos, lostConnections, c.begins(), c.committed(), c.conflicts(),
                c.tooOld(), c.alreadyAborted(), c.errors(), r.frames(), r.bytes(), r.replies(), r.startReplies(),
                r.deltaBytes(), r.deltaRecords(), histogram(latencies.begin()), histogram(latencies.commit()),
                histogram(latencies.txn()));
    }

    static DriverResult decode(String line) {
        if (!line.startsWith(PREFIX)) {
            throw new IllegalArgumentException("not a driver result: " + line);
        }
        Map<String, String> v = new HashMap<>();
        for (String field : line.substring(PREFIX.length()).trim().split(" ")) {
            int eq = field.indexOf('=');
            v.put(field.substring(0, eq), field.substring(eq + 1));
        }
        // A driver of so-bench-clients commits without certified reads: no read conflicts to carry.
        Metrics.Counts counts = new Metrics.Counts(num(v, "begins"), num(v, "committed"), 0, num(v, "conflicts"), 0,
                num(v, "too_old"), num(v, "already_aborted"), num(v, "errors"));
        ReceiveCounters.Snapshot received = new ReceiveCounters.Snapshot(num(v, "frames"), num(v, "bytes"),
                num(v, "replies"), num(v, "start_replies"), num(v, "delta_bytes"), num(v, "delta_records"));
        Metrics.Latencies latencies = new Metrics.Latencies(histogram(v, "begin"), histogram(v, "commit"),
                histogram(v, "txn"));
        return new DriverResult((int) num(v, "connections"), num(v, "elapsed"), num(v, "cpu"), (int) num(v, "lost"),
                counts, received, latencies);
    }

    private static long num(Map<String, String> v, String key) {
        String s = v.get(key);
        if (s == null) {
            throw new IllegalArgumentException("driver result without " + key);
        }
        return Long.parseLong(s);
    }

    private static String histogram(Histogram h) {
        ByteBuffer buffer = ByteBuffer.allocate(h.getNeededByteBufferCapacity());
        int length = h.encodeIntoCompressedByteBuffer(buffer);
        return Base64.getEncoder().encodeToString(Arrays.copyOf(buffer.array(), length));
    }

    private static Histogram histogram(Map<String, String> v, String key) {
        String s = v.get(key);
        if (s == null) {
            throw new IllegalArgumentException("driver result without " + key);
        }
        try {
            return Histogram.decodeFromCompressedByteBuffer(ByteBuffer.wrap(Base64.getDecoder().decode(s)), 0);
        } catch (DataFormatException e) {
            throw new IllegalArgumentException("driver result with a bad " + key + " histogram: " + e.getMessage());
        }
    }
}
