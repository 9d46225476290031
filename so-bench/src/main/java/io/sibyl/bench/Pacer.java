package io.sibyl.bench;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Start times for transactions. Unlimited: start now. With a target rate, the n-th transaction (over all slots) is
 * scheduled at {@code t0 + n / rate}; a slot that becomes free takes the next scheduled time and waits for it if it
 * is in the future. When the oracle falls behind, scheduled times fall into the past and the wait shows up in the
 * measured latency, which is counted from the scheduled start (no coordinated omission).
 *
 * <p>The schedule restarts when measurement begins, so a backlog built up while the JVMs were warming up does not
 * leak into the measured window.
 */
final class Pacer {
    private final double nanosPerTxn;
    private volatile Schedule schedule = new Schedule(System.nanoTime());

    Pacer(double ratePerSecond) {
        this.nanosPerTxn = ratePerSecond > 0 ? 1e9 / ratePerSecond : 0;
    }

    boolean limited() {
        return nanosPerTxn > 0;
    }

    /** Starts (or restarts) the schedule at {@code nowNanos}. */
    void start(long nowNanos) {
        schedule = new Schedule(nowNanos);
    }

    /** Scheduled start of the next transaction (nanoTime); {@code now} when unlimited. */
    long next(long now) {
        if (nanosPerTxn == 0) {
            return now;
        }
        Schedule s = schedule;
        return s.t0 + (long) (s.tickets.getAndIncrement() * nanosPerTxn);
    }

    /** One schedule: its origin and the number of start times handed out (swapped as a whole on restart). */
    private static final class Schedule {
        final long t0;
        final AtomicLong tickets = new AtomicLong();

        Schedule(long t0) {
            this.t0 = t0;
        }
    }
}
