package io.sibyl.oracle.ha;

import java.io.IOException;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Checks, across the oracles that succeed each other in a test, that every timestamp handed out is above all handed
 * out before it: none is given twice, even after a takeover.
 */
final class RisingTimestamps {
    private long highest;

    /** Begins on {@code c}, checking the start timestamp. */
    long begin(RawOracleClient c) throws IOException {
        long ts = c.begin();
        assertTrue(ts > highest, "timestamp " + ts + " handed out after " + highest);
        highest = ts;
        return ts;
    }

    /** Checks a commit timestamp just handed out. */
    void committedAt(long commitTs) {
        assertTrue(commitTs > highest, "commit timestamp " + commitTs + " after " + highest);
        highest = commitTs;
    }

    /** The highest timestamp seen so far. */
    long highest() {
        return highest;
    }
}
