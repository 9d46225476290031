package io.sibyl.oracle;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.function.LongSupplier;

/**
 * {@code transaction.max.age.ms}: aborts the transactions that have run longer (within the sampling period), so that
 * a transaction its client leaked cannot hold the low watermark down for ever. Checked when a block is sealed.
 */
final class TransactionExpiry {
    private static final Logger LOG = LoggerFactory.getLogger(TransactionExpiry.class);
    private static final long AGE_SAMPLE_NANOS = 100_000_000L;
    /** At most this many samples per max age (one per 100 ms of an hour): a longer max age samples less often. */
    private static final long MAX_AGE_SAMPLES = 36_000;

    /** transaction.max.age.ms in nanoseconds; 0: transactions may run for ever. */
    private final long maxAgeNanos;
    /** How far apart the age samples are: 100 ms, or longer for a max age above an hour (bounded memory). */
    private final long sampleNanos;
    /**
     * Samples {clock, nanoClock} taken at least {@link #sampleNanos} apart: every timestamp up to the clock had been
     * handed out at that time, so a sample older than the max age bounds the transactions to expire.
     */
    private final ArrayDeque<long[]> samples = new ArrayDeque<>();
    private final LongSupplier nanoClock;

    TransactionExpiry(long maxAgeMillis, LongSupplier nanoClock) {
        this.maxAgeNanos = maxAgeMillis * 1_000_000L;
        this.sampleNanos = Math.max(AGE_SAMPLE_NANOS, maxAgeNanos / MAX_AGE_SAMPLES);
        this.nanoClock = nanoClock;
    }

    /**
     * Aborts (through {@code abort}) the running transactions older than the max age, given the last timestamp handed
     * out, {@code clock}. Their clients stop reading and writing in them by then on their own; the oldest still holds
     * the watermark for {@code reader.grace.ms}, like a lost connection's.
     */
    void expire(long clock, RunningTransactions running, RunningTransactions.AbortSink abort, WatermarkHolds holds) {
        if (maxAgeNanos == 0) {
            return;
        }
        long now = nanoClock.getAsLong();
        if (samples.isEmpty() || now - samples.peekLast()[1] >= sampleNanos) {
            samples.addLast(new long[] {clock, now});
        }
        long expireUpTo = -1;
        while (!samples.isEmpty() && now - samples.peekFirst()[1] >= maxAgeNanos) {
            expireUpTo = samples.pollFirst()[0];
        }
        if (expireUpTo < 0) {
            return;
        }
        long oldest = running.oldest(Long.MAX_VALUE);
        if (oldest > expireUpTo) {
            return;
        }
        int expired = running.finishStartedUpTo(expireUpTo, abort);
        holds.hold(oldest, now);
        LOG.warn("aborted {} transactions that ran longer than transaction.max.age.ms={} (started at or before {},"
                + " the oldest at {}); their clients can no longer read, write or commit in them", expired,
                maxAgeNanos / 1_000_000L, expireUpTo, oldest);
    }

    /** Age samples kept (tests: they stay bounded whatever the max age). */
    int sampleCount() {
        return samples.size();
    }
}
