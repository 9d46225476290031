package io.sibyl.oracle.ha;

import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import io.sibyl.oracle.OracleState;
import io.sibyl.oracle.ServingLease;
import io.sibyl.oracle.StandbyMetrics;
import io.sibyl.oracle.journal.BookKeeperJournal;
import io.sibyl.oracle.journal.FatalErrorListener;
import io.sibyl.oracle.journal.JournalClients;
import io.sibyl.oracle.journal.JournalRecovery;
import io.sibyl.oracle.journal.JournalSettings;
import io.sibyl.oracle.journal.JournalTailer;
import io.sibyl.oracle.journal.LedgerRegistry;
import io.sibyl.oracle.journal.RecoveredState;
import io.sibyl.oracle.journal.ZnodeAcl;
import io.sibyl.protocol.LeaderRecord;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.WatchedEvent;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.function.Consumer;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * One oracle process in the leader election ({@code so-server --ha=true}): it joins the election, stands by as a
 * hot standby (tailing the journal) until it is first in line, then takes the journal over, serves and announces
 * itself in the leader znode.
 *
 * <p><b>Safety does not rest on the election.</b> Two candidates may both believe they lead for a moment (a standby
 * suspecting a live leader, a paused process); the takeover is {@link JournalRecovery#takeOver}: the registry epoch
 * compare-and-set, then every unfinished ledger opened with recovery (BookKeeper fencing). A deposed leader's next
 * journal write fails, so it answers nothing that depends on it, and stops through
 * {@link OracleServer#fatalError}. The election only decides who tries, so that standbys do not fence each other
 * in turn: only the first standby acts on a dead leader.
 *
 * <p><b>Liveness.</b> The first standby holds an idle TCP connection to the leader it follows (the one whose owner
 * name is both first in the election and in the leader znode), opened with a watch handshake so that the leader does
 * not close it at its handshake timeout ({@code LeaderConnectionWatch}; a leader that refuses it with an error is
 * alive and is not deposed for that). A kill -9 closes that connection at once; the standby
 * then deletes the dead leader's candidate znode (whoever may DELETE on the election znode may delete another
 * session's ephemeral znode in it: with {@code journal.zk.acl=secure}, the oracles' identity only) instead of waiting
 * out its ZooKeeper session, and takes over. A leader that is merely frozen keeps its connection; it is
 * replaced when its session expires ({@code journal.zk.session.timeout.ms}).
 *
 * <p><b>Until it notices.</b> Journal writes of a deposed leader fail, but begins, queries and handshakes need none.
 * A leader answers those only under a lease on its session ({@link SessionLeaseKeeper}), which ends before a standby
 * can be elected; meanwhile they are held (see {@code ReplyHold}).
 *
 * <p>One ZooKeeper session serves the candidate znode, the journal's registry and the leader znode: losing it ends
 * all three together.
 */
public final class OracleCandidate implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(OracleCandidate.class);
    private static final long RECHECK_MS = 200;

    private final OracleConfig config;
    private final JournalSettings js;
    private final ZnodeAcl acl;
    private final String owner;
    private final ZooKeeper zk;
    private final BookKeeper bk;
    private final LedgerRegistry registry;
    private final JournalTailer tailer;
    private final String myPath;
    private final String myName;
    private final Semaphore wake = new Semaphore(0);
    private final Watcher wakeUp = e -> wake.release();
    private volatile String lostLeader;
    private volatile long lostAtNanos;
    private LeaderConnectionWatch leaderWatch;
    private final ServingLease lease = new ServingLease();
    private volatile SessionLeaseKeeper leaseKeeper;
    private volatile LeaderAnnouncement announcement;
    private volatile boolean handedOver;
    private volatile boolean closed;
    private String summary = "";
    /** Place among the standbys (0: takes over next), for the standby's metrics; -1 until known. */
    private volatile int standbyPosition = -1;
    private StandbyMetrics standbyMetrics;
    private StandbyStatusZnode standbyStatus;

    private OracleCandidate(OracleConfig config, String owner, ZooKeeper zk, BookKeeper bk, String myPath) {
        this.config = config;
        this.js = config.journalSettings();
        this.owner = owner;
        this.zk = zk;
        this.bk = bk;
        this.acl = ZnodeAcl.of(js);
        this.registry = new LedgerRegistry(zk, js.ledgersZnode(), acl);
        this.tailer = new JournalTailer(bk, registry, js);
        this.myPath = myPath;
        this.myName = myPath.substring(myPath.lastIndexOf('/') + 1);
    }

    /** Connects to ZooKeeper and BookKeeper and joins the election as {@code owner} (see JournalClients#ownerName). */
    public static OracleCandidate join(OracleConfig config, String owner) throws IOException, InterruptedException {
        JournalSettings js = config.journalSettings();
        ZooKeeper zk = JournalClients.connectZooKeeper(js);
        BookKeeper bk = null;
        try {
            bk = JournalClients.newBookKeeper(js);
            String prefix = js.electionZnode() + "/" + ElectionOrder.PREFIX;
            ZnodeAcl acl = ZnodeAcl.of(js);
            acl.createParents(zk, prefix);
            String path = zk.create(prefix, owner.getBytes(StandardCharsets.UTF_8), acl.list(),
                    CreateMode.EPHEMERAL_SEQUENTIAL);
            LOG.info("joined the oracle election as {} ({})", path, owner);
            return new OracleCandidate(config, owner, zk, bk, path);
        } catch (KeeperException e) {
            closeQuietly(bk, zk);
            throw ZnodeAcl.of(js).refused("cannot join the oracle election under", js.electionZnode(), e);
        } catch (IOException | InterruptedException | RuntimeException e) {
            closeQuietly(bk, zk);
            throw e;
        }
    }

    /**
     * Stands by until this candidate is first in line, then takes the journal over and returns the serving oracle,
     * announced in the leader znode. Throws if the standby's ZooKeeper session is lost or the takeover fails.
     */
    public OracleServer lead() throws IOException, InterruptedException {
        tailer.start(config.ha().tailIntervalMs());
        showStandbyState();
        standBy();
        return takeOver();
    }

    /**
     * Shows what this standby is doing, until it takes over: metrics on {@code metrics.http.port} and JMX
     * ({@link StandbyMetrics}), and its lag in ZooKeeper for {@code bin/sibyl status}. Returns the metrics port, or
     * {@link OracleConfig#METRICS_OFF}. Called by {@link #lead()} if not before.
     *
     * @throws IOException naming {@code metrics.http.port} when that port cannot be bound
     */
    public synchronized int showStandbyState() throws IOException {
        if (standbyMetrics == null) {
            standbyMetrics = StandbyMetrics.start(config, tailer::lagMillis, tailer::entriesRead,
                    () -> standbyPosition);
            standbyStatus = new StandbyStatusZnode(zk, js.electionZnode(), myName, acl,
                    () -> "lag.ms=" + tailer.lagMillis() + "\nentries.replayed=" + tailer.entriesRead() + "\n");
        }
        return standbyMetrics.metricsPort();
    }

    /** A leader shows the leader's figures: the standby's go, and its port is free for the leader's metrics. */
    private synchronized void stopShowingStandbyState() {
        if (standbyStatus != null) {
            standbyStatus.close();
            standbyStatus = null;
        }
        if (standbyMetrics != null) {
            standbyMetrics.close();
            standbyMetrics = null;
        }
    }

    private void standBy() throws IOException, InterruptedException {
        int lastPosition = -2;
        while (true) {
            if (closed || !zk.getState().isAlive()) {
                throw new IOException("the ZooKeeper session ended while standing by");
            }
            ElectionOrder order;
            String predecessor;
            try {
                order = ElectionOrder.of(zk.getChildren(js.electionZnode(), wakeUp));
                int position = order.position(myName);
                if (position < 0) {
                    throw new IOException("this candidate's znode " + myPath + " is gone (session lost?)");
                }
                standbyPosition = position - 1;
                if (position != lastPosition) {
                    LOG.info("election order {}: this candidate is {}", order.candidates(),
                            position == 0 ? "first: taking over" : position == 1 ? "the first standby"
                                    : "standby number " + position);
                    lastPosition = position;
                }
                if (position == 0) {
                    return;
                }
                predecessor = order.predecessor(myName);
                if (position == 1) {
                    String leaderPath = js.electionZnode() + "/" + predecessor;
                    if (predecessor.equals(lostLeader)) {
                        LOG.warn("standby: deposing {} (its connection dropped) instead of waiting for its session"
                                + " to expire", predecessor);
                        if (deleteQuietly(leaderPath)) {
                            continue;
                        }
                    } else {
                        watchLeader(predecessor, new String(zk.getData(leaderPath, wakeUp, null),
                                StandardCharsets.UTF_8));
                    }
                } else {
                    stopWatchingLeader();
                }
            } catch (KeeperException.NoNodeException e) {
                continue; // the predecessor went meanwhile: look again
            } catch (KeeperException e) {
                LOG.warn("standby: reading the election: {}", e.getMessage());
            }
            wake.tryAcquire(RECHECK_MS, TimeUnit.MILLISECONDS);
            wake.drainPermits();
        }
    }

    /** Holds a connection to the leader if the leader znode names {@code candidate}'s owner. */
    private void watchLeader(String candidate, String candidateOwner) throws KeeperException, InterruptedException {
        LeaderRecord leader;
        try {
            leader = LeaderZnode.decodeOrNull(zk.getData(js.leaderZnode(), wakeUp, null));
        } catch (KeeperException.NoNodeException e) {
            zk.exists(js.leaderZnode(), wakeUp);
            leader = null;
        }
        if (leader == null || !leader.owner().equals(candidateOwner)) {
            stopWatchingLeader(); // no leader yet, or a stale record: the candidate is still taking over
            return;
        }
        if (leaderWatch != null && leaderWatch.watches(leader.host(), leader.port())) {
            return;
        }
        stopWatchingLeader();
        leaderWatch = new LeaderConnectionWatch(leader.host(), leader.port(), config.tls(), () -> {
            lostAtNanos = System.nanoTime();
            lostLeader = candidate;
            wake.release();
        });
    }

    private void stopWatchingLeader() {
        if (leaderWatch != null) {
            leaderWatch.close();
            leaderWatch = null;
        }
    }

    private OracleServer takeOver() throws IOException, InterruptedException {
        long t0 = System.nanoTime();
        stopWatchingLeader();
        stopShowingStandbyState();
        RecoveredState r;
        boolean tailed = true;
        try {
            tailer.stop();
        } catch (IOException e) {
            tailed = false;
            LOG.warn("standby: the journal tail had failed ({}); recovering from the start", e.getMessage());
        }
        long standingBy = tailer.entries();
        Relay relay = new Relay();
        // The new journal's first ledger is created and registered while the tail is read: both only need the
        // fenced registry, and each costs a few ZooKeeper writes.
        CompletableFuture<BookKeeperJournal> opening = new CompletableFuture<>();
        // The grace the earlier oracles recorded, as far as read before the journal opens (the tail comes later).
        long[] inherited = {tailed ? tailer.replay().writerGraceMillis() : 0};
        Consumer<LedgerRegistry.Snapshot> openJournal = fenced -> {
            Thread t = new Thread(() -> {
                try {
                    opening.complete(BookKeeperJournal.open(bk, registry, fenced, js, relay,
                            config.readerGraceMillis(), inherited[0]));
                } catch (Exception | Error e) {
                    opening.completeExceptionally(e);
                }
            }, "sibyl-takeover-journal");
            t.setDaemon(true);
            t.start();
        };
        try {
            r = tailed ? JournalRecovery.takeOver(bk, registry, js, owner, tailer, openJournal)
                    : recoverThenOpen(openJournal, inherited);
        } catch (IOException | InterruptedException | RuntimeException e) {
            opening.thenAccept(BookKeeperJournal::close);
            throw e;
        }
        long t1 = System.nanoTime();
        BookKeeperJournal journal;
        try {
            journal = opening.get();
        } catch (ExecutionException e) {
            Throwable c = e.getCause();
            if (c instanceof IOException io) {
                throw io;
            }
            throw new IOException("cannot open the journal after the takeover: " + c, c);
        }
        handedOver = true;
        journal.closeAfterwards(bk::close, zk::close);
        long tJournal = System.nanoTime();
        long tState;
        OracleServer server;
        try {
            // The first confirmation of the session goes out now: usually answered before the server listens.
            leaseKeeper = SessionLeaseKeeper.start(zk, myPath, lease, relay);
            OracleState state = r.newOracleState(config);
            tState = System.nanoTime();
            server = OracleServer.start(config, journal, state, lease);
        } catch (KeeperException e) {
            journal.close();
            throw new IOException("cannot watch this candidate's ZooKeeper session for its lease: " + e.getMessage(),
                    e);
        } catch (Exception | Error e) {
            stopKeepingLease();
            journal.close();
            throw e;
        }
        relay.server = server;
        server.onFatalError((reason, cause) -> stopKeepingLease());
        if (journal.isFailed()) {
            server.fatalError(journal.failure(), null);
        }
        long t2 = System.nanoTime();
        LeaderRecord record = new LeaderRecord(r.epoch(), config.ha().hostToAdvertise(config.host()), server.port(),
                owner);
        announcement = LeaderAnnouncement.publish(zk, js.leaderZnode(), record, server, acl);
        watchOwnCandidate(server);
        long t3 = System.nanoTime();
        RecoveredState.Stats s = r.stats();
        summary = "took over as leader: epoch " + r.epoch() + ", address " + record.address() + "; replayed "
                + standingBy + " entries while standing by, then fenced and read " + s.entries() + " entries ("
                + s.records() + " records, " + s.bytes() + " bytes) of ledgers " + r.registry().ledgers()
                + "; last timestamp " + r.lastTimestamp() + ", T_max " + r.tMax() + ", in doubt "
                + (r.inDoubtRange() == null ? "none" : r.inDoubtRange()) + "; takeover took " + ms(t3 - t0)
                + " ms (fence + tail, new ledger meanwhile " + ms(t1 - t0) + " ms, rest of new ledger "
                + ms(tJournal - t1) + " ms, state "
                + ms(tState - tJournal) + " ms, first block + listen " + ms(t2 - tState) + " ms, leader znode "
                + ms(t3 - t2) + " ms)"
                + (lostAtNanos != 0 ? "; serving " + ms(t3 - lostAtNanos) + " ms after the old leader's connection"
                + " dropped" : "");
        LOG.info("{}", summary);
        return server;
    }

    /** Full recovery (the standby's tail had failed), then the new journal as after a tail takeover. */
    private RecoveredState recoverThenOpen(Consumer<LedgerRegistry.Snapshot> openJournal, long[] inherited)
            throws IOException, InterruptedException {
        RecoveredState r = JournalRecovery.recover(bk, registry, js, owner);
        inherited[0] = r.writerGraceMillis();
        openJournal.accept(r.registry());
        return r;
    }

    /** A standby that deletes this candidate's znode has judged this leader dead: stop before it fences us. */
    private void watchOwnCandidate(OracleServer server) {
        Watcher w = new Watcher() {
            @Override
            public void process(WatchedEvent e) {
                if (closed) {
                    return; // shutting down: the session closes with the server
                }
                if (e.getType() == Event.EventType.NodeDeleted) {
                    server.fatalError("deposed: this oracle's election znode " + myPath + " was deleted (a standby"
                            + " judged it dead and is taking over)", null);
                } else if (e.getType() != Event.EventType.None) {
                    rearm(this);
                }
            }

            private void rearm(Watcher self) {
                try {
                    if (zk.exists(myPath, self) == null) {
                        server.fatalError("deposed: this oracle's election znode " + myPath + " is gone", null);
                    }
                } catch (KeeperException | InterruptedException ex) {
                    LOG.warn("watching {}: {}", myPath, ex.toString());
                }
            }
        };
        try {
            if (zk.exists(myPath, w) == null) {
                server.fatalError("deposed: this oracle's election znode " + myPath + " is gone", null);
            }
        } catch (KeeperException | InterruptedException e) {
            server.fatalError("cannot watch this oracle's election znode " + myPath + ": " + e, e);
        }
    }

    private void stopKeepingLease() {
        SessionLeaseKeeper k = leaseKeeper;
        if (k != null) {
            k.close();
        }
    }

    /** For tests: the lease under which the serving leader answers without the journal. */
    ServingLease lease() {
        return lease;
    }

    /** This process's name in the election, the registry and the leader znode. */
    public String owner() {
        return owner;
    }

    /** For tests: this candidate's ZooKeeper session id, so that a test can expire the session. */
    long zooKeeperSessionId() {
        return zk.getSessionId();
    }

    /** For tests: this candidate's ZooKeeper session password, so that a test can expire the session. */
    byte[] zooKeeperSessionPassword() {
        return zk.getSessionPasswd();
    }

    /** What the takeover did and how long it took (empty before it happened). */
    public String summary() {
        return summary;
    }

    private static long ms(long nanos) {
        return nanos / 1_000_000;
    }

    /** Deletes {@code path}; false if ZooKeeper refused it for want of rights (then a retry would spin). */
    private boolean deleteQuietly(String path) throws InterruptedException {
        try {
            zk.delete(path, -1);
        } catch (KeeperException.NoAuthException e) {
            // Without the DELETE right on the election znode this standby cannot depose a dead leader early; it
            // still takes over when that leader's session expires.
            LOG.warn("{}", acl.refused("deposing the dead leader's candidate", path, e).getMessage());
            return false;
        } catch (KeeperException e) {
            LOG.debug("deleting {}: {}", path, e.getMessage());
        }
        return true;
    }

    /**
     * Leaves the election (a standby's znode goes with its session). After a takeover, call it before closing the
     * server: it stops the watches that would take the server's shutdown for a deposition; the clients belong to the
     * journal, which closes them (and so the znodes) when the server closes.
     */
    @Override
    public void close() {
        closed = true;
        wake.release();
        stopWatchingLeader();
        stopShowingStandbyState();
        stopKeepingLease();
        LeaderAnnouncement a = announcement;
        if (a != null) {
            a.close();
        }
        if (!handedOver) {
            closeQuietly(bk, zk);
        }
    }

    private static void closeQuietly(BookKeeper bk, ZooKeeper zk) {
        try {
            if (bk != null) {
                bk.close();
            }
        } catch (Exception e) {
            LOG.debug("closing BookKeeper client: {}", e.toString());
        }
        try {
            zk.close();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }

    /** The journal's fatal-error listener: the server's fatal path once it exists. */
    private static final class Relay implements FatalErrorListener {
        volatile OracleServer server;

        @Override
        public void onFatalError(String reason, Throwable cause) {
            OracleServer s = server;
            if (s != null) {
                s.fatalError(reason, cause);
            } else {
                // the journal also reports it through isFailed(), checked once the server exists
                LOG.error("journal failed while taking over: {}", reason, cause);
            }
        }
    }
}
