package io.sibyl.oracle;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The oracle's memory of its past, for reads of the past (docs/architecture.md, "Reads of the past"). A
 * <em>point</em> is the clock {@code S} at a moment, the start timestamps of the transactions then running, and the
 * commits decided after it until the next point (start, commit timestamp, time). The state at any timestamp
 * {@code E} from {@code S} on follows: a transaction is in it when it started below {@code S}, was not running then
 * and did not abort, or when it committed after the point at or below {@code E}; a fast-path version when it is at
 * or below {@code E}. So a read of the past needs no commit timestamps, which the replicas forget once T_max passes
 * them, and it is exact at every timestamp kept.
 *
 * <p>A point is recorded before a commit or ticket when the newest is {@code history.interval.ms} old (an idle
 * oracle records none). Points are served for {@code history.retention.ms} and kept {@code keepExtraMillis} longer
 * (the longest a transaction may read), so that the oldest kept point, whose state bounds what the garbage collector
 * removes, is never above the state a running read of the past reads. Memory: 8 bytes per running transaction per
 * point and 24 per commit, within {@code history.max.bytes} (the oldest points go first). Owned by the sequencer
 * thread.
 */
final class HistoryPoints {
    private static final Logger LOG = LoggerFactory.getLogger(HistoryPoints.class);
    /** A point with more running transactions than this is not recorded (its reply would not fit a frame). */
    static final int MAX_RUNNING_PER_POINT = 100_000;
    /** Heap bytes of a point besides its lists. */
    private static final long POINT_OVERHEAD_BYTES = 96;
    /** Longs per commit in a point's log: start, commit timestamp (or fast-path version), decided at (ms). */
    private static final int LOG_STRIDE = 3;
    /** Longs per chunk of a point's log: 4,096 commits. */
    private static final int CHUNK_LONGS = LOG_STRIDE * 4096;
    /** Start timestamp logged for a ticket: its version matters, it has no start. */
    private static final long NO_START = 0;

    /** One point of the past and the commits decided after it, until the next point. */
    static final class Point {
        final long snapshotTs;
        final long recordedMillis;
        final long recordedNanos;
        /** Start timestamps of the transactions running at the point, ascending. */
        final long[] running;
        /**
         * The log: full chunks of {@link #CHUNK_LONGS}, then the one being filled, which starts small and doubles up to
         * that size. A quiet point logs a few commits; a busy second logs hundreds of thousands, which one doubling
         * array would copy and reallocate in ever larger pieces on the sequencer thread.
         */
        private final List<long[]> full = new ArrayList<>();
        private long[] current = new long[LOG_STRIDE * 16];
        private int logged;

        Point(long snapshotTs, long recordedMillis, long recordedNanos, long[] running) {
            this.snapshotTs = snapshotTs;
            this.recordedMillis = recordedMillis;
            this.recordedNanos = recordedNanos;
            this.running = running;
        }

        /** Returns the bytes added. */
        long append(long startTs, long version, long millis) {
            int at = logged % CHUNK_LONGS;
            long added = 0;
            if (at == 0 && logged > 0) {
                full.add(current); // at CHUNK_LONGS: the next chunk starts at that size
                current = new long[CHUNK_LONGS];
                added = 8L * CHUNK_LONGS;
            } else if (at + LOG_STRIDE > current.length) {
                long[] bigger = Arrays.copyOf(current, Math.min(CHUNK_LONGS, current.length * 2));
                added = 8L * (bigger.length - current.length);
                current = bigger;
            }
            current[at] = startTs;
            current[at + 1] = version;
            current[at + 2] = millis;
            logged += LOG_STRIDE;
            return added;
        }

        long bytes() {
            return POINT_OVERHEAD_BYTES + 8L * running.length + 8L * CHUNK_LONGS * full.size() + 8L * current.length;
        }

        private long at(int i) {
            int chunk = i / CHUNK_LONGS;
            return (chunk < full.size() ? full.get(chunk) : current)[i % CHUNK_LONGS];
        }

        /** Start timestamps of the transactions that committed after the point, at or below {@code bound}. */
        long[] committedUpTo(long bound) {
            long[] starts = new long[logged / LOG_STRIDE];
            int n = 0;
            for (int i = 0; i < logged && at(i + 1) <= bound; i += LOG_STRIDE) {
                if (at(i) != NO_START) {
                    starts[n++] = at(i);
                }
            }
            long[] out = Arrays.copyOf(starts, n);
            Arrays.sort(out);
            return out;
        }

