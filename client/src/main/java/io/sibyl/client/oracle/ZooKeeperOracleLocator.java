package io.sibyl.client.oracle;

import io.sibyl.protocol.Arguments;
import io.sibyl.protocol.DigestCredentials;
import io.sibyl.protocol.LeaderRecord;
import org.apache.zookeeper.AddWatchMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * Finds the leading oracle of an HA group through the leader znode it publishes in ZooKeeper (content:
 * {@link LeaderRecord}). A persistent watch keeps the answer current without polling; a record of an older epoch
 * than one already seen is ignored, so a deposed leader can never be chosen again.
 *
 * <p>ZooKeeper is needed only to learn of a new leader: while it is unreachable the last leader read stays the answer
 * (connections to it keep working), and once ZooKeeper answers again the znode is read afresh. A session that expired
 * (the client was cut off longer than its timeout) is replaced by a new one, which reads the znode again.
 */
public final class ZooKeeperOracleLocator implements OracleLocator {
    private static final Logger LOG = LoggerFactory.getLogger(ZooKeeperOracleLocator.class);

    private final String connect;
    private final String path;
    private final int sessionTimeoutMillis;
    /** The client's ZooKeeper digest identity, added to every session; null: none (or SASL through JAAS). */
    private final DigestCredentials credentials;
    private final List<Consumer<LeaderRecord>> listeners = new CopyOnWriteArrayList<>();
    /** The znode watcher of each session: registering the same one again on a reconnection adds no second one. */
    private final Map<ZooKeeper, Watcher> watchers = new ConcurrentHashMap<>();
    private final Object lock = new Object();
    // Guarded by lock:
    private ZooKeeper zk;
    private LeaderRecord leader;
    private long highestEpoch = -1;
    private String problem;
    private boolean connected;
    /** Set when an expired session could not be replaced at once; {@link #leader} tries again. */
    private boolean renewalPending;
    private boolean closed;

    /**
     * Connects to ZooKeeper at {@code connect} and starts watching {@code path}. Does not wait: {@link #leader}
     * waits for the first answer.
     *
     * @throws IllegalArgumentException if {@code connect} is not a ZooKeeper connect string or {@code path} not an
     *                                  absolute path
     */
    public ZooKeeperOracleLocator(String connect, String path, int sessionTimeoutMillis) throws IOException {
        this(connect, path, sessionTimeoutMillis, null);
    }

    /**
     * As {@link #ZooKeeperOracleLocator(String, String, int)}, authenticating every session with {@code credentials}
     * ({@code sibyl.oracle.zk.auth.file}; null for none): needed only where the oracles' {@code journal.zk.acl.readers}
     * does not let anyone read the leader znode.
     */
    public ZooKeeperOracleLocator(String connect, String path, int sessionTimeoutMillis, DigestCredentials credentials)
            throws IOException {
        Arguments.required(connect, "ZooKeeper connect string", "pass the ensemble's host:port list, e.g."
                + " \"zk1:2181,zk2:2181\" (sibyl.oracle.zk.connect)");
        Arguments.required(path, "leader znode", "pass the oracles' leader znode, e.g. \"/sibyl/oracle/leader\"");
        if (!path.startsWith("/") || path.endsWith("/")) {
            throw new IllegalArgumentException("the leader znode '" + path + "' must be an absolute ZooKeeper path"
                    + " such as /sibyl/oracle/leader");
        }
        this.connect = connect;
        this.path = path;
        this.sessionTimeoutMillis = sessionTimeoutMillis;
        this.credentials = credentials;
        this.problem = "no answer from ZooKeeper yet";
        synchronized (lock) {
            try {
                zk = newSession();
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException("'" + connect + "' is not a ZooKeeper connect string"
                        + " (host:port[,host:port...][/chroot]): " + e.getMessage(), e);
            }
        }
    }

    private ZooKeeper newSession() throws IOException {
        // The session can connect, and its event thread deliver SyncConnected, before the constructor returns: the
        // watcher waits for the handle rather than read a field not yet set (seen on a loaded machine: the first
        // event was lost and the locator never read the leader znode).
        CompletableFuture<ZooKeeper> self = new CompletableFuture<>();
        ZooKeeper z;
        try {
            z = new ZooKeeper(connect, sessionTimeoutMillis, event -> {
                ZooKeeper session;
                try {
                    session = self.join();
                } catch (CompletionException | CancellationException e) {
                    return; // the constructor failed: no session to serve
                }
                sessionEvent(session, event);
            });
        } catch (IOException | RuntimeException e) {
            self.completeExceptionally(e);
            throw e;
        }
        if (credentials != null) {
            // Sent before the watch and the read that the SyncConnected event starts, so both run as this identity.
            z.addAuthInfo(DigestCredentials.SCHEME, credentials.authBytes());
        }
        self.complete(z);
        return z;
    }

    private void sessionEvent(ZooKeeper session, WatchedEvent event) {
        if (event.getType() != Watcher.Event.EventType.None) {
            return;
        }
        switch (event.getState()) {
            case SyncConnected -> {
                setConnected(session, true);
                watchAndRead(session);
            }
            case Expired -> {
                setConnected(session, false);
                renewSession(session);
            }
            case Disconnected -> {
                setConnected(session, false);
                LOG.debug("oracle locator disconnected from ZooKeeper at {}", connect);
            }
            default -> {
            }
        }
    }

    private void setConnected(ZooKeeper session, boolean now) {
        synchronized (lock) {
            if (zk == session) {
                connected = now;
            }
        }
    }

