package io.sibyl.oracle;

import java.util.Iterator;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Decides which refusals get a log line: the first of each address per period, with a count of those left out, so
 * that a client retrying in a loop (or an attacker) cannot flood the log. Thread-safe; at most {@link #MAX_ADDRESSES}
 * addresses are remembered.
 */
final class RefusalLog {
    static final int MAX_ADDRESSES = 10_000;

    private final long periodMillis;
    private final Map<String, long[]> lastLogged = new ConcurrentHashMap<>();

    RefusalLog(long periodMillis) {
        this.periodMillis = periodMillis;
    }

    /**
     * Records a refusal of {@code address}: returns how many refusals of it went unlogged since its last line when
     * this one should be logged, or -1 when it should not.
     */
    long admit(String address) {
        long now = System.currentTimeMillis();
        if (lastLogged.size() >= MAX_ADDRESSES) {
            forgetOlderThan(now - periodMillis);
        }
        long[] entry = lastLogged.computeIfAbsent(address, a -> new long[] {Long.MIN_VALUE, 0});
        synchronized (entry) {
            if (entry[0] != Long.MIN_VALUE && now - entry[0] < periodMillis) {
                entry[1]++;
                return -1;
            }
            long suppressed = entry[1];
            entry[0] = now;
            entry[1] = 0;
            return suppressed;
        }
    }

    private void forgetOlderThan(long cutoff) {
        for (Iterator<long[]> it = lastLogged.values().iterator(); it.hasNext(); ) {
            long[] e = it.next();
            synchronized (e) {
                if (e[0] < cutoff) {
                    it.remove();
                }
            }
        }
    }
}