        /** The highest commit timestamp or version decided after the point by {@code millis}, or the point's clock. */
        long boundAt(long millis) {
            long bound = snapshotTs;
            for (int i = 0; i < logged && at(i + 2) <= millis; i += LOG_STRIDE) {
                bound = at(i + 1);
            }
            return bound;
        }
    }

    /** A read of the past: the point, the timestamp read at, the commits after the point that it sees; or a refusal. */
    record Answer(Point point, long bound, long[] committedAfter, String refusal) {
        static Answer refused(String why) {
            return new Answer(null, 0, null, why);
        }

        static Answer at(Point p, long bound) {
            return new Answer(p, bound, p.committedUpTo(bound), null);
        }
    }

    private final HistorySettings settings;
    private final long servedNanos;
    private final long keptNanos;
    private final long intervalNanos;
    private final long startedMillis;
    /** Points, oldest first, from {@link #head}. */
    private final List<Point> points = new ArrayList<>();
    private int head;
    private long bytes;
    /** When the newest commit or ticket was decided (ms since the epoch); the oracle's start before the first. */
    private long lastDecisionMillis;
    private boolean warnedFull;

    HistoryPoints(HistorySettings settings, long keepExtraMillis, long nowMillis) {
        this.settings = settings;
        this.servedNanos = settings.retentionMillis() * 1_000_000L;
        this.keptNanos = servedNanos + keepExtraMillis * 1_000_000L;
        this.intervalNanos = settings.intervalMillis() * 1_000_000L;
        this.lastDecisionMillis = nowMillis;
        this.startedMillis = nowMillis;
    }

    boolean enabled() {
        return settings.enabled();
    }

    /** Why a read of the past is refused when the oracle keeps no history, and how to fix it. */
    private static final String OFF = "reads of the past are off on this oracle (history.retention.ms=0): set"
            + " history.retention.ms to how far back transactions may read (for example 3600000 for an hour;"
            + " docs/operations.md)";

    /**
     * The first point, at the clock the oracle starts with: nothing runs yet (what ran before a recovery is in an
     * aborted range), and until the first commit every later timestamp reads this state.
     */
    void start(long clock, long nowNanos) {
        Point p = new Point(clock, startedMillis, nowNanos, new long[0]);
        points.add(p);
        bytes += p.bytes();
    }

    /** Before a commit or ticket decides: records a point if the newest is an interval old. */
    void beforeCommit(long clock, RunningTransactions running, long nowNanos, long nowMillis) {
        Point last = last();
        if (last == null || nowNanos - last.recordedNanos >= intervalNanos) {
            record(clock, running, nowNanos, nowMillis);
        }
    }

    /**
     * A commit decided: the transaction that started at {@code startTs} ({@link #NO_START} for a ticket) is visible
     * from {@code version} (its commit timestamp, or a fast-path write's version) on.
     */
    void afterCommit(long startTs, long version, long nowMillis) {
        Point last = last();
        if (last != null) {
            bytes += last.append(startTs, version, nowMillis);
            trimToMemory();
        }
        lastDecisionMillis = nowMillis;
    }

    /** Afterwards {@link #afterCommit} for a ticket. */
    void afterTicket(long version, long nowMillis) {
        afterCommit(NO_START, version, nowMillis);
    }

    /** The state at timestamp {@code ts}, which must be at or below the clock. */
    Answer atTimestamp(long ts, long clock, RunningTransactions running, long nowNanos, long nowMillis) {
        if (!enabled()) {
            return Answer.refused(OFF);
        }
        if (ts > clock) {
            return Answer.refused("timestamp " + ts + " has not been handed out yet (the oracle's clock is at " + clock
                    + "): ask for a timestamp at or below it, or begin an ordinary transaction");
        }
        expire(nowNanos);
        keepPresentServed(clock, running, nowNanos, nowMillis);
        int i = latestAtOrBelow(ts, true, nowNanos);
        if (i < 0) {
            return Answer.refused(tooOld("timestamp " + ts, nowNanos));
        }
        return Answer.at(points.get(i), ts);
    }

    /** The state at wall-clock time {@code millis} (ms since the epoch): every commit decided by then. */
    Answer atTime(long millis, long clock, RunningTransactions running, long nowNanos, long nowMillis) {
        if (!enabled()) {
            return Answer.refused(OFF);
        }
        if (millis > nowMillis) {
            return Answer.refused("time " + millis + " ms is in the oracle's future (its clock reads " + nowMillis
                    + " ms): ask for a time in the past, or begin an ordinary transaction");
        }
        expire(nowNanos);
        keepPresentServed(clock, running, nowNanos, nowMillis);
        if (millis >= lastDecisionMillis) {
            Point p = last();
            if (p != null) {
                return Answer.at(p, clock); // nothing decided since: the present
            }
        }
        int i = latestAtOrBelow(millis, false, nowNanos);
        if (i < 0) {
            return Answer.refused(tooOld("time " + millis + " ms", nowNanos));
        }
        Point p = points.get(i);
        return Answer.at(p, p.boundAt(millis));
    }

