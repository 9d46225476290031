package io.sibyl.oracle;

import io.sibyl.protocol.HostedRangeSweep;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;

/**
 * What the leader's background sweep of aborted ranges reported last, for {@code bin/sibyl status} and the metrics.
 * Written by the sweep's thread, read by the sequencer (status) and by scrapes, hence volatile fields and atomics.
 */
final class RangeSweepStatus implements HostedRangeSweep.Progress {
    /** Phase figure of an oracle that does not sweep in the background ({@code range.sweep.tables} empty). */
    static final long OFF = -1;

    private volatile long phase = OFF;
    private volatile long waiting;
    private final AtomicLong rangesSwept = new AtomicLong();
    private final AtomicLong versionsDeleted = new AtomicLong();
    private final AtomicLong failures = new AtomicLong();

    @Override
    public void phase(HostedRangeSweep.Phase newPhase, int ranges) {
        if (newPhase == HostedRangeSweep.Phase.FAILED) {
            failures.incrementAndGet();
        }
        phase = newPhase.ordinal();
        waiting = ranges;
    }

    @Override
    public void swept(int ranges, long versions) {
        rangesSwept.addAndGet(ranges);
        versionsDeleted.addAndGet(versions);
    }

    /** The phase's code ({@link HostedRangeSweep.Phase#ordinal()}), or {@link #OFF}. */
    long phase() {
        return phase;
    }

    long rangesSwept() {
        return rangesSwept.get();
    }

    long versionsDeleted() {
        return versionsDeleted.get();
    }

    long failures() {
        return failures.get();
    }

    /** The figures {@code bin/sibyl status} shows, named as in docs/protocol.md ("Admin requests"). */
    Map<String, Long> figures() {
        Map<String, Long> m = new LinkedHashMap<>();
        m.put("range.sweep.phase", phase);
        m.put("range.sweep.ranges.waiting", waiting);
        m.put("range.sweep.ranges.swept", rangesSwept.get());
        m.put("range.sweep.versions.deleted", versionsDeleted.get());
        m.put("range.sweep.failures", failures.get());
        return m;
    }
}
