package io.sibyl.bench;

import java.util.concurrent.atomic.LongAdder;

/**
 * What the light connections of one driver process received from the oracle: frames and their bytes (length prefix
 * included, as on the socket), reply messages, and the replicated metadata ({@code DELTA} bytes and, when decoded,
 * records). Written by the I/O threads, read by the control thread; counters only grow.
 */
final class ReceiveCounters {
    private final LongAdder frames = new LongAdder();
    private final LongAdder bytes = new LongAdder();
    private final LongAdder replies = new LongAdder();
    private final LongAdder startReplies = new LongAdder();
    private final LongAdder deltaBytes = new LongAdder();
    private final LongAdder deltaRecords = new LongAdder();

    void frame(int frameBytes) {
        frames.increment();
        bytes.add(frameBytes);
    }

    /** A reply message to a request; {@code start}: a {@code STARTED}. */
    void reply(boolean start) {
        replies.increment();
        if (start) {
            startReplies.increment();
        }
    }

    void delta(int length, long records) {
        deltaBytes.add(length);
        deltaRecords.add(records);
    }

    Snapshot snapshot() {
        return new Snapshot(frames.sum(), bytes.sum(), replies.sum(), startReplies.sum(), deltaBytes.sum(),
                deltaRecords.sum());
    }

    /** The counts at one instant; a measurement is the difference of two. */
    record Snapshot(long frames, long bytes, long replies, long startReplies, long deltaBytes, long deltaRecords) {
        Snapshot minus(Snapshot o) {
            return new Snapshot(frames - o.frames, bytes - o.bytes, replies - o.replies,
                    startReplies - o.startReplies, deltaBytes - o.deltaBytes, deltaRecords - o.deltaRecords);
        }

        Snapshot plus(Snapshot o) {
            return new Snapshot(frames + o.frames, bytes + o.bytes, replies + o.replies,
                    startReplies + o.startReplies, deltaBytes + o.deltaBytes, deltaRecords + o.deltaRecords);
        }
    }
}