    /**
     * After a quiet spell longer than the retention (no commit, so no point recorded), the present is still readable:
     * a point is recorded for it, which also makes the collector keep what it reads.
     */
    private void keepPresentServed(long clock, RunningTransactions running, long nowNanos, long nowMillis) {
        Point last = last();
        if (last == null || nowNanos - last.recordedNanos >= servedNanos) {
            record(clock, running, nowNanos, nowMillis);
        }
    }

    /** The oldest point kept (what the garbage collector must keep readable), or null. */
    Point oldestKept(long nowNanos) {
        expire(nowNanos);
        return head < points.size() ? points.get(head) : null;
    }

    int size() {
        return points.size() - head;
    }

    long bytes() {
        return bytes;
    }

    private String tooOld(String what, long nowNanos) {
        Point oldest = oldestServed(nowNanos);
        String kept = oldest == null
                ? "no point of the past is kept yet (this oracle started or took over at " + startedMillis + " ms)"
                : "the oldest it can read at is timestamp " + oldest.snapshotTs + " (time " + oldest.recordedMillis
                        + " ms)";
        return what + " is older than the history this oracle keeps (history.retention.ms="
                + settings.retentionMillis() + ", history.max.bytes=" + settings.maxBytes() + "): " + kept
                + "; garbage collection may have removed what was visible before it. Raise history.retention.ms on"
                + " the oracle to read further back";
    }

    private Point oldestServed(long nowNanos) {
        for (int i = head; i < points.size(); i++) {
            if (nowNanos - points.get(i).recordedNanos < servedNanos) {
                return points.get(i);
            }
        }
        return null;
    }

    /** Index of the newest point served whose clock ({@code byTs}) or time is at or below {@code bound}, or -1. */
    private int latestAtOrBelow(long bound, boolean byTs, long nowNanos) {
        int lo = head;
        int hi = points.size() - 1;
        int found = -1;
        while (lo <= hi) {
            int mid = (lo + hi) >>> 1;
            Point p = points.get(mid);
            if ((byTs ? p.snapshotTs : p.recordedMillis) <= bound) {
                found = mid;
                lo = mid + 1;
            } else {
                hi = mid - 1;
            }
        }
        // Points kept past the retention serve only the reads that began on them.
        return found >= 0 && nowNanos - points.get(found).recordedNanos < servedNanos ? found : -1;
    }

    private void record(long clock, RunningTransactions running, long nowNanos, long nowMillis) {
        int n = running.live();
        if (n > MAX_RUNNING_PER_POINT) {
            if (!warnedFull) {
                warnedFull = true;
                LOG.warn("not recording a point of the past: {} transactions are running, more than {}", n,
                        MAX_RUNNING_PER_POINT);
            }
            return;
        }
        long[] starts = new long[n];
        int[] count = {0};
        running.forEachLive((ts, owner, state) -> {
            if (count[0] < starts.length) {
                starts[count[0]++] = ts;
            }
            return true;
        });
        long[] sorted = Arrays.copyOf(starts, count[0]);
        Arrays.sort(sorted);
        Point p = new Point(clock, nowMillis, nowNanos, sorted);
        points.add(p);
        bytes += p.bytes();
        trimToMemory();
    }

    private void trimToMemory() {
        while (bytes > settings.maxBytes() && size() > 1) {
            Point dropped = points.get(head++);
            bytes -= dropped.bytes();
            if (!warnedFull) {
                warnedFull = true;
                LOG.warn("dropping points of the past from {} ms on to stay within history.max.bytes={}: reads of"
                        + " the past reach less far back than history.retention.ms={}; raise history.max.bytes",
                        dropped.recordedMillis, settings.maxBytes(), settings.retentionMillis());
            }
        }
        compact();
    }

    private void expire(long nowNanos) {
        while (head < points.size() && nowNanos - points.get(head).recordedNanos >= keptNanos) {
            bytes -= points.get(head++).bytes();
        }
        compact();
    }

    private void compact() {
        if (head > 1024 && head > points.size() / 2) {
            points.subList(0, head).clear();
            head = 0;
        }
    }

    private Point last() {
        return head < points.size() ? points.get(points.size() - 1) : null;
    }
}
