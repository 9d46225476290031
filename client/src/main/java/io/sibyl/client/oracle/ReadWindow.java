package io.sibyl.client.oracle;

/**
 * When the oracle was last heard on a connection, and so how long snapshots begun on it stay readable: the oracle
 * protects a lost connection's readers for its reader grace period, and a reader stops after half of it (docs/gc.md).
 * Written by the connection's I/O thread, read by any thread: hence volatile.
 */
final class ReadWindow {
    /** When the last frame arrived: the oracle sends one at least every second while the connection lives. */
    private volatile long lastHeardNanos = System.nanoTime();
    /**
     * Arrival of the first frame after a silence of a whole read window; until then the connection's creation, before
     * any transaction begun on it (System.nanoTime may be negative: no 0 sentinel).
     */
    private volatile long gapEndedNanos = lastHeardNanos;
    /** Half the oracle's reader grace period (from HELLO): how long snapshots stay readable after the last frame. */
    private volatile long readWindowNanos = Long.MAX_VALUE;

    /** A frame arrived just now. On the I/O thread. */
    void heard() {
        long now = System.nanoTime();
        if (now - lastHeardNanos >= readWindowNanos) {
            gapEndedNanos = now;
        }
        lastHeardNanos = now;
    }

    /** Sets the window from the oracle's reader grace period in ms (its HELLO), counting at most an hour of it. */
    void graceFromHello(long readerGraceMillis) {
        readWindowNanos = Math.min(readerGraceMillis, 3_600_000L) / 2 * 1_000_000L;
    }

    /** See {@link OracleClient#snapshotsProtected()}. */
    boolean snapshotsProtected() {
        return System.nanoTime() - lastHeardNanos < readWindowNanos;
    }

    /** See {@link OracleClient#snapshotsProtected(long)}. */
    boolean snapshotsProtected(long begunAtNanos) {
        return snapshotsProtected() && gapEndedNanos - begunAtNanos < 0;
    }

    /** See {@link OracleClient#nanosLeftInReadWindow(long)}. */
    long nanosLeft(long begunAtNanos) {
        long window = readWindowNanos;
        long heard = lastHeardNanos;
        if (gapEndedNanos - begunAtNanos >= 0) {
            return 0;
        }
        if (window == Long.MAX_VALUE) {
            return Long.MAX_VALUE;
        }
        return Math.max(0, heard + window - System.nanoTime());
    }

    /** Milliseconds since the last frame arrived. */
    long millisSinceHeard() {
        return (System.nanoTime() - lastHeardNanos) / 1_000_000L;
    }

    /** The window in ms; {@link Long#MAX_VALUE} before the HELLO. */
    long windowMillis() {
        return readWindowNanos == Long.MAX_VALUE ? Long.MAX_VALUE : readWindowNanos / 1_000_000L;
    }
}
