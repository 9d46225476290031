package io.sibyl.oracle;

import com.sun.management.UnixOperatingSystemMXBean;
import io.netty.channel.Channel;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.lang.management.ManagementFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * {@code max.connections}: takes a place for each new connection and gives it back when it closes, counts those
 * refused, and logs refusals at most once per interval so that a flood of connections does not flood the log.
 * I/O threads admit concurrently.
 */
final class ConnectionAdmission {
    private static final Logger LOG = LoggerFactory.getLogger(ConnectionAdmission.class);
    private static final long REFUSAL_LOG_INTERVAL_NANOS = 10_000_000_000L;
    /** Files the oracle needs besides its client connections: jars, epoll, the journal's bookie and ZooKeeper links. */
    private static final int FILE_DESCRIPTORS_BESIDES_CONNECTIONS = 256;

    private final int maxConnections;
    /** Connections admitted and not closed yet. */
    private final AtomicInteger admitted = new AtomicInteger();
    private final AtomicLong refused = new AtomicLong();
    /** When a refused connection was last logged. */
    private final AtomicLong refusalLoggedNanos = new AtomicLong(System.nanoTime() - REFUSAL_LOG_INTERVAL_NANOS);
    private final AtomicLong refusalsLogged = new AtomicLong();

    ConnectionAdmission(int maxConnections) {
        this.maxConnections = maxConnections;
    }

    /** Takes a place for a new connection; false (nothing taken) when none is left. */
    boolean admit() {
        if (admitted.incrementAndGet() <= maxConnections) {
            return true;
        }
        admitted.decrementAndGet();
        return false;
    }

    /** An admitted connection closed: its place is free again. */
    void release() {
        admitted.decrementAndGet();
    }

    /** A connection was refused at max.connections: logged, at most once per interval with the count since. */
    void refused(Channel channel, String reason) {
        long total = refused.incrementAndGet();
        long last = refusalLoggedNanos.get();
        long now = System.nanoTime();
        if (now - last >= REFUSAL_LOG_INTERVAL_NANOS && refusalLoggedNanos.compareAndSet(last, now)) {
            long since = total - refusalsLogged.getAndSet(total);
            LOG.warn("refused the connection from {} ({} refused in all, {} since the last such message): {}",
                    channel.remoteAddress(), total, since, reason);
        }
    }

    /** Connections refused since the oracle started. */
    long refusedCount() {
        return refused.get();
    }

    /**
     * Beyond the process's file-descriptor limit connections fail at accept, before the oracle can tell the client
     * why, and the journal's own connections may fail too: say so at start-up rather than under load.
     */
    void warnIfTooFewFileDescriptors() {
        if (ManagementFactory.getOperatingSystemMXBean() instanceof UnixOperatingSystemMXBean os) {
            long limit = os.getMaxFileDescriptorCount();
            if (limit < maxConnections + FILE_DESCRIPTORS_BESIDES_CONNECTIONS) {
                LOG.warn("max.connections={} but this process may open only {} files (ulimit -n): raise the limit to"
                        + " at least {}, or lower max.connections, so that connections beyond it are refused with a"
                        + " reason rather than failing at accept", maxConnections, limit,
                        maxConnections + FILE_DESCRIPTORS_BESIDES_CONNECTIONS);
            }
        }
    }
}
