package io.sibyl.oracle.ha;

import io.sibyl.oracle.ServingLease;
import io.sibyl.oracle.journal.FatalErrorListener;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Keeps an elected leader's {@link ServingLease}: every session timeout / {@value #CONFIRMATIONS_PER_TIMEOUT} it asks
 * ZooKeeper whether its session and its election znode are still there, and each answer renews the lease to half
 * the session timeout after the question was <em>sent</em>. A standby can take over only once that session has
 * expired, a full session timeout after ZooKeeper last heard from this leader, so a leader frozen or cut off stops
 * answering without the journal half a session timeout before any standby can serve. The connection's state acts at
 * once as well: Disconnected revokes the lease, SyncConnected asks again (the answer renews it), and Expired goes to
 * the fatal path.
 *
 * <p>The session is negotiated with the server, which may grant another timeout than asked for: the lease and the
 * pace follow the granted one.
 */
final class SessionLeaseKeeper implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(SessionLeaseKeeper.class);
    /** Confirmations per session timeout: a healthy leader's lease is renewed long before it ends. */
    static final int CONFIRMATIONS_PER_TIMEOUT = 4;

    private final ZooKeeper zk;
    private final String candidatePath;
    private final ServingLease lease;
    private final FatalErrorListener fatal;
    private final ScheduledThreadPoolExecutor timer;
    private final Watcher connectionWatcher = this::onEvent;
    private volatile boolean closed;

    private SessionLeaseKeeper(ZooKeeper zk, String candidatePath, ServingLease lease, FatalErrorListener fatal) {
        this.zk = zk;
        this.candidatePath = candidatePath;
        this.lease = lease;
        this.fatal = fatal;
        this.timer = new ScheduledThreadPoolExecutor(1, r -> {
            Thread t = new Thread(r, "sibyl-leader-lease");
            t.setDaemon(true);
            return t;
        });
    }

    /**
     * Starts keeping {@code lease} with {@code zk}'s session, whose election znode is {@code candidatePath}; the first
     * confirmation is sent at once. {@code fatal} is told when the session expired or the znode is gone.
     */
    static SessionLeaseKeeper start(ZooKeeper zk, String candidatePath, ServingLease lease, FatalErrorListener fatal)
            throws KeeperException, InterruptedException {
        SessionLeaseKeeper k = new SessionLeaseKeeper(zk, candidatePath, lease, fatal);
        // A persistent watch is told of every change of the connection's state, not only of the znode.
        zk.addWatch(candidatePath, k.connectionWatcher, AddWatchMode.PERSISTENT);
        long period = Math.max(1, zk.getSessionTimeout() / CONFIRMATIONS_PER_TIMEOUT);
        // With a fixed delay, not a fixed rate: a leader resumed after a pause sends one question, not a burst.
        k.timer.scheduleWithFixedDelay(k::confirm, 0, period, TimeUnit.MILLISECONDS);
        return k;
    }

    private void onEvent(WatchedEvent e) {
        if (closed || e.getType() != Watcher.Event.EventType.None) {
            return; // the znode's own deletion is the election's business (OracleCandidate watches it)
        }
        switch (e.getState()) {
            case Disconnected -> {
                lease.revoke();
                LOG.warn("disconnected from ZooKeeper: holding begins and other replies that need no journal write"
                        + " until ZooKeeper confirms this leader's session");
            }
            case SyncConnected -> {
                try {
                    timer.execute(this::confirm);
                } catch (RejectedExecutionException ignored) {
                    // closed meanwhile
                }
            }
            case Expired -> fatal.onFatalError("the ZooKeeper session of this leader expired (a standby may have"
                    + " taken over)", null);
            default -> {
            }
        }
    }

    /** Asks ZooKeeper about the session; an answer renews the lease from the moment the question left. */
    private void confirm() {
        if (closed) {
            return;
        }
        long generation = lease.generation();
        long sentNanos = System.nanoTime();
        long lengthNanos = TimeUnit.MILLISECONDS.toNanos(zk.getSessionTimeout()) / 2;
        // The sync first: it passes through ZooKeeper's leader, so the read after it cannot be answered by a server
        // that has not yet heard of the session's end.
        zk.sync(candidatePath, (rc, path, ctx) -> {
            if (rc != KeeperException.Code.OK.intValue()) {
                failed(rc);
                return;
            }
            zk.exists(candidatePath, false, (rc2, path2, ctx2, stat) -> answered(rc2, stat, generation, sentNanos,
                    lengthNanos), null);
        }, null);
    }

    private void answered(int rc, Stat stat, long generation, long sentNanos, long lengthNanos) {
        if (closed) {
            return;
        }
        if (rc == KeeperException.Code.OK.intValue() && stat != null
                && stat.getEphemeralOwner() == zk.getSessionId()) {
            lease.confirmed(generation, sentNanos, lengthNanos);
        } else if (rc == KeeperException.Code.OK.intValue() || rc == KeeperException.Code.NONODE.intValue()) {
            fatal.onFatalError("deposed: this leader's election znode " + candidatePath + " is gone", null);
        } else {
            failed(rc);
        }
    }

    private void failed(int rc) {
        if (closed) {
            return;
        }
        KeeperException.Code code = KeeperException.Code.get(rc);
        if (code == KeeperException.Code.SESSIONEXPIRED) {
            fatal.onFatalError("the ZooKeeper session of this leader expired (a standby may have taken over)", null);
        } else if (code != KeeperException.Code.CONNECTIONLOSS) {
            // Connection loss is followed by Disconnected, which revokes the lease; anything else only fails to renew.
            LOG.warn("confirming this leader's ZooKeeper session: {}", code);
        }
    }

    /** Stops confirming (the lease then lapses); the session itself belongs to the candidate. */
    @Override
    public void close() {
        closed = true;
        timer.shutdownNow();
    }
}
