package io.sibyl.client.oracle;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sibyl.protocol.DecisionBlockWriter;
import org.junit.jupiter.api.Test;

import java.lang.management.ManagementFactory;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

/** In a steady state (tables already sized) applying decision blocks allocates nothing per record. */
class ReplicaAllocationTest {
    private static final int BLOCKS = 4000;
    private static final int RECORDS_PER_BLOCK = 100;

    @Test
    void applyingBlocksInASteadyStateDoesNotAllocatePerRecord() {
        java.lang.management.ThreadMXBean bean = ManagementFactory.getThreadMXBean();
        assumeTrue(bean instanceof com.sun.management.ThreadMXBean, "no per-thread allocation counter");
        com.sun.management.ThreadMXBean threads = (com.sun.management.ThreadMXBean) bean;
        assumeTrue(threads.isThreadAllocatedMemorySupported() && threads.isThreadAllocatedMemoryEnabled());

        // Commits, aborts, later forgets and a T_max that trails by ~2000 commits: the replica holds a steady ~2000.
        List<ByteBuf> blocks = new ArrayList<>();
        DecisionBlockWriter w = new DecisionBlockWriter();
        Random random = new Random(3);
        long ts = 0;
        List<Long> toForget = new ArrayList<>();
        List<Long> starts = new ArrayList<>();
        for (int b = 0; b < BLOCKS; b++) {
            w.start(ts);
            for (int r = 0; r < RECORDS_PER_BLOCK; r++) {
                long start = ++ts;
                if (random.nextInt(20) == 0) {
                    w.abort(start);
                    toForget.add(start);
                } else {
                    w.commit(start, ++ts);
                }
                starts.add(start);
            }
            if (toForget.size() > 40) {
                for (long f : toForget) {
                    w.forget(f);
                }
                toForget.clear();
            }
            if (starts.size() > 2000) {
                w.tMax(starts.get(starts.size() - 2000));
            }
            blocks.add(Unpooled.wrappedBuffer(w.seal()));
        }
        CommitReplica replica = new CommitReplica(1, 0, new long[0]);
        replica.registerReader(ts + 1); // a running local transaction that needs nothing held
        for (int b = 0; b < BLOCKS / 2; b++) {
            replica.apply(blocks.get(b)); // warm-up: tables reach their steady size, code gets compiled
        }
        long threadId = Thread.currentThread().getId();
        long before = threads.getThreadAllocatedBytes(threadId);
        for (int b = BLOCKS / 2; b < BLOCKS; b++) {
            replica.apply(blocks.get(b));
        }
        long allocated = threads.getThreadAllocatedBytes(threadId) - before;
        long records = (long) (BLOCKS / 2) * RECORDS_PER_BLOCK;
        // The boxed replica allocated ~100 bytes per commit (about 20 MB here); allow only constant noise.
        assertTrue(allocated < 64 * 1024, allocated + " bytes allocated applying " + records + " records");
        assertTrue(replica.commitCount() > 1500 && replica.commitCount() < 2500, "held " + replica.commitCount());
        assertTrue(replica.abortedCount() <= 100, "aborted " + replica.abortedCount());
        assertEquals(0, blocks.get(BLOCKS - 1).readableBytes());
    }
}
