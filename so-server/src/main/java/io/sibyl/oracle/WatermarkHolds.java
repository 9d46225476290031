package io.sibyl.oracle;

import java.util.ArrayDeque;

/**
 * Floors under the low watermark for readers the oracle can no longer see: the transactions of a connection it lost,
 * and, after a recovery, every transaction of the oracle before it. Such a client may go on reading its snapshot from
 * HBase (its replica answers for it) for half the grace period after it last heard from an oracle; a hold keeps the
 * versions it reads from garbage collection for the whole grace period, which is counted from a later moment (the
 * oracle noticed the loss, or took over, after the client last heard from it).
 *
 * <p>Every hold lasts the same grace period, so holds expire in the order they were added. Owned by the sequencer
 * thread.
 */
final class WatermarkHolds {
    private record Hold(long expiresAtNanos, long floor) {
    }

    private final long graceNanos;
    private final ArrayDeque<Hold> holds = new ArrayDeque<>();

    WatermarkHolds(long graceMillis) {
        this.graceNanos = graceMillis * 1_000_000L;
    }

    /** Keeps the watermark at or below {@code floor} for the grace period from {@code nowNanos}. */
    void hold(long floor, long nowNanos) {
        holds.addLast(new Hold(nowNanos + graceNanos, floor));
    }

    /** The lowest floor of a hold still in force at {@code nowNanos}, or {@code ifNone}; forgets expired holds. */
    long floor(long nowNanos, long ifNone) {
        while (!holds.isEmpty() && nowNanos - holds.peekFirst().expiresAtNanos() >= 0) {
            holds.removeFirst();
        }
        long floor = ifNone;
        for (Hold h : holds) {
            floor = Math.min(floor, h.floor());
        }
        return floor;
    }

    /** Holds in force as last counted (expired ones are forgotten by {@link #floor}). */
    int size() {
        return holds.size();
    }
}
