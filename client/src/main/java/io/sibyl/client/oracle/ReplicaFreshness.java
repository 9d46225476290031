package io.sibyl.client.oracle;

/**
 * How up to date a connection's replica is: the newest consistent snapshot point it holds, since when, and the
 * highest timestamp replies handed out. Written only by the connection's I/O thread as replies are applied, read
 * by any thread: hence volatile.
 */
final class ReplicaFreshness {
    /** Highest start or commit timestamp in a reply on this connection. */
    private volatile long highestReplyTimestamp;
    /**
     * The highest start timestamp or ticket whose reply was applied: a consistent snapshot (every commit below it is in
     * the replica), as fresh as {@link #freshAsOfNanos}.
     */
    private volatile long snapshotPoint;
    /**
     * When the newest request whose decision reply (started, ticketed) was applied left this client: the replica
     * holds every commit acknowledged anywhere before then. A day back until then.
     */
    private volatile long freshAsOfNanos = System.nanoTime() - 86_400_000_000_000L;

    /** A reply handed out {@code timestamp} (a start, commit or ticket). On the I/O thread. */
    void replied(long timestamp) {
        if (timestamp > highestReplyTimestamp) {
            highestReplyTimestamp = timestamp;
        }
    }

    /**
     * A started or ticketed reply with {@code timestamp} was applied for a request sent at {@code sentNanos}. On the
     * I/O thread, after the reply's metadata reached the replica.
     */
    void snapshotAt(long timestamp, long sentNanos) {
        if (sentNanos - freshAsOfNanos > 0) {
            // The reply carries the metadata up to its own block, sealed after the request arrived, and a
            // timestamp handed out after it arrived: a snapshot there holds every commit acknowledged, and every
            // fast-path write acknowledged (its ticket is below), before the request left. Set before the
            // freshness, which readers check first.
            if (timestamp > snapshotPoint) {
                snapshotPoint = timestamp;
            }
            freshAsOfNanos = sentNanos;
        }
    }

    long highestReplyTimestamp() {
        return highestReplyTimestamp;
    }

    long snapshotPoint() {
        return snapshotPoint;
    }

    long freshAsOfNanos() {
        return freshAsOfNanos;
    }
}
