package io.sibyl.bench;

import io.netty.channel.EventLoopGroup;

import java.util.ArrayDeque;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/**
 * Releases paced transactions on one I/O thread from a periodic tick instead of a timer per transaction: at
 * 100,000 txn/s a timer each cost the load generator more CPU than the oracle it measures, on the same cores. A
 * transaction starts at the first tick at or after its scheduled time, so it starts up to {@link #TICK_NANOS} late;
 * latency is counted from the scheduled time, so that lateness is charged to the oracle, never hidden.
 *
 * <p>Confined to its I/O thread: {@link #await} is called there, and the tick runs there.
 */
final class PacingTicker {
    static final long TICK_NANOS = 50_000;

    private final EventLoopGroup loop;
    private final BooleanSupplier stopping;
    /** Waiting starts in scheduled order: the pacer hands out increasing times, and this thread asks in turn. */
    private final ArrayDeque<Waiting> waiting = new ArrayDeque<>();
    private boolean ticking;

    private record Waiting(long start, Runnable begin) {
    }

    PacingTicker(EventLoopGroup loop, BooleanSupplier stopping) {
        this.loop = loop;
        this.stopping = stopping;
    }

    /** Runs {@code begin} on this I/O thread at the first tick at or after {@code start} (nanoTime). */
    void await(long start, Runnable begin) {
        waiting.addLast(new Waiting(start, begin));
        if (!ticking) {
            ticking = true;
            loop.schedule(this::tick, TICK_NANOS, TimeUnit.NANOSECONDS);
        }
    }

    private void tick() {
        long now = System.nanoTime();
        Waiting w;
        while ((w = waiting.peekFirst()) != null && w.start() - now <= 0) {
            waiting.pollFirst();
            w.begin().run();
        }
        if (waiting.isEmpty() || stopping.getAsBoolean()) {
            ticking = false;
            waiting.clear();
            return;
        }
        loop.schedule(this::tick, TICK_NANOS, TimeUnit.NANOSECONDS);
    }
}
