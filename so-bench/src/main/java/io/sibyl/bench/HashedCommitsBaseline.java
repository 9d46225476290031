package io.sibyl.bench;

import io.netty.buffer.ByteBuf;
import io.sibyl.protocol.DecisionBlockReader;
import io.sibyl.protocol.DecisionVisitor;
import io.sibyl.protocol.SingleWriterLongLongMap;
import io.sibyl.protocol.SingleWriterLongSet;

/**
 * The replica's commit storage before issue 18 (main at 882c189), kept as the baseline of {@link ReplicaBench}: a
 * start-to-commit hash map, a queue of starts in commit order to trim it, and the aborted set, applied by the same
 * block reader. It only applies and trims; it answers no questions.
 */
final class HashedCommitsBaseline implements DecisionVisitor {
    private final SingleWriterLongLongMap commits = new SingleWriterLongLongMap(512);
    private final SingleWriterLongSet aborted = new SingleWriterLongSet(16);
    private long[] queue = new long[1024];
    private int queueHead;
    private int queueSize;
    private long tMax;

    /** Applies {@code blocks}, then forgets commits at or below T_max and below {@code oldestReader}. */
    void apply(ByteBuf blocks, long oldestReader) {
        DecisionBlockReader.readAll(blocks, this);
        long bound = Math.min(tMax, oldestReader - 1);
        while (queueSize > 0) {
            int index = commits.indexOf(queue[queueHead]);
            if (index >= 0) {
                if (commits.valueAt(index) > bound) {
                    break;
                }
                commits.removeAt(index);
            }
            queueHead = queueHead + 1 == queue.length ? 0 : queueHead + 1;
            queueSize--;
        }
    }

    /** Bytes of the map, the queue and the aborted set, by their capacities. */
    long bytes() {
        return 16L * commits.slots() + 8L * queue.length + 16L * aborted.slots();
    }

    int commitCount() {
        return commits.size();
    }

    @Override
    public void onCommit(long startTs, long commitTs) {
        if (commits.putIfAbsent(startTs, commitTs)) {
            if (queueSize == queue.length) {
                long[] bigger = new long[queue.length + (queue.length >>> 1)];
                for (int k = 0; k < queueSize; k++) {
                    bigger[k] = queue[(queueHead + k) % queue.length];
                }
                queue = bigger;
                queueHead = 0;
            }
            int tail = queueHead + queueSize;
            queue[tail >= queue.length ? tail - queue.length : tail] = startTs;
            queueSize++;
        }
    }

    @Override
    public void onAbort(long startTs) {
        aborted.add(startTs);
    }

    @Override
    public void onForget(long startTs) {
        aborted.remove(startTs);
    }

    @Override
    public void onTmax(long newTmax) {
        tMax = Math.max(tMax, newTmax);
    }
}
