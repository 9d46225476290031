package io.sibyl.client.oracle;

import io.sibyl.protocol.AbortedRange;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What a replica forgets while reads of the past run, kept aside for them. The oracle forgets an aborted writer (or
 * an aborted range) once its versions are deleted and no running transaction is older; a read of the past is older,
 * and may have fetched such a version before its delete: without this it would then read it as committed. Kept
 * until no read of the past runs; one that begins later cannot fetch what was deleted before it began.
 */
final class PastReaders {
    private final Object lock = new Object();
    private int count; // guarded by lock
    private volatile boolean any;
    private final Set<Long> forgotten = ConcurrentHashMap.newKeySet();
    private volatile List<AbortedRange> forgottenRanges = List.of();

    void begins() {
        synchronized (lock) {
            count++;
            any = true;
        }
    }

    void ends() {
        synchronized (lock) {
            if (count > 0 && --count == 0) {
                any = false;
                forgotten.clear();
                forgottenRanges = List.of();
            }
        }
    }

    /** Before the replica forgets the aborted writer {@code startTs} (so that a reader never misses both). */
    void forgetting(long startTs) {
        if (any) {
            synchronized (lock) {
                if (count > 0) {
                    forgotten.add(startTs);
                }
            }
        }
    }

    /** Before the replica forgets {@code range}. */
    void forgettingRange(AbortedRange range) {
        if (any) {
            synchronized (lock) {
                if (count > 0) {
                    List<AbortedRange> next = new ArrayList<>(forgottenRanges);
                    next.add(range);
                    forgottenRanges = List.copyOf(next);
                }
            }
        }
    }

    boolean wasForgotten(long startTs) {
        return any && forgotten.contains(startTs);
    }

    List<AbortedRange> forgottenRanges() {
        return forgottenRanges;
    }
}
