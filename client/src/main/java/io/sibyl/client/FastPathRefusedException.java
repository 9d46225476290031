package io.sibyl.client;

import org.apache.hadoop.hbase.DoNotRetryIOException;

/**
 * A region server declined to commit a single-row transaction itself (no ticket from the oracle in time, or a version
 * an increment would read whose writer it cannot place): nothing was written, and the client runs the write as an
 * ordinary transaction instead. Thrown by the fast-path coprocessor; users see it only if they send such writes by
 * hand.
 */
public class FastPathRefusedException extends DoNotRetryIOException {
    private static final long serialVersionUID = 1L;

    /** HBase rebuilds a region server's exception on the client from its message. */
    public FastPathRefusedException(String message) {
        super(message);
    }
}
