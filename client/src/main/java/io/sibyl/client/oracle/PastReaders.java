package io.sibyl.client.oracle;

import io.sibyl.protocol.AbortedRange;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.LongSupplier;

/**
 * What a replica forgets while reads of the past run, kept aside for them. The oracle forgets an aborted writer (or
 * an aborted range) once its versions are deleted and no running transaction is older; a read of the past is older,
 * and may have fetched such a version before its delete: without this it would then read it as committed. Kept
 * until no read of the past runs; one that begins later cannot fetch what was deleted before it began. A read its
 * application never ended stops counting once it is older than a read of the past may be.
 */
final class PastReaders {
    /** A registration outlives the read's own age limit by this much, so that the read stops first. */
    private static final long MARGIN_NANOS = 1_000_000_000L;

    private final Object lock = new Object();
    /** Registration token to when it began (nanoTime); guarded by lock. */
    private final Map<Long, Long> registrations = new HashMap<>();
    private long nextToken = 1;
    private volatile boolean any;
    private final Set<Long> forgotten = ConcurrentHashMap.newKeySet();
    private volatile List<AbortedRange> forgottenRanges = List.of();
    /** Longest a read of the past lasts when the oracle sets no transaction.max.age.ms. */
    static final long PAST_READ_MAX_NANOS = 3_600_000_000_000L;

    /** The oracle's transaction.max.age.ms in nanoseconds, 0 for none: how long a read of the past may last. */
    private final LongSupplier transactionMaxAgeNanos;

    PastReaders(LongSupplier transactionMaxAgeNanos) {
        this.transactionMaxAgeNanos = transactionMaxAgeNanos;
    }

    /** How long a read of the past may last (nanoseconds): a registration its transaction leaked ends then. */
    long maxAgeNanos() {
        long maxAge = transactionMaxAgeNanos.getAsLong();
        return maxAge == 0 ? PAST_READ_MAX_NANOS : maxAge;
    }

    /**
     * Is the writer {@code writerTs}, which finished before a read of the past's point, committed? {@code aborted}:
     * the replica knows it aborted; {@code ranges}: the replica's aborted ranges.
     */
    Visibility visibility(long writerTs, boolean aborted, List<AbortedRange> ranges) {
        if (aborted || wasForgotten(writerTs)) {
            return Visibility.INVISIBLE;
        }
        Visibility inRange = ReplicaRanges.pastVisibility(writerTs, ranges);
        if (inRange == null) {
            inRange = ReplicaRanges.pastVisibility(writerTs, forgottenRanges);
        }
        return inRange == null ? Visibility.VISIBLE : inRange;
    }

    /** A read of the past begins; returns the token that ends it. */
    long begins() {
        synchronized (lock) {
            long token = nextToken++;
            registrations.put(token, System.nanoTime());
            any = true;
            return token;
        }
    }

    void ends(long token) {
        synchronized (lock) {
            if (registrations.remove(token) != null && registrations.isEmpty()) {
                letGo();
            }
        }
    }

    /** Before the replica forgets the aborted writer {@code startTs} (so that a reader never misses both). */
    void forgetting(long startTs) {
        if (any) {
            synchronized (lock) {
                if (stillReading()) {
                    forgotten.add(startTs);
                }
            }
        }
    }

    /** Before the replica forgets {@code range}. */
    void forgettingRange(AbortedRange range) {
        if (any) {
            synchronized (lock) {
                if (stillReading()) {
                    List<AbortedRange> next = new ArrayList<>(forgottenRanges);
                    next.add(range);
                    forgottenRanges = List.copyOf(next);
                }
            }
        }
    }

    private boolean wasForgotten(long startTs) {
        return any && forgotten.contains(startTs);
    }

    /** Under the lock: drops registrations older than a read may last (leaked), and says whether any is left. */
    private boolean stillReading() {
        long oldestAllowed = System.nanoTime() - maxAgeNanos() - MARGIN_NANOS;
        registrations.values().removeIf(began -> began - oldestAllowed < 0);
        if (registrations.isEmpty()) {
            letGo();
            return false;
        }
        return true;
    }

    private void letGo() {
        any = false;
        forgotten.clear();
        forgottenRanges = List.of();
    }
}
