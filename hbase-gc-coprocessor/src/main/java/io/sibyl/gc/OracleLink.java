package io.sibyl.gc;

import io.sibyl.client.TransactionManager;
import io.sibyl.client.oracle.CommitReplica;
import io.sibyl.client.oracle.HistoryPoint;
import io.sibyl.client.oracle.OracleClient;
import io.sibyl.client.oracle.OracleConnection;
import io.sibyl.client.oracle.OracleTransport;
import io.sibyl.protocol.Wire;
import org.apache.hadoop.conf.Configuration;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

/**
 * The region server's one connection to the status oracle (per oracle lookup), shared by every region that runs the
 * collector: its replica answers the status of writers, and it asks for the low watermark. Opened in the background
 * when the first region starts and re-opened the same way after a failure, so a flush or compaction never waits
 * longer than {@value GcSettings#WATERMARK_TIMEOUT_MS} for it; closed {@value #LINGER_MS} ms after the last region
 * stopped. A lost connection is replaced by the client's own failover ({@link OracleConnection#current}), also in the
 * background: the link checks every {@value #RECONNECT_CHECK_MS} ms whether its connection is still open, so it
 * follows a new leader without waiting for a flush or compaction to notice.
 */
final class OracleLink {
    private static final Logger LOG = LoggerFactory.getLogger(OracleLink.class);
    /** Guarded by itself. */
    private static final Map<String, OracleLink> LINKS = new HashMap<>();
    /**
     * How often the watermark held in the replica moves on between flushes and compactions: the replica keeps every
     * commit above it, so a region server whose regions neither flush nor compact would otherwise hold every commit
     * the oracle makes meanwhile.
     */
    static final long HOLD_REFRESH_MS = 10_000;
    /**
     * How often the link checks, between flushes and compactions, that its connection is still open. A connection
     * made long after a failover knows no commit made before it (its T_init): until T_max passes them, which can take
     * long on a quiet oracle, those commits and the versions they shadow are kept. The check itself is local.
     */
    static final long RECONNECT_CHECK_MS = 1_000;
    /**
     * How long the connection outlives the last region using it. A split or merge closes its regions before it opens
     * their successors, as may a move; a new connection would not know the commits made before it (its T_init), nor
     * hold the replica at the watermark, and would collect little until T_max passed them.
     */
    static final long LINGER_MS = 60_000;
    /** {@link #LINGER_MS}, but a field: tests of the linger itself shorten it rather than wait minutes. */
    static volatile long lingerMillis = LINGER_MS;
    private static final ScheduledExecutorService REFRESHER = Executors.newSingleThreadScheduledExecutor(r -> {
        Thread t = new Thread(r, "sibyl-gc-watermark-refresh");
        t.setDaemon(true);
        return t;
    });

    private final String key;
    private final Configuration conf;
    private final GcSettings settings;
    private int users; // guarded by LINKS
    /** Counts the times the last region let go, so that only the close scheduled at the latest one closes. */
    private long lastReleases; // guarded by LINKS
    private final Object lock = new Object();
    private OracleConnection connection; // guarded by lock
    private CompletableFuture<Void> attempt = CompletableFuture.completedFuture(null); // guarded by lock
    private long nextAttemptNanos; // guarded by lock
    private boolean closed; // guarded by lock
    private ScheduledFuture<?> reconnectCheck; // guarded by lock
    private volatile String problem = "not connected yet";
    /** One WARN per outage: set when a flush or compaction went without collection, cleared when one collects. */
    private volatile boolean warned;
    /** The current connection's replica and the watermark registered in it; replaced with the connection. */
    private Hold hold; // guarded by holdLock
    private ScheduledFuture<?> refresh; // guarded by holdLock
    private boolean released; // guarded by holdLock
    private final Object holdLock = new Object();
    /** Fast-path tickets, grouped while one is in flight. */
    private final TicketBatcher tickets = new TicketBatcher(mayWait -> {
        OracleClient c = mayWait ? openClient() : openOrNull();
        if (c == null) {
            throw new IOException(problem);
        }
        return c;
    });

    /** One replica, the watermark registered in it as a local reader, and what that tells about dropped commits. */
    private static final class Hold {
        final CommitReplica replica;
        /** The registered watermark, or 0 if none is (guarded by holdLock). */
        long watermark;
        /**
         * The watermark at which holding was given up for holding too many commits; none is registered again until
         * the watermark passes it, since one at the same place would hold them all again (guarded by holdLock).
         */
        long gaveUpAt;
        /**
         * Every commit the replica dropped had its commit timestamp below a registered watermark or at or below this
         * (T_max when the current registration began). Raised to the maximum before a registration ends, so a
         * flush or compaction that reads it after finding a commit dropped never trusts a registration that ended.
         */
        volatile long droppedAtOrBelow = Long.MAX_VALUE;

