package io.sibyl.client.oracle;

import java.util.concurrent.CompletableFuture;

/** A request to the oracle waiting to be written or answered. */
final class OracleRequest {
    final byte type;
    final long ts;
    final long[] rows;
    /** COMMIT_CERTIFIED: rows and granules read, and granules written. */
    long[] reads;
    long[] granules;
    /** When the frame holding it was written ({@link System#nanoTime}); set by the I/O thread. */
    long sentNanos;
    final CompletableFuture<Object> future = new CompletableFuture<>();

    OracleRequest(byte type, long ts, long[] rows) {
        this.type = type;
        this.ts = ts;
        this.rows = rows;
    }
}
