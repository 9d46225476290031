package io.sibyl.bench;

import io.sibyl.client.oracle.TransactionAbortedException;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

import java.util.concurrent.atomic.LongAdder;

/**
 * What the slots record, from the client I/O threads: three latency recorders (multi-writer, wait-free) and event
 * counters. Counters only grow; a measurement window is the difference of two {@link #snapshot}s, and
 * {@link #startInterval} discards latencies recorded before the window.
 */
final class Metrics {
    private static final long HIGHEST_NANOS = 3_600_000_000_000L;

    private final Recorder begin = new Recorder(1_000, HIGHEST_NANOS, 3);
    private final Recorder commit = new Recorder(1_000, HIGHEST_NANOS, 3);
    private final Recorder txn = new Recorder(1_000, HIGHEST_NANOS, 3);
    private final LongAdder begins = new LongAdder();
    private final LongAdder committed = new LongAdder();
    private final LongAdder readOnly = new LongAdder();
    private final LongAdder conflicts = new LongAdder();
    private final LongAdder readConflicts = new LongAdder();
    private final LongAdder tooOld = new LongAdder();
    private final LongAdder alreadyAborted = new LongAdder();
    private final LongAdder errors = new LongAdder();
    private volatile String firstError;

    /** A begin request is about to be sent. */
    void beginSent() {
        begins.increment();
    }

    /** A start timestamp arrived {@code nanos} after the transaction's (scheduled) start. */
    void started(long nanos) {
        begin.recordValue(clamp(nanos));
    }

    void readOnlyFinished() {
        readOnly.increment();
    }

    /** A commit succeeded: {@code commitNanos} from commit request to reply, {@code txnNanos} for the whole transaction. */
    void committed(long commitNanos, long txnNanos) {
        committed.increment();
        commit.recordValue(clamp(commitNanos));
        txn.recordValue(clamp(txnNanos));
    }

    void aborted(TransactionAbortedException.Reason reason) {
        switch (reason) {
            case CONFLICT -> conflicts.increment();
            case TOO_OLD -> tooOld.increment();
            case ALREADY_ABORTED -> alreadyAborted.increment();
            case READ_CONFLICT -> readConflicts.increment(); // only a serializable transaction's
        }
    }

    void error(Throwable t) {
        errors.increment();
        if (firstError == null) {
            firstError = t.toString();
        }
    }

    String firstError() {
        return firstError;
    }

    private static long clamp(long nanos) {
        return Math.max(1_000, Math.min(nanos, HIGHEST_NANOS));
    }

    /** Drops the latencies recorded so far (the warmup). */
    void startInterval() {
        begin.reset();
        commit.reset();
        txn.reset();
    }

    /** Latencies recorded since {@link #startInterval} or the previous call, in nanoseconds. */
    Latencies latencies() {
        return new Latencies(begin.getIntervalHistogram(), commit.getIntervalHistogram(), txn.getIntervalHistogram());
    }

    Counts snapshot() {
        return new Counts(begins.sum(), committed.sum(), readOnly.sum(), conflicts.sum(), readConflicts.sum(),
                tooOld.sum(), alreadyAborted.sum(), errors.sum());
    }

    /** Begin, commit and whole-transaction latency histograms of one interval, in nanoseconds. */
    record Latencies(Histogram begin, Histogram commit, Histogram txn) {
        static Latencies empty() {
            return new Latencies(histogram(), histogram(), histogram());
        }

        private static Histogram histogram() {
            return new Histogram(1_000, HIGHEST_NANOS, 3);
        }

        /** Adds {@code other}'s values to these histograms. */
        void add(Latencies other) {
            begin.add(other.begin);
            commit.add(other.commit);
            txn.add(other.txn);
        }
    }

    /** Cumulative event counts at one instant: write-write {@code conflicts}, certified-read {@code readConflicts}. */
    record Counts(long begins, long committed, long readOnly, long conflicts, long readConflicts, long tooOld,
                  long alreadyAborted, long errors) {
        long aborted() {
            return conflicts + readConflicts + tooOld + alreadyAborted;
        }

        Counts minus(Counts o) {
            return new Counts(begins - o.begins, committed - o.committed, readOnly - o.readOnly,
                    conflicts - o.conflicts, readConflicts - o.readConflicts, tooOld - o.tooOld,
                    alreadyAborted - o.alreadyAborted, errors - o.errors);
        }
    }
}
