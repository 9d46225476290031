package io.sibyl.bench;

import io.netty.channel.EventLoopGroup;
import io.sibyl.client.oracle.OracleClient;
import io.sibyl.client.oracle.TransactionAbortedException;

import java.util.concurrent.CompletionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;

/**
 * One outstanding transaction at a time: begin, then commit a write set (with its certified reads, if serializable;
 * or finish, if read-only), then the next.
 * Everything after the first start runs on the connection's I/O thread, where the client completes its futures;
 * the slot's fields are touched by that thread only, so they need no synchronisation.
 */
final class Slot {
    private static final long RETRY_AFTER_ERROR_NANOS = 10_000_000L;

    private final OracleClient client;
    private final EventLoopGroup loop;
    private final LoadDriver driver;
    private final Metrics metrics;
    private final Runnable beginTask = this::begin;
    private final Runnable nextTask = this::next;
    private final BiConsumer<Long, Throwable> onBegin = this::onBegin;
    private final BiConsumer<Long, Throwable> onCommit = this::onCommit;
    /** Scheduled start (or actual begin time, when unlimited) of the current transaction. */
    private long start;
    private long commitSent;
    /** Start timestamp of the transaction being committed, reported cleaned up if it aborts. */
    private long committing;

    Slot(OracleClient client, EventLoopGroup loop, LoadDriver driver) {
        this.client = client;
        this.loop = loop;
        this.driver = driver;
        this.metrics = driver.metrics();
    }

    /** Starts the loop on the slot's I/O thread. */
    void launch() {
        loop.execute(nextTask);
    }

    private void next() {
        if (driver.stopping()) {
            return;
        }
        long now = System.nanoTime();
        start = driver.pacer().next(now);
        if (start - now > 0) {
            driver.ticker(loop).await(start, beginTask);
        } else {
            begin();
        }
    }

    private void begin() {
        if (!driver.pacer().limited()) {
            start = System.nanoTime();
        }
        metrics.beginSent();
        client.begin().whenComplete(onBegin);
    }

    private void onBegin(Long startTs, Throwable error) {
        long now = System.nanoTime();
        if (error != null) {
            failed(error);
            return;
        }
        metrics.started(now - start);
        ThreadLocalRandom random = ThreadLocalRandom.current();
        if (driver.readOnlyFraction() > 0 && random.nextDouble() < driver.readOnlyFraction()) {
            client.finish(startTs);
            metrics.readOnlyFinished();
            next();
            return;
        }
        committing = startTs;
        CertifiedReads certified = driver.certifiedReads();
        if (certified == null) {
            long[] rows = driver.writeSets().next(random);
            commitSent = System.nanoTime();
            client.commit(startTs, rows).whenComplete(onCommit);
        } else {
            long[] keys = driver.writeSets().nextKeys(random);
            long[] rows = WriteSets.rowIds(keys);
            long[] reads = certified.reads(random);
            long[] granules = certified.granulesWritten(keys);
            commitSent = System.nanoTime();
            client.commit(startTs, rows, reads, granules).whenComplete(onCommit);
        }
    }

    private void onCommit(Long commitTs, Throwable error) {
        long now = System.nanoTime();
        if (error == null) {
            metrics.committed(now - commitSent, now - start);
        } else {
            Throwable cause = error instanceof CompletionException && error.getCause() != null ? error.getCause() : error;
            if (cause instanceof TransactionAbortedException aborted) {
                metrics.aborted(aborted.reason());
                // As a client does once it deleted its versions (the bench wrote none): else the oracle keeps every
                // aborted transaction, and at max.aborted.transactions refuses begins, which a run with many read
                // conflicts (a scan's table granule) reaches within seconds.
                client.cleanedUp(committing);
            } else {
                failed(cause);
                return;
            }
        }
        next();
    }

    /** An unexpected failure (not an abort): count it and try again a little later, never recursively. */
    private void failed(Throwable error) {
        metrics.error(error);
        if (client.isOpen()) {
            loop.schedule(nextTask, RETRY_AFTER_ERROR_NANOS, TimeUnit.NANOSECONDS);
        } else {
            driver.connectionLost(client);
        }
    }
}
