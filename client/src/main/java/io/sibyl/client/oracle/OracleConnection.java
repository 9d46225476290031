package io.sibyl.client.oracle;

import io.sibyl.protocol.LeaderRecord;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * A client's link to whichever status oracle currently leads. {@link #current()} hands out an open
 * {@link OracleClient}; when the connection is lost (the oracle crashed, was deposed, or the network failed) it
 * connects to the oracle the {@link OracleLocator} names, waiting up to the failover timeout for one to answer.
 * When the locator reports a newer leader, the connection to the old one is closed at once, so requests never wait
 * on a deposed (e.g. frozen) oracle.
 *
 * <p>A replaced client is closed, but its {@link CommitReplica} stays readable: transactions begun on it keep
 * reading their snapshot from it.
 */
public final class OracleConnection implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(OracleConnection.class);
    /** Longest single connection attempt (handshake included) during a failover. */
    private static final long MAX_ATTEMPT_MILLIS = 5_000;
    private static final long RETRY_PAUSE_MILLIS = 50;

    private final OracleLocator locator;
    private final long failoverTimeoutMillis;
    /** How the failover timeout is called in the caller's settings, for messages (empty if it has no name). */
    private final String timeoutSetting;
    private final Object lock = new Object();
    private volatile OracleClient current;
    private volatile long currentEpoch;
    private volatile int reconnects;
    private volatile boolean closed;
    /** Sent on every connection: the same identity after a reconnection, and the admin proof if it has one. */
    private final OracleCredentials credentials;
    /** How every connection's requests and replies travel. */
    private final OracleTransport transport;

    private OracleConnection(OracleLocator locator, long failoverTimeoutMillis, String timeoutSetting,
                             OracleCredentials credentials, OracleTransport transport) {
        this.locator = locator;
        this.failoverTimeoutMillis = failoverTimeoutMillis;
        this.timeoutSetting = timeoutSetting;
        this.credentials = credentials;
        this.transport = transport;
    }

    /**
     * Connects to the oracle {@code locator} names, waiting up to {@code failoverTimeoutMillis} for one. The
     * connection owns the locator from then on.
     *
     * @throws OracleUnavailableException if no oracle answered in time (the message says where it looked)
     */
    public static OracleConnection open(OracleLocator locator, long failoverTimeoutMillis) {
        return open(locator, failoverTimeoutMillis, "");
    }

    /**
     * Like {@link #open(OracleLocator, long)}; a failure to find an oracle names {@code timeoutSetting}, the setting
     * that gave the timeout, so that the message says what to raise.
     */
    public static OracleConnection open(OracleLocator locator, long failoverTimeoutMillis, String timeoutSetting) {
        return open(locator, failoverTimeoutMillis, timeoutSetting, OracleCredentials.newClient());
    }

    /**
     * Like {@link #open(OracleLocator, long, String)}, connecting as the client {@code credentials} names on every
     * connection.
     *
     * @throws OracleException if the oracle refuses the credentials' admin proof (the message names the settings)
     */
    public static OracleConnection open(OracleLocator locator, long failoverTimeoutMillis, String timeoutSetting,
                                        OracleCredentials credentials) {
        return open(locator, failoverTimeoutMillis, timeoutSetting, credentials, OracleTransport.EVENT_LOOP);
    }

    /**
     * Like {@link #open(OracleLocator, long, String, OracleCredentials)}, each connection's requests and replies
     * travelling as {@code transport} says.
     */
    public static OracleConnection open(OracleLocator locator, long failoverTimeoutMillis, String timeoutSetting,
                                        OracleCredentials credentials, OracleTransport transport) {
        OracleConnection c = new OracleConnection(locator, failoverTimeoutMillis, timeoutSetting, credentials,
                transport);
        locator.onLeaderChange(c::leaderChanged); // before connecting: a change meanwhile must not go unheard
        try {
            c.current();
        } catch (RuntimeException e) {
            locator.close();
            throw e;
        }
        return c;
    }

    /**
     * The open client of the current oracle, connecting to the leader first if the last connection was lost.
     *
     * @throws OracleUnavailableException if no oracle answered within the failover timeout
     */
    public OracleClient current() {
        OracleClient c = current;
        if (c != null && c.isOpen()) {
            return c;
        }
        synchronized (lock) {
            c = current;
            if (c != null && c.isOpen()) {
                return c;
            }
            return reconnect(c);
        }
    }

    /** The client most recently connected, open or not (never null once opened). */
    public OracleClient lastConnected() {
        return current;
    }

    /** How many times a lost connection was replaced. */
    public int reconnects() {
        return reconnects;
    }

    private OracleClient reconnect(OracleClient lost) {
        if (closed) {
            throw new OracleUnavailableException("the oracle connection was closed");
        }
        long start = System.nanoTime();
        long deadline = start + failoverTimeoutMillis * 1_000_000L;
        String lastError = null; // stays null while the locator names no oracle: its own description says why
        // Every timestamp an oracle that kept its journal hands out is above every one handed out before (recovery
        // restarts its clock at the highest reservation). One that hands out this connection's timestamps again lost
        // its decisions (an in-memory oracle restarted, a wiped journal): its transactions would overwrite committed
        // versions in HBase and their clean-ups delete them, the garbage collector would remove committed versions at
        // the timestamps of its aborts, and aborted versions it forgot would read as committed. Refuse it.
        long handedOut = lost == null ? 0 : lost.highestTimestampSeen();
        try {
            while (true) {
                if (closed) {
                    throw closedDuringFailover();
                }
                long left = Math.max(1, (deadline - System.nanoTime()) / 1_000_000L);
                LeaderRecord leader = locator.leader(left);
                if (leader != null) {
                    OracleClient c = null;
                    try {
                        c = OracleClient.connect(leader.host(), leader.port(),
                                Math.min(MAX_ATTEMPT_MILLIS, Math.max(100, left)), credentials, transport);
                    } catch (OracleUnavailableException e) {
                        lastError = e.getMessage();
                    }
                    if (c != null && closed) { // closed while connecting: hand out nothing close() missed
                        c.close();
                        throw closedDuringFailover();
                    }
                    if (c != null && c.replica().tInit() <= handedOut) {
                        long next = c.replica().tInit();
                        c.close();
                        throw new OracleUnavailableException("the status oracle at " + leader.address() + " hands out"
                                + " timestamps from " + next + " on, but the oracle before it handed out timestamps up to "
                                + handedOut + ": it lost its decisions (an in-memory journal restarted, or a wiped"
                                + " journal), and reusing those timestamps would overwrite and delete committed data in"
                                + " HBase; refused (docs/operations.md)");
                    }
                    if (c != null) {
                        if (lost != null) {
                            lost.close();
                            reconnects++;
                            LOG.info("reconnected to the status oracle at {} (epoch {}) in {} ms", leader.address(),
                                    leader.epoch(), (System.nanoTime() - start) / 1_000_000L);
                        }
                        currentEpoch = leader.epoch();
                        current = c;
                        // A newer leader announced while this connection was made found the lost client, not this
                        // one, to close: ask again now that this one is current (an announcement from now on finds
                        // it), or this connection would stay with a deposed leader.
                        LeaderRecord latest = locator.leader(0);
                        if (latest != null) {
                            leaderChanged(latest);
                        }
                        if (c.isOpen()) {
                            return c;
                        }
                        handedOut = Math.max(handedOut, c.highestTimestampSeen());
                        lastError = "the oracle at " + leader.address() + " (epoch " + leader.epoch() + ") was"
                                + " replaced or lost as it was connected to";
                    }
                }
                if (closed) { // the locator woke up because it was closed, not because the timeout passed
                    throw closedDuringFailover();
                }
                if (System.nanoTime() >= deadline) {
                    throw new OracleUnavailableException("no status oracle answered within " + failoverTimeoutMillis
                            + " ms" + (timeoutSetting.isEmpty() ? "" : " (" + timeoutSetting + "="
                            + failoverTimeoutMillis + ")") + "; looked up through " + locator.describe()
                            + (lastError == null ? "" : "; last error: " + lastError)
                            + "; start so-server, or check this client's sibyl.oracle.address or"
                            + " sibyl.oracle.zk.connect");
                }
                Thread.sleep(RETRY_PAUSE_MILLIS);
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new OracleUnavailableException("interrupted while connecting to the status oracle");
        }
    }

    private static OracleUnavailableException closedDuringFailover() {
        return new OracleUnavailableException("the oracle connection was closed while it looked for a status oracle"
                + " to connect to (its TransactionManager or garbage collector link was closed)");
    }

    /** A newer leader took over: drop the connection to the old one so nothing waits on it. */
    private void leaderChanged(LeaderRecord leader) {
        OracleClient c = current;
        if (c != null && leader.epoch() > currentEpoch && c.isOpen()) {
            LOG.info("status oracle epoch {} at {} took over; closing the connection to {}", leader.epoch(),
                    leader.address(), c.address());
            c.close();
        }
    }

    @Override
    public void close() {
        closed = true;
        // First, so that a failover waiting in the locator for a leader wakes up and gives up, rather than hold the
        // lock (and this close) until its timeout.
        locator.close();
        synchronized (lock) {
            OracleClient c = current;
            if (c != null) {
                c.close();
            }
        }
    }
}
