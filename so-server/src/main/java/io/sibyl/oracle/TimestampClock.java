package io.sibyl.oracle;

import io.sibyl.protocol.DecisionBlockWriter;
import io.sibyl.protocol.Timestamps;

/**
 * Hands out the oracle's timestamps, unique and increasing, and journals a reservation ahead of them, so that an
 * oracle that recovers the journal restarts above every timestamp ever handed out without a journal write per begin.
 *
 * <p>Owned by the sequencer thread, like the rest of {@link OracleState}.
 */
final class TimestampClock {
    /** Where a new reservation is written: the decision block being built, durable before its replies leave. */
    private final DecisionBlockWriter block;
    /** {@code timestamp.reservation.block}: how far past the clock each reservation reaches. */
    private final long reservationBlock;
    private long last;
    private long reservedUpTo;

    /** A clock whose last timestamp is {@code lastTimestamp} (0 for a fresh oracle), reserved up to there. */
    TimestampClock(long lastTimestamp, long reservationBlock, DecisionBlockWriter block) {
        this.last = lastTimestamp;
        this.reservedUpTo = lastTimestamp;
        this.reservationBlock = reservationBlock;
        this.block = block;
    }

    /**
     * The next multiple of {@link Timestamps#STEP}: the numbers between are left to fast-path versions. Past the
     * reservation it writes a new one to the block first.
     */
    long next() {
        long ts = last = Timestamps.nextAbove(last);
        if (ts > reservedUpTo) {
            // Compared before adding: a sum past Long.MAX_VALUE would journal a negative limit, and recovery would
            // restart the clock below timestamps already handed out.
            if (reservationBlock >= DecisionBlockWriter.MAX_TIMESTAMP - ts) {
                last = ts - Timestamps.STEP;
                throw new IllegalStateException("timestamp space exhausted: no block of " + reservationBlock
                        + " timestamps fits above " + ts);
            }
            reservedUpTo = ts + reservationBlock;
            block.reserve(reservedUpTo);
        }
        return ts;
    }

    /** The last timestamp handed out (the one recovered, before the first). */
    long last() {
        return last;
    }

    /**
     * The highest timestamp that may have been handed out, as far as the journal knows: the end of the reservation.
     * Timestamps between {@link #last} and it were never handed out, so no version carries them.
     */
    long reservedUpTo() {
        return Math.max(last, reservedUpTo);
    }
}
