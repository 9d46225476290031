package io.sibyl.client;

import org.apache.hadoop.hbase.client.RetriesExhaustedWithDetailsException;

import java.io.InterruptedIOException;
import java.net.SocketTimeoutException;
import java.nio.channels.ClosedByInterruptException;

/** Keeps a thread's interrupt visible across HBase client calls, which clear it. */
final class Interrupts {
    private Interrupts() {
    }

    /**
     * HBase's client turns an interrupt of the calling thread into an {@link InterruptedIOException} (alone, or in a
     * {@link RetriesExhaustedWithDetailsException} for a batch) and clears the thread's interrupt flag on the way.
     * Sets the flag again if {@code e} says the call was interrupted, so that the application, its executor and
     * {@code run} still see the interrupt; returns whether it did.
     */
    static boolean keepInterrupt(Throwable e) {
        if (interrupted(e, 0)) {
            Thread.currentThread().interrupt();
            return true;
        }
        return false;
    }

    private static boolean interrupted(Throwable e, int depth) {
        if (e == null || depth > 8) {
            return false;
        }
        if (e instanceof InterruptedException || e instanceof ClosedByInterruptException
                || (e instanceof InterruptedIOException && !(e instanceof SocketTimeoutException))) {
            return true;
        }
        if (e instanceof RetriesExhaustedWithDetailsException batch) {
            for (int i = 0; i < batch.getNumExceptions(); i++) {
                if (interrupted(batch.getCause(i), depth + 1)) {
                    return true;
                }
            }
        }
        return e.getCause() != e && interrupted(e.getCause(), depth + 1);
    }
}