        Hold(CommitReplica replica) {
            this.replica = replica;
            // The replica forgets local readers older than the oracle's transaction.max.age.ms, as a client's
            // leaked transactions must not hold commits for good; the watermark is no transaction, and stays put
            // past that age while the oracle holds it (reader.grace.ms after expiring a leaked transaction): it
            // would stop holding while droppedAtOrBelow still vouched for it. sibyl.gc.max.held.commits bounds it.
            replica.expireReadersAfter(0);
        }
    }

    private OracleLink(String key, Configuration conf, GcSettings settings) {
        this.key = key;
        this.conf = GcSettings.oracleLookup(conf, Map.of());
        this.settings = settings;
    }

    /**
     * The link for the oracle {@code settings} names ({@code conf} holding the keys that find it, as
     * {@link GcSettings#oracleLookup} resolved them), started on first use; pair with {@link #release}.
     */
    static OracleLink acquire(Configuration conf, GcSettings settings) {
        OracleLink link;
        synchronized (LINKS) {
            link = LINKS.computeIfAbsent(settings.oracleKey(), k -> new OracleLink(k, conf, settings)
                    .checkingItsConnection());
            link.users++;
        }
        link.connectInBackground();
        return link;
    }

    /**
     * One region stopped using the link; {@value #LINGER_MS} ms after the last one, unless a region took it up
     * again, the connection closes.
     */
    void release() {
        long release;
        synchronized (LINKS) {
            if (--users > 0) {
                return;
            }
            release = ++lastReleases;
        }
        REFRESHER.schedule(() -> closeIfUnused(release), lingerMillis, TimeUnit.MILLISECONDS);
    }

