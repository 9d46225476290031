package io.sibyl.oracle;

import io.netty.buffer.PooledByteBufAllocator;
import io.netty.util.internal.PlatformDependent;

/**
 * Keeps the oracle's direct memory (Netty's pooled buffers: replies waiting in connections' outbound queues) below
 * the JVM's limit. Each connection's unread replies are bounded by {@code max.lag.bytes}, but a few thousand
 * connections could still hold far more than the limit together: about 16 clients that never read their replies once
 * exhausted a 1 GB limit, and then every connection that needed a buffer failed. Past {@link #PRESSURE} of the limit,
 * connections holding more than {@link #SLOW_READER_BYTES} of unread replies are closed (the slow readers), so that
 * the others keep being served. Thread-safe; the usage is sampled at most every {@link #SAMPLE_NANOS}.
 */
final class DirectMemoryGuard {
    /** Share of the direct memory limit above which slow readers are closed. */
    static final double PRESSURE = 0.75;
    /** Unread replies a connection may hold whatever the pressure: a client reading normally holds far less. */
    static final long SLOW_READER_BYTES = 1L << 20;
    static final long SAMPLE_NANOS = 10_000_000L;

    private final long limit;
    private volatile long sampledAtNanos = System.nanoTime() - SAMPLE_NANOS;
    private volatile long used;

    DirectMemoryGuard() {
        this(PlatformDependent.maxDirectMemory());
    }

    DirectMemoryGuard(long limit) {
        this.limit = limit;
    }

    /** True if a connection with {@code unreadBytes} of replies should be closed now to save direct memory. */
    boolean shouldClose(long unreadBytes) {
        return unreadBytes > SLOW_READER_BYTES && usedBytes() > limit * PRESSURE;
    }

    /** Pooled direct memory in use (sampled). */
    long usedBytes() {
        long now = System.nanoTime();
        if (now - sampledAtNanos >= SAMPLE_NANOS) {
            used = PooledByteBufAllocator.DEFAULT.metric().usedDirectMemory();
            sampledAtNanos = now;
        }
        return used;
    }

    long limit() {
        return limit;
    }
}
