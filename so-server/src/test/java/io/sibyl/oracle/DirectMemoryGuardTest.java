package io.sibyl.oracle;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.PooledByteBufAllocator;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Slow readers are closed once the pooled direct memory nears its limit, and only then, and only slow readers. */
class DirectMemoryGuardTest {

    @Test
    void underPressureOnlyConnectionsHoldingMoreThanAMegabyteOfUnreadRepliesAreClosed() throws Exception {
        long inUse = PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory();
        DirectMemoryGuard guard = new DirectMemoryGuard(inUse + (32L << 20));
        assertFalse(guard.shouldClose(10L << 20), "no pressure: even a slow reader stays");
        List<ByteBuf> held = new ArrayList<>();
        try {
            for (int i = 0; i < 30; i++) {
                held.add(PooledByteBufAllocator.DEFAULT.directBuffer(1 << 20, 1 << 20));
            }
            Thread.sleep(DirectMemoryGuard.SAMPLE_NANOS / 1_000_000 + 5);
            assertTrue(guard.shouldClose(2L << 20), "pressure: a reader 2 MB behind is closed");
            assertFalse(guard.shouldClose(100_000), "pressure: a reader keeping up stays");
        } finally {
            held.forEach(ByteBuf::release);
        }
    }
}
