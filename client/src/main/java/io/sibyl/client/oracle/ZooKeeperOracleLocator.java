package io.sibyl.client.oracle;

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
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/**
 * Finds the leading oracle of an HA group through the leader znode it publishes in ZooKeeper (content:
 * {@link LeaderRecord}). A persistent watch keeps the answer current without polling; a record of an older epoch
 * than one already seen is ignored, so a deposed leader can never be chosen again. The ZooKeeper session is renewed
 * if it expires.
 */
public final class ZooKeeperOracleLocator implements OracleLocator {
    private static final Logger LOG = LoggerFactory.getLogger(ZooKeeperOracleLocator.class);

    private final String connect;
    private final String path;
    private final int sessionTimeoutMillis;
    private final List<Consumer<LeaderRecord>> listeners = new CopyOnWriteArrayList<>();
    private final Object lock = new Object();
    // Guarded by lock:
    private ZooKeeper zk;
    private LeaderRecord leader;
    private long highestEpoch = -1;
    private String problem;
    private boolean closed;

    /**
     * Connects to ZooKeeper at {@code connect} and starts watching {@code path}. Does not wait: {@link #leader}
     * waits for the first answer.
     */
    public ZooKeeperOracleLocator(String connect, String path, int sessionTimeoutMillis) throws IOException {
        if (!path.startsWith("/") || path.endsWith("/")) {
            throw new IllegalArgumentException("the leader znode '" + path + "' must be an absolute ZooKeeper path"
                    + " such as /sibyl/oracle/leader");
        }
        this.connect = connect;
        this.path = path;
        this.sessionTimeoutMillis = sessionTimeoutMillis;
        this.problem = "ZooKeeper has not answered: is it running at " + connect + ", and is that the ensemble the"
                + " oracles use (their journal.zk.connect)?";
        synchronized (lock) {
            zk = newSession();
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
        self.complete(z);
        return z;
    }

    private void sessionEvent(ZooKeeper session, WatchedEvent event) {
        if (event.getType() != Watcher.Event.EventType.None) {
            return;
        }
        switch (event.getState()) {
            case SyncConnected -> watchAndRead(session);
            case Expired -> renewSession(session);
            case Disconnected -> LOG.debug("oracle locator disconnected from ZooKeeper at {}", connect);
            default -> {
            }
        }
    }

    /** (Re)registers the persistent watch, then reads: every change after this reaches {@link #read}. */
    private void watchAndRead(ZooKeeper session) {
        session.addWatch(path, event -> read(session), AddWatchMode.PERSISTENT, (rc, p, ctx) -> {
            if (rc != KeeperException.Code.OK.intValue()) {
                noteProblem("watching " + path + " failed: " + KeeperException.Code.get(rc));
            }
            read(session);
        }, null);
    }

    private void read(ZooKeeper session) {
        session.getData(path, false, (rc, p, ctx, data, stat) -> {
            KeeperException.Code code = KeeperException.Code.get(rc);
            if (code == KeeperException.Code.OK) {
                accept(data);
            } else if (code == KeeperException.Code.NONODE) {
                synchronized (lock) {
                    leader = null; // no oracle leads right now: wait for the next one rather than dial a dead one
                    problem = "no oracle has published itself at " + path + " (is so-server running with this"
                            + " ZooKeeper and leader znode?)";
                }
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
            noteProblem(e.getMessage());
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

    private void renewSession(ZooKeeper expired) {
        synchronized (lock) {
            if (closed || zk != expired) {
                return;
            }
            try {
                zk.close();
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            try {
                zk = newSession();
            } catch (IOException e) {
                problem = "cannot reconnect to ZooKeeper at " + connect + ": " + e.getMessage();
            }
        }
    }

    @Override
    public LeaderRecord leader(long waitMillis) throws InterruptedException {
        long deadline = System.nanoTime() + waitMillis * 1_000_000L;
        synchronized (lock) {
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

    @Override
    public String describe() {
        synchronized (lock) {
            return "ZooKeeper " + connect + " znode " + path + (leader == null ? " (" + problem + ")" : "");
        }
    }

    @Override
    public void close() {
        ZooKeeper z;
        synchronized (lock) {
            closed = true;
            z = zk;
            lock.notifyAll();
        }
        try {
            z.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