    /**
     * Closes unless a region took the link up since the {@code release}-th time the last region let go: also when
     * it let go again later, since the close scheduled then waits its own {@value #LINGER_MS} ms.
     */
    private void closeIfUnused(long release) {
        synchronized (LINKS) {
            if (users > 0 || release != lastReleases || LINKS.get(key) != this) {
                return;
            }
            LINKS.remove(key);
        }
        OracleConnection c;
        synchronized (lock) {
            closed = true;
            c = connection;
            connection = null;
            if (reconnectCheck != null) {
                reconnectCheck.cancel(false);
            }
        }
        synchronized (holdLock) {
            released = true; // a flush or compaction finishing meanwhile must not schedule the refresh again
            if (refresh != null) {
                refresh.cancel(false);
                refresh = null;
            }
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
                HistoryPoint oldest;
                try {
                    // Both asked at once: one round trip. The point's reply comes after its block, so the replica
                    // then knows every writer that aborted before it.
                    CompletableFuture<HistoryPoint> history = client.historyPoint(Wire.HISTORY_OLDEST, 0);
                    long timeout = TimeUnit.MILLISECONDS.toNanos(settings.watermarkTimeoutMillis());
                    lowWatermark = client.await(client.lowWatermark(), timeout);
                    oldest = client.await(history, timeout);
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
                return hold(client.replica(), lowWatermark).keeping(oldest);
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

    /**
     * Registers {@code lowWatermark} as a local reader of {@code replica} (in place of the previous one), so that the
     * replica keeps every commit at or above it even once T_max passes it: a commit it drops from then on was below
     * a watermark. Without that, a reader older than the oracle's commit window (T_max past it) would stop the
     * collection of everything shadowed, also before it began: every such commit was dropped at T_max, above the
     * watermark, and a dropped commit could lie anywhere below T_max. A replica holding more than the configured
     * number of commits lets go (it trims at T_max again) and holds again once the watermark has moved on.
     */
    GcHorizon hold(CommitReplica replica, long lowWatermark) {
        synchronized (holdLock) {
            Hold h = hold;
            if (h == null || h.replica != replica) {
                if (h != null) {
                    // Normally the replica of a connection replaced by a failover, which takes nothing more. But a
                    // flush that got the old connection just before and comes after the new one's would, without
                    // this, drop the new replica's registration unreleased, holding its commits for good.
                    letGo(h);
                }
                h = new Hold(replica); // nothing registered there yet
                hold = h;
            }
            if (h.watermark != 0 && replica.commitCount() > settings.maxHeldCommits()) {
                // A compaction that asked before the one that moved the hold brings an older watermark: giving up
                // only at that one would hold again at once at the watermark that was held.
                h.gaveUpAt = Math.max(lowWatermark, h.watermark);
                letGo(h);
                LOG.info("the garbage collector's replica holds more than {} commits for a transaction that started"
                        + " at {}: it lets them go, and collects only below T_max until that transaction ends ({})",
                        settings.maxHeldCommits(), h.gaveUpAt, key);
            }
            if (lowWatermark > h.watermark && lowWatermark > h.gaveUpAt) {
                replica.registerReader(lowWatermark);
                if (h.watermark == 0) {
                    // Read after registering: a trim that did not see the registration used a T_max at or below it.
                    h.droppedAtOrBelow = replica.tMax();
                } else {
                    replica.unregisterReader(h.watermark);
                }
                h.watermark = lowWatermark;
            }
            if (refresh == null && !released) {
                refresh = REFRESHER.scheduleWithFixedDelay(this::refreshHold, HOLD_REFRESH_MS, HOLD_REFRESH_MS,
                        TimeUnit.MILLISECONDS);
            }
            Hold held = h;
            return new GcHorizon(replica, lowWatermark, () -> held.droppedAtOrBelow);
        }
    }

    /** The replica the watermark is held in, or null before the first flush or compaction (for tests). */
    CommitReplica heldReplica() {
        synchronized (holdLock) {
            return hold == null ? null : hold.replica;
        }
    }

    /** Ends the registration, if any; caller holds holdLock. */
    private static void letGo(Hold h) {
        if (h.watermark != 0) {
            h.droppedAtOrBelow = Long.MAX_VALUE; // before the replica may trim above a watermark again
            h.replica.unregisterReader(h.watermark);
            h.watermark = 0;
        }
    }

    /** Moves the held watermark on (or lets go of the replica when the oracle does not say where to). */
    private void refreshHold() {
        OracleClient client = openOrNull();
        if (client == null) {
            return; // a closed connection's replica receives nothing more, so it does not grow
        }
        try {
            hold(client.replica(), client.lowWatermark().get(settings.watermarkTimeoutMillis(),
                    TimeUnit.MILLISECONDS));
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        } catch (Exception e) {
            synchronized (holdLock) {
                Hold h = hold;
                if (h != null && h.replica == client.replica()) {
                    letGo(h);
                }
            }
        } catch (Throwable e) {
            LOG.warn("cannot move the garbage collector's watermark on ({})", key, e); // keeps the task scheduled
        }
    }

    /** Starts the background check that replaces a lost connection (once, as the link is created). */
    private OracleLink checkingItsConnection() {
        synchronized (lock) {
            reconnectCheck = REFRESHER.scheduleWithFixedDelay(this::reconnectIfLost, RECONNECT_CHECK_MS,
                    RECONNECT_CHECK_MS, TimeUnit.MILLISECONDS);
        }
        return this;
    }

    /**
     * Starts the client's failover in the background if the connection was lost (a crashed or deposed leader), so
     * the link is on the new leader before the next flush or compaction needs it.
     */
    private void reconnectIfLost() {
        try {
            if (openOrNull() == null) {
                connectInBackground();
            }
        } catch (Throwable e) { // caught, or the executor would stop running the check
            LOG.warn("cannot check the garbage collector's connection to the status oracle ({})", key, e);
        }
    }

    /** A fast-path ticket and the replica of the connection that gave it, which holds every decision below it. */
    record Ticket(long ticket, CommitReplica replica) {
    }

    /**
     * Asks the oracle for a fast-path ticket ({@code OracleClient#ticket}) for {@code rowIds} and {@code granules},
     * grouped with the other writes of this region server that ask meanwhile ({@link TicketBatcher}); fails if no
     * connection opens within the watermark timeout.
     */
    CompletableFuture<Ticket> ticket(long[] rowIds, long[] granules) {
        return tickets.ticket(rowIds, granules);
    }

    /**
     * Waits up to {@code timeoutNanos} for a {@link #ticket}, reading the oracle's replies on this thread meanwhile
     * (with the default {@link OracleTransport#WAITING_THREAD} transport): the handler that holds the row lock reads
     * its own ticket rather than wait for another thread to hand it over.
     */
    Ticket await(CompletableFuture<Ticket> pending, long timeoutNanos)
            throws InterruptedException, ExecutionException, TimeoutException {
        OracleClient c = openOrNull();
        return c != null ? c.await(pending, timeoutNanos) : pending.get(timeoutNanos, TimeUnit.NANOSECONDS);
    }

    /** T_max of the open connection's replica, or 0 without one: no version below it can be undecided there. */
    long tMaxNow() {
        OracleClient c = openOrNull();
        return c == null ? 0 : c.replica().tMax();
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

    /** The open client, or null while there is none (also for tests: which oracle the link is on). */
    OracleClient openOrNull() {
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
                c = OracleConnection.open(TransactionManager.oracleLocator(conf), settings.connectTimeoutMillis(),
                        GcSettings.CONNECT_TIMEOUT_MS, TransactionManager.oracleCredentials(conf),
                        TransactionManager.oracleTransport(conf));
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
