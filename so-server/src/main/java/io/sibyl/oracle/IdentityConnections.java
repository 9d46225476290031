package io.sibyl.oracle;

import java.util.concurrent.ConcurrentHashMap;

/**
 * Counts the open connections of each identity against {@code max.connections.per.identity}, so that one client
 * cannot take every place under {@code max.connections}. Thread-safe: I/O threads admit and release concurrently;
 * identities without connections are forgotten.
 */
final class IdentityConnections {
    private final int limit;
    private final ConcurrentHashMap<Long, Integer> open = new ConcurrentHashMap<>();

    IdentityConnections(int limit) {
        this.limit = limit;
    }

    /** The most connections one identity may hold open. */
    int limit() {
        return limit;
    }

    /** Takes a place for a connection of {@code identity}; false (nothing taken) when it holds its limit already. */
    boolean admit(ClientIdentity identity) {
        boolean[] admitted = {false};
        open.compute(identity.limitKey(), (key, held) -> {
            int n = held == null ? 0 : held;
            if (n >= limit) {
                return held;
            }
            admitted[0] = true;
            return n + 1;
        });
        return admitted[0];
    }

    /** A connection {@link #admit} let in has closed. */
    void release(ClientIdentity identity) {
        open.computeIfPresent(identity.limitKey(), (key, held) -> held <= 1 ? null : held - 1);
    }

    /** Connections of {@code identity} open now. */
    int openOf(ClientIdentity identity) {
        return open.getOrDefault(identity.limitKey(), 0);
    }
}