    /**
     * Registers the persistent watch, then reads: every change after this reaches {@link #read}. Called on every
     * (re)connection of a session, since changes made while it was disconnected may not all be reported; the watcher
     * is one object per session, so registering it again does not add a second one.
     */
    private void watchAndRead(ZooKeeper session) {
        session.addWatch(path, watcherOf(session), AddWatchMode.PERSISTENT, (rc, p, ctx) -> {
            if (rc != KeeperException.Code.OK.intValue()) {
                noteProblem("watching " + path + " failed: " + KeeperException.Code.get(rc));
            }
            read(session);
        }, null);
    }

    private Watcher watcherOf(ZooKeeper session) {
        return watchers.computeIfAbsent(session, s -> event -> read(s));
    }

    private void read(ZooKeeper session) {
        session.getData(path, false, (rc, p, ctx, data, stat) -> {
            KeeperException.Code code = KeeperException.Code.get(rc);
            if (code == KeeperException.Code.OK) {
                accept(data);
            } else if (code == KeeperException.Code.NONODE) {
                synchronized (lock) {
                    leader = null; // no oracle leads right now: wait for the next one rather than dial a dead one
                    problem = "no oracle has published itself at " + path + " (sibyl.oracle.leader.znode) in"
                            + " ZooKeeper " + connect + ": start so-server with --journal=bookkeeper on this"
                            + " ZooKeeper, and make this znode its journal.leader.znode";
                }
            } else if (code == KeeperException.Code.NOAUTH) {
                noteProblem("ZooKeeper refused to let this client read " + path + " (not authorized, as "
                        + (credentials == null ? "no digest identity" : credentials) + "): the oracles'"
                        + " journal.zk.acl.readers does not admit it; set sibyl.oracle.zk.auth.file to a file holding"
                        + " the user:password of a digest id it lists, or configure SASL for an id it lists");
            } else {
                noteProblem("reading " + path + " failed: " + code);
            }
        }, null);
    }

    private void accept(byte[] data) {
        LeaderRecord r;
        try {
            r = LeaderRecord.decode(data);
        } catch (IllegalArgumentException e) {
            noteProblem(path + " holds no leader record (" + e.getMessage() + "): is sibyl.oracle.leader.znode the"
                    + " oracles' journal.leader.znode, and does nothing else write there?");
            return;
        }
        boolean newer;
        synchronized (lock) {
            if (r.epoch() < highestEpoch) {
                return; // a deposed leader's record, written late: never go back to it
            }
            newer = r.epoch() > highestEpoch && highestEpoch >= 0;
            highestEpoch = r.epoch();
            leader = r;
            lock.notifyAll();
        }
        LOG.debug("oracle leader: {} (epoch {})", r.address(), r.epoch());
        if (newer) {
            for (Consumer<LeaderRecord> l : listeners) {
                try {
                    l.accept(r);
                } catch (RuntimeException e) {
                    LOG.warn("leader-change listener failed", e);
                }
            }
        }
    }

    private void noteProblem(String what) {
        synchronized (lock) {
            problem = what;
        }
        LOG.debug("oracle locator: {}", what);
    }

    /**
     * Replaces an expired session. The leader read so far stays the answer until the new session reads the znode: it
     * is the best guess, and a newer epoch replaces it as soon as it is read.
     */
    private void renewSession(ZooKeeper expired) {
        synchronized (lock) {
            if (closed || zk != expired) {
                return;
            }
            LOG.warn("the ZooKeeper session of the oracle lookup at {} expired; opening a new one (the oracle known"
                    + " so far, {}, stays in use meanwhile)", connect, leader == null ? "none" : leader.address()
                    + " epoch " + leader.epoch());
            watchers.remove(expired);
            try {
                zk.close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            renewalPending = true;
            tryRenewal();
        }
    }

    /** Opens the session that replaces an expired one; if that fails, the next {@link #leader} call tries again. */
    private void tryRenewal() {
        try {
            zk = newSession();
            renewalPending = false;
        } catch (IOException | RuntimeException e) {
            problem = "cannot open a new ZooKeeper session at " + connect + " after the last one expired: " + e;
            LOG.warn("oracle lookup: {}", problem);
        }
    }

    @Override
    public LeaderRecord leader(long waitMillis) throws InterruptedException {
        long deadline = System.nanoTime() + waitMillis * 1_000_000L;
        synchronized (lock) {
            if (renewalPending && !closed) {
                tryRenewal();
            }
            while (leader == null && !closed) {
                long left = (deadline - System.nanoTime()) / 1_000_000L;
                if (left <= 0) {
                    return null;
                }
                lock.wait(left);
            }
            return leader;
        }
    }


    @Override
    public void onLeaderChange(Consumer<LeaderRecord> listener) {
        listeners.add(listener);
    }

    /**
     * Where the leader is looked up and, when no leader is known or ZooKeeper is out of reach, why and what to check
     * (the settings named are the client's, {@code sibyl.oracle.*}).
     */
    @Override
    public String describe() {
        synchronized (lock) {
            String where = "ZooKeeper " + connect + " znode " + path;
            if (!connected) {
                return where + " (could not reach ZooKeeper at " + connect + ": check sibyl.oracle.zk.connect=" + connect
                        + ", that ZooKeeper runs there, and that it is the ensemble the oracles use, their"
                        + " journal.zk.connect" + (renewalPending ? "; " + problem : "")
                        + (leader == null ? "" : "; last leader read: epoch " + leader.epoch() + " at "
                        + leader.address()) + ")";
            }
            return where + (leader == null ? " (" + problem + ")" : " (leader: epoch " + leader.epoch() + " at "
                    + leader.address() + ")");
        }
    }

    @Override
    public void close() {
        ZooKeeper z;
        synchronized (lock) {
            closed = true;
            z = zk;
            watchers.clear();
            lock.notifyAll();
        }
        try {
            z.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
