package io.sibyl.gc;

import io.sibyl.client.TransactionManager;
import io.sibyl.client.oracle.OracleClient;
import io.sibyl.client.oracle.OracleConnection;
import org.apache.hadoop.conf.Configuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The region server's one connection to the status oracle (per oracle lookup), shared by every region that runs the
 * collector: its replica answers the status of writers, and it asks for the low watermark. Opened in the background
 * when the first region starts, re-opened the same way after a failure, and closed when the last region stops, so a
 * flush or compaction never waits longer than {@value GcSettings#WATERMARK_TIMEOUT_MS} for it. A lost connection is
 * replaced by the client's own failover ({@link OracleConnection#current}), also in the background.
 */
final class OracleLink {
    private static final Logger LOG = LoggerFactory.getLogger(OracleLink.class);
    /** Guarded by itself. */
    private static final Map<String, OracleLink> LINKS = new HashMap<>();

    private final String key;
    private final Configuration conf;
    private final GcSettings settings;
    private int users; // guarded by LINKS
    private final Object lock = new Object();
    private OracleConnection connection; // guarded by lock
    private CompletableFuture<Void> attempt = CompletableFuture.completedFuture(null); // guarded by lock
    private long nextAttemptNanos; // guarded by lock
    private boolean closed; // guarded by lock
    private volatile String problem = "not connected yet";
    /** One WARN per outage: set when a flush or compaction went without collection, cleared when one collects. */
    private volatile boolean warned;

    private OracleLink(String key, Configuration conf, GcSettings settings) {
        this.key = key;
        this.conf = GcSettings.oracleLookup(conf);
        this.settings = settings;
    }

    /** The link for the oracle {@code settings} names, started on first use; pair with {@link #release}. */
    static OracleLink acquire(Configuration conf, GcSettings settings) {
        OracleLink link;
        synchronized (LINKS) {
            link = LINKS.computeIfAbsent(settings.oracleKey(), k -> new OracleLink(k, conf, settings));
            link.users++;
        }
        link.connectInBackground();
        return link;
    }

    /** One region stopped using the link; the last one closes the connection. */
    void release() {
        synchronized (LINKS) {
            if (--users > 0) {
                return;
            }
            LINKS.remove(key);
        }
        OracleConnection c;
        synchronized (lock) {
            closed = true;
            c = connection;
            connection = null;
        }
        if (c != null) {
            c.close();
            LOG.info("closed the garbage collector's connection to the status oracle ({})", key);
        }
    }

    /**
     * What a flush or compaction may collect with now: the open connection's replica and the oracle's low watermark,
     * or null (after logging why, at WARN once per outage) if the oracle cannot be asked within the timeout.
     */
    GcHorizon horizon(String what) {
        try {
            OracleClient client = openClient();
            if (client != null) {
                long lowWatermark;
                try {
                    lowWatermark = client.lowWatermark().get(settings.watermarkTimeoutMillis(), TimeUnit.MILLISECONDS);
                } catch (TimeoutException e) {
                    // Silent with its connection open (frozen, or cut off): treat it as lost, as the client does,
                    // so that the next attempt goes through the failover instead of waiting on it again.
                    client.closeBecause("the status oracle did not answer a watermark query within "
                            + settings.watermarkTimeoutMillis() + " ms");
                    throw e;
                }
                if (warned) {
                    warned = false;
                    LOG.info("the status oracle ({}) answers again: flushes and compactions collect garbage", key);
                }
                return new GcHorizon(client.replica(), lowWatermark);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            problem = "interrupted while asking for the low watermark";
        } catch (Exception e) {
            problem = "no low watermark from the status oracle within " + settings.watermarkTimeoutMillis() + " ms: "
                    + e;
            connectInBackground();
        }
        if (!warned) {
            warned = true;
            LOG.warn("{} removes nothing: {} ({}); flushes and compactions go on without garbage collection until"
                    + " the oracle answers (logged once)", what, problem, key);
        } else {
            LOG.debug("{} removes nothing: {}", what, problem);
        }
        return null;
    }

    /** The open client, waiting up to the timeout for an attempt under way; null if there is none. */
    private OracleClient openClient() throws Exception {
        OracleClient c = openOrNull();
        if (c != null) {
            return c;
        }
        connectInBackground();
        CompletableFuture<Void> pending;
        synchronized (lock) {
            pending = attempt;
        }
        pending.get(settings.watermarkTimeoutMillis(), TimeUnit.MILLISECONDS);
        return openOrNull();
    }

    private OracleClient openOrNull() {
        synchronized (lock) {
            OracleClient c = connection == null ? null : connection.lastConnected();
            return c != null && c.isOpen() ? c : null;
        }
    }

    /** Starts an attempt to (re)connect unless one is under way or the last failed less than the retry pause ago. */
    private void connectInBackground() {
        CompletableFuture<Void> next;
        synchronized (lock) {
            if (closed || !attempt.isDone() || System.nanoTime() < nextAttemptNanos) {
                return;
            }
            next = new CompletableFuture<>();
            attempt = next;
        }
        Thread t = new Thread(() -> connect(next), "sibyl-gc-oracle-connect");
        t.setDaemon(true);
        t.start();
    }

    private void connect(CompletableFuture<Void> done) {
        try {
            OracleConnection c;
            synchronized (lock) {
                c = connection;
            }
            if (c == null) {
                c = OracleConnection.open(TransactionManager.oracleLocator(conf), settings.connectTimeoutMillis());
                boolean keep;
                synchronized (lock) {
                    keep = !closed;
                    if (keep) {
                        connection = c;
                    }
                }
                if (!keep) {
                    c.close();
                    return;
                }
                LOG.info("garbage collector connected to the status oracle at {} ({})", c.lastConnected().address(),
                        key);
            } else {
                c.current(); // the client's failover: follows the leader, waits up to its timeout
            }
        } catch (Exception e) {
            problem = "cannot reach the status oracle: " + e.getMessage();
            synchronized (lock) {
                nextAttemptNanos = System.nanoTime() + settings.retryMillis() * 1_000_000L;
            }
        } finally {
            done.complete(null);
        }
    }
}
