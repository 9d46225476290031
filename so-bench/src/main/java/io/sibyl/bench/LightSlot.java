package io.sibyl.bench;

import io.netty.channel.EventLoop;
import io.sibyl.client.oracle.TransactionAbortedException;

import java.io.IOException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;

/**
 * One outstanding transaction at a time on a {@link LightConnection}: begin, commit a write set, then the next. It
 * runs on the connection's event loop, where the replies arrive, so its fields need no synchronisation. Latency is
 * counted from the transaction's scheduled start under a rate, so a late start is charged to the oracle.
 */
final class LightSlot implements LightConnection.Replies {
    /** After a refused request the slot waits this long, so that an overloaded oracle is not asked in a tight loop. */
    private static final long RETRY_AFTER_REFUSAL_NANOS = 10_000_000L;

    private final LightConnection connection;
    private final EventLoop loop;
    private final DriverLoad load;
    private final Metrics metrics;
    private final int requestId;
    private final Runnable sendBegin = this::sendBegin;
    private final Runnable startNext = this::startNext;
    private long scheduledStart;
    private long commitSentNanos;

    LightSlot(LightConnection connection, EventLoop loop, DriverLoad load) {
        this.connection = connection;
        this.loop = loop;
        this.load = load;
        this.metrics = load.metrics();
        this.requestId = connection.addSlot(this);
    }

    void launch() {
        loop.execute(startNext);
    }

    private void startNext() {
        if (load.stopping() || !connection.isOpen()) {
            return;
        }
        long now = System.nanoTime();
        scheduledStart = load.pacer().next(now);
        if (scheduledStart - now <= 0) {
            sendBegin();
        } else {
            load.ticker().await(scheduledStart, sendBegin);
        }
    }

    private void sendBegin() {
        if (!connection.isOpen()) {
            return;
        }
        if (!load.pacer().limited()) {
            scheduledStart = System.nanoTime();
        }
        metrics.beginSent();
        connection.begin(requestId);
    }

    @Override
    public void started(long startTs) {
        metrics.started(System.nanoTime() - scheduledStart);
        long[] rows = load.writeSets().next(ThreadLocalRandom.current());
        commitSentNanos = System.nanoTime();
        connection.commit(requestId, startTs, rows);
    }

    @Override
    public void committed(long commitTs) {
        long now = System.nanoTime();
        metrics.committed(now - commitSentNanos, now - scheduledStart);
        startNext();
    }

    @Override
    public void aborted(TransactionAbortedException.Reason reason) {
        metrics.aborted(reason);
        startNext();
    }

    @Override
    public void refused(byte code, String text) {
        metrics.error(new IOException("the oracle refused a request with ERROR code " + code + ": " + text));
        loop.schedule(startNext, RETRY_AFTER_REFUSAL_NANOS, TimeUnit.NANOSECONDS);
    }
}
