package io.sibyl.client;

import io.sibyl.client.oracle.FixedOracleAddress;
import io.sibyl.client.oracle.OracleClient;
import io.sibyl.client.oracle.OracleConnection;
import io.sibyl.client.oracle.OracleException;
import io.sibyl.client.oracle.OracleLocator;
import io.sibyl.client.oracle.OracleUnavailableException;
import io.sibyl.client.oracle.TransactionAbortedException;
import io.sibyl.client.oracle.TransactionStatus;
import io.sibyl.client.oracle.ZooKeeperOracleLocator;
import io.sibyl.protocol.DigestCredentials;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.function.Function;

/**
 * Entry point of the transactional client: one connection to the status oracle (with its local replica of commit
 * metadata) shared by every transaction begun here. Thread-safe; create one per application and close it at the end.
 * The oracle is found at a fixed address or, for an HA group of oracles, through ZooKeeper; a lost connection is
 * replaced by one to the oracle that took over (see {@link #ORACLE_ZK_CONNECT}).
 *
 * <pre>{@code
 * try (TransactionManager tm = TransactionManager.create(conf);          // sibyl.oracle.zk.connect=zk1:2181,...
 *      TTable accounts = new TTable(tm.getConnection(), TableName.valueOf("accounts"))) {
 *     Transaction tx = tm.begin();
 *     accounts.put(tx, new Put(row).addColumn(CF, Q, value));
 *     tm.commit(tx);                                                     // throws RollbackException on conflict
 * }
 * }</pre>
 */
public final class TransactionManager implements AutoCloseable {
    static final Logger LOG = LoggerFactory.getLogger(TransactionManager.class);

    /** {@code host:port} of the status oracle (a single oracle; set this or {@value #ORACLE_ZK_CONNECT}). */
    public static final String ORACLE_ADDRESS = "sibyl.oracle.address";
    /** ZooKeeper ensemble where an HA group of oracles publishes its leader (set this or {@value #ORACLE_ADDRESS}). */
    public static final String ORACLE_ZK_CONNECT = "sibyl.oracle.zk.connect";
    /** The leader znode the oracles publish (default {@value #DEFAULT_LEADER_ZNODE}, so-server's default). */
    public static final String ORACLE_LEADER_ZNODE = "sibyl.oracle.leader.znode";
    /** Default of {@value #ORACLE_LEADER_ZNODE}. */
    public static final String DEFAULT_LEADER_ZNODE = "/sibyl/oracle/leader";
    /** ZooKeeper session timeout of the client's oracle lookup (default 10000 ms). */
    public static final String ORACLE_ZK_SESSION_TIMEOUT_MS = "sibyl.oracle.zk.session.timeout.ms";
    /** Default of {@value #ORACLE_ZK_SESSION_TIMEOUT_MS}. */
    static final int DEFAULT_ZK_SESSION_TIMEOUT_MS = 10_000;
    /**
     * File holding {@code user:password}, the ZooKeeper digest identity of the client's oracle lookup; needed only if
     * the oracles' {@code journal.zk.acl.readers} does not let anyone read the leader znode (default: none).
     */
    public static final String ORACLE_ZK_AUTH_FILE = "sibyl.oracle.zk.auth.file";
    /**
     * How long the client waits for an oracle to answer after losing the connection (failover, restart) before
     * operations fail (default 30000 ms).
     */
    public static final String FAILOVER_TIMEOUT_MS = "sibyl.client.failover.timeout.ms";
    /** Versions fetched per column and read request before walking down to the snapshot's version (default 3). */
    public static final String READ_VERSIONS = "sibyl.client.read.versions";
    /** Buffered write bytes per transaction before they are sent to HBase ahead of the commit (default 4 MiB). */
    public static final String WRITE_BUFFER_BYTES = "sibyl.client.write.buffer.bytes";
    /** Attempts made by {@link #run} before it gives up on conflicts (default 10). */
    public static final String RETRY_ATTEMPTS = "sibyl.client.retry.attempts";
    /** First back-off of {@link #run} after a conflict; doubles per attempt, with jitter (default 5 ms). */
    public static final String RETRY_BACKOFF_MS = "sibyl.client.retry.backoff.ms";
    /** Largest back-off of {@link #run} (default 1000 ms). */
    public static final String RETRY_BACKOFF_MAX_MS = "sibyl.client.retry.backoff.max.ms";
    /**
     * How long any request waits for the oracle's answer (default 30000 ms); an oracle silent for longer is treated
     * as lost and its connection dropped.
     */
    public static final String ORACLE_TIMEOUT_MS = "sibyl.client.oracle.timeout.ms";
    /**
     * A file holding the oracle's admin secret (its {@code admin.secret.file}): connections then prove it and may
     * report the clean-up of other clients' aborted transactions and of aborted ranges, as {@code bin/sibyl-sweep}
     * must. Unset: an ordinary client.
     */
    public static final String ADMIN_SECRET_FILE = "sibyl.client.admin.secret.file";

    private final Connection connection;
    private final boolean ownsConnection;
    private final OracleConnection oracle;
    private final ClientSettings settings;
    private final Set<Transaction> running = ConcurrentHashMap.newKeySet();
    private final AbortCleanup cleanup;
    private volatile boolean closed;

    private TransactionManager(Connection connection, boolean ownsConnection, OracleConnection oracle,
                               ClientSettings settings) {
        this.connection = connection;
        this.ownsConnection = ownsConnection;
        this.oracle = oracle;
        this.settings = settings;
        this.cleanup = new AbortCleanup(oracle::lastConnected);
    }

    /**
     * Opens an HBase connection from {@code conf} and connects to the oracle named by {@value #ORACLE_ZK_CONNECT}
     * (HA) or {@value #ORACLE_ADDRESS}.
     */
    public static TransactionManager create(Configuration conf) throws IOException {
        ClientSettings settings = ClientSettings.from(conf);
        Connection c = ConnectionFactory.createConnection(conf);
        try {
            return new TransactionManager(c, true, connectOracle(oracleLocator(conf), settings), settings);
        } catch (IOException | RuntimeException e) {
            c.close();
            throw e;
        }
    }

    /** Opens an HBase connection from {@code conf} and connects to the oracle at {@code oracleHost:oraclePort}. */
    public static TransactionManager create(Configuration conf, String oracleHost, int oraclePort)
            throws IOException {
        ClientSettings settings = ClientSettings.from(conf);
        Connection c = ConnectionFactory.createConnection(conf);
        try {
            return new TransactionManager(c, true,
                    connectOracle(new FixedOracleAddress(oracleHost, oraclePort), settings), settings);
        } catch (RuntimeException e) {
            c.close();
            throw e;
        }
    }

    /**
     * Uses an existing HBase connection (not closed by {@link #close()}) and the oracle named by
     * {@value #ORACLE_ZK_CONNECT} or {@value #ORACLE_ADDRESS} in its configuration.
     */
    public static TransactionManager create(Connection connection) throws IOException {
        ClientSettings settings = ClientSettings.from(connection.getConfiguration());
        return new TransactionManager(connection, false,
                connectOracle(oracleLocator(connection.getConfiguration()), settings), settings);
    }

    /** Uses an existing HBase connection (not closed by {@link #close()}) and the oracle at the given address. */
    public static TransactionManager create(Connection connection, String oracleHost, int oraclePort)
            throws IOException {
        ClientSettings settings = ClientSettings.from(connection.getConfiguration());
        return new TransactionManager(connection, false,
                connectOracle(new FixedOracleAddress(oracleHost, oraclePort), settings), settings);
    }

    /**
     * The oracle lookup {@code conf} names ({@value #ORACLE_ZK_CONNECT} or {@value #ORACLE_ADDRESS}), as a manager
     * would use it; for other processes that follow the oracle, such as the region-server garbage collector.
     */
    public static OracleLocator oracleLocator(Configuration conf) throws IOException {
        String zk = conf.get(ORACLE_ZK_CONNECT);
        String a = conf.get(ORACLE_ADDRESS);
        boolean hasZk = zk != null && !zk.isBlank();
        boolean hasAddress = a != null && !a.isBlank();
        if (hasZk && hasAddress) {
            throw new IllegalArgumentException("both " + ORACLE_ZK_CONNECT + " and " + ORACLE_ADDRESS + " are set:"
                    + " set " + ORACLE_ZK_CONNECT + " for an HA group of oracles, or " + ORACLE_ADDRESS
                    + " for a single oracle, not both");
        }
        if (hasZk) {
            String znode = conf.get(ORACLE_LEADER_ZNODE, DEFAULT_LEADER_ZNODE);
            if (!znode.startsWith("/") || znode.endsWith("/")) {
                throw new IllegalArgumentException(ORACLE_LEADER_ZNODE + "=" + znode + " is not an absolute ZooKeeper"
                        + " path: give the oracles' journal.leader.znode (default " + DEFAULT_LEADER_ZNODE + ")");
            }
            long session = ClientSettings.number(conf, ORACLE_ZK_SESSION_TIMEOUT_MS, DEFAULT_ZK_SESSION_TIMEOUT_MS,
                    Integer.MAX_VALUE);
            if (session < 1) {
                throw new IllegalArgumentException("invalid value " + session + " for " + ORACLE_ZK_SESSION_TIMEOUT_MS
                        + ": must be >= 1 (see docs/user-guide.md)");
            }
            String authFile = conf.getTrimmed(ORACLE_ZK_AUTH_FILE, "");
            DigestCredentials credentials = authFile.isEmpty() ? null
                    : DigestCredentials.read(Path.of(authFile), ORACLE_ZK_AUTH_FILE);
            try {
                return new ZooKeeperOracleLocator(zk.trim(), znode, (int) session, credentials);
            } catch (IllegalArgumentException e) {
                throw new IllegalArgumentException(ORACLE_ZK_CONNECT + "=" + zk.trim() + ": " + e.getMessage(), e);
            }
        }
        if (!hasAddress) {
            throw new IllegalArgumentException(ORACLE_ADDRESS + " is not set: give the status oracle's host:port"
                    + " (so-server prints it as READY port=N), or " + ORACLE_ZK_CONNECT + " for an HA group of"
                    + " oracles, or pass the address to TransactionManager.create");
        }
        int colon = a.lastIndexOf(':');
        if (colon <= 0 || colon == a.length() - 1) {
            throw new IllegalArgumentException(ORACLE_ADDRESS + "=" + a + " is not host:port");
        }
        String port = a.substring(colon + 1).trim();
        int p;
        try {
            p = Integer.parseInt(port);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(ORACLE_ADDRESS + "=" + a + " is not host:port");
        }
        if (p < 1 || p > 65535) {
            throw new IllegalArgumentException(ORACLE_ADDRESS + "=" + a + ": the port must be 1 to 65535 (so-server"
                    + " prints its port as READY port=N)");
        }
        return new FixedOracleAddress(a.substring(0, colon).trim(), p);
    }

    private static OracleConnection connectOracle(OracleLocator locator, ClientSettings settings) {
        return OracleConnection.open(locator, settings.failoverTimeoutMillis(), FAILOVER_TIMEOUT_MS,
                settings.credentials());
    }

    /** The HBase connection (for {@code new TTable(tm.getConnection(), name)} and plain HBase use). */
    public Connection getConnection() {
        return connection;
    }

    /**
     * Starts a transaction: one round trip to the oracle for its start timestamp. If the oracle connection is lost,
     * waits (up to {@value #FAILOVER_TIMEOUT_MS}) for an oracle to take over and begins there.
     *
     * @throws OracleUnavailableException if no oracle answered within the failover timeout
     */
    public Transaction begin() {
        checkOpen();
        long deadline = System.nanoTime() + settings.failoverTimeoutMillis() * 1_000_000L;
        Transaction tx;
        while (true) {
            OracleClient client = oracle.current();
            long sentNanos = System.nanoTime(); // no later than the oracle handing out the timestamp: its age counts
            try {
                tx = new Transaction(this, client, awaitReply(client.begin(), client, "a begin"), sentNanos);
                break;
            } catch (CompletionException e) {
                // A begin lost with its connection left nothing behind: the oracle aborts what a lost connection ran.
                boolean lost = e.getCause() instanceof OracleUnavailableException && !client.isOpen();
                if (!lost || System.nanoTime() > deadline) {
                    throw e.getCause() instanceof RuntimeException re ? re : e;
                }
            }
        }
        running.add(tx);
        if (closed) { // closed concurrently: do not leave it running at the oracle
            rollback(tx);
            checkOpen();
        }
        return tx;
    }

    /**
     * Commits: sends the buffered writes to HBase, then asks the oracle (one round trip) with the rows written in
     * every table. A transaction that wrote nothing commits locally with no round trip.
     *
     * @throws RollbackException if the transaction could not commit; it is then rolled back and its versions removed
     * @throws CommitOutcomeUnknownException if the oracle connection was lost while the request was in flight
     */
    public void commit(Transaction tx) throws RollbackException {
        checkOwn(tx);
        tx.checkNotFinished();
        claimFinish(tx);
        try {
            commitClaimed(tx);
        } finally {
            tx.releaseFinishIfRunning();
        }
    }

    /** Takes the transaction's commit-or-rollback claim, or says that another thread holds it. */
    private static void claimFinish(Transaction tx) {
        if (!tx.claimFinish()) {
            throw new IllegalStateException("transaction " + tx.getStartTimestamp() + " is being committed or rolled"
                    + " back by another thread");
        }
    }

    private void commitClaimed(Transaction tx) throws RollbackException {
        long startTs = tx.getStartTimestamp();
        // Writes racing the commit on other threads: those under way finish first and later ones are refused, so a
        // write that returned normally is committed (or rolled back) with the rest, never dropped or half applied,
        // and nothing reaches HBase that is not in the write set (and the roll-back-only check below sees them).
        tx.closeForCommit();
        Exception failedWrite = tx.writeFailure();
        if (failedWrite != null) {
            throw rollBackAfterWriteFailure(tx, failedWrite);
        }
        OracleClient client = tx.begunOn();
        if (tx.isReadOnly()) {
            tx.endingAtOracle();
            client.finish(startTs);
            finished(tx);
            tx.markCommitted(startTs);
            return;
        }
        if (!client.isOpen()) {
            throw lostBeforeCommit(tx, client);
        }
        try {
            tx.flush();
        } catch (IOException | RuntimeException e) {
            throw rollBackAfterWriteFailure(tx, e);
        }
        if (!client.isOpen()) { // lost while the writes were sent
            throw lostBeforeCommit(tx, client);
        }
        long commitTs;
        long commitSentNanos = System.nanoTime();
        tx.endingAtOracle();
        try {
            commitTs = awaitReply(client.commit(startTs, tx.writeSet()), client, "a commit");
        } catch (CompletionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof TransactionAbortedException tae) {
                rollBackLocally(tx, true);
                RollbackException.Reason reason = switch (tae.reason()) {
                    case CONFLICT -> RollbackException.Reason.CONFLICT;
                    case TOO_OLD -> RollbackException.Reason.TOO_OLD;
                    // Aborted by transaction.max.age.ms (the commit left after the client's own count ended, with
                    // nothing left to flush): as retryable as T_max passing it.
                    case ALREADY_ABORTED -> tx.outlivedMaxAge() ? RollbackException.Reason.TOO_OLD
                            : RollbackException.Reason.ABORTED_BY_ORACLE;
                };
                String why = tae.getMessage() + (tx.outlivedMaxAge() ? " (it ran longer than the oracle's"
                        + " transaction.max.age.ms, " + client.transactionMaxAgeNanos() / 1_000_000L + " ms)" : "");
                throw new RollbackException(tx, reason, why, null);
            }
            if (cause instanceof OracleUnavailableException oue) {
                resolveInDoubt(tx, oue, commitSentNanos, client.readWindowMillis());
                return;
            }
            if (cause instanceof OracleException oe) {
                // Refused without a decision (e.g. write set too large): make sure it is aborted, then clean up.
                abortAtOracle(tx);
                rollBackLocally(tx, true);
                throw new RollbackException(tx, RollbackException.Reason.ABORTED_BY_ORACLE,
                        "the oracle refused the commit: " + Transaction.describe(oe), oe);
            }
            throw e;
        }
        finished(tx);
        tx.markCommitted(commitTs);
    }

    /**
     * Sending the writes to HBase failed (now, or in an earlier flush): the transaction is aborted at the oracle and
     * its versions deleted in the background, since HBase just failed to take them and would make a deletion now
     * wait through its retries again.
     */
    private RollbackException rollBackAfterWriteFailure(Transaction tx, Exception e) {
        abortAtOracle(tx);
        finished(tx);
        tx.markRolledBack(null);
        cleanup.deleteLater(tx, true);
        if (e instanceof SnapshotExpiredException) {
            // Not HBase's fault: the oracle went silent, and a new transaction on the next one may well succeed.
            return new RollbackException(tx, RollbackException.Reason.ORACLE_FAILOVER, e.getMessage(), e);
        }
        return new RollbackException(tx, RollbackException.Reason.WRITE_FAILED,
                "some of its writes may be missing: " + e, e);
    }

    /**
     * Rolls back: discards buffered writes, and if some writes already reached HBase, aborts at the oracle, deletes
     * those versions and reports the clean-up. Rolling back a rolled-back transaction does nothing. A transaction
     * whose commit outcome is unknown ({@link CommitOutcomeUnknownException}) cannot be rolled back: it may have
     * committed, so its writes stay.
     */
    public void rollback(Transaction tx) {
        checkOwn(tx);
        if (tx.getStatus() == Transaction.Status.ROLLED_BACK) {
            return;
        }
        if (tx.getStatus() == Transaction.Status.COMMITTED) {
            throw new IllegalStateException("transaction " + tx.getStartTimestamp()
                    + " is already committed and cannot be rolled back");
        }
        if (tx.isInDoubt()) {
            throw new IllegalStateException("transaction " + tx.getStartTimestamp() + " cannot be rolled back: its"
                    + " commit outcome is unknown (it may have committed), so its writes are left in place; read the"
                    + " data to find out");
        }
        claimFinish(tx);
        try {
            rollbackClaimed(tx);
        } finally {
            tx.releaseFinishIfRunning();
        }
    }

    private void rollbackClaimed(Transaction tx) {
        if (tx.getStatus() != Transaction.Status.RUNNING) {
            return; // finished by the commit that held the claim a moment ago
        }
        if (!tx.closeForWrites()) {
            tx.endingAtOracle();
            tx.begunOn().finish(tx.getStartTimestamp());
            finished(tx);
            tx.markRolledBack(null);
            return;
        }
        abortAtOracle(tx);
        rollBackLocally(tx, true);
    }

    /**
     * Runs {@code work} in a new transaction and commits it; on a retryable rollback (write-write conflict, too old,
     * oracle failover) begins a new transaction and runs {@code work} again, after a growing, jittered back-off, up
     * to {@value #RETRY_ATTEMPTS} attempts. If {@code work} throws, the transaction is rolled back and the exception
     * propagates (wrap checked exceptions, e.g. in {@link java.io.UncheckedIOException}), except a
     * {@link SnapshotExpiredException} wrapped so, which is retried like a failover. If {@code work} commits
     * or rolls back the transaction itself, its result is returned as is. If this manager is closed while
     * {@code work} runs, {@link IllegalStateException}: the close rolled the transaction back.
     *
     * @throws RollbackException the last rollback, when it is not retryable or the attempts are used up
     */
    public <T> T run(Function<Transaction, T> work) throws RollbackException {
        long backoff = settings.retryBackoffMillis();
        for (int attempt = 1; ; attempt++) {
            Transaction tx = begin();
            T result;
            try {
                result = work.apply(tx);
            } catch (Throwable e) {
                // Throwable, not RuntimeException | Error: a checked exception thrown undeclared (Kotlin, Scala or
                // Groovy work, Lombok's @SneakyThrows) would otherwise leave the transaction running at the oracle,
                // holding the low watermark until transaction.max.age.ms. Rethrown as is (precise rethrow).
                if (tx.getStatus() == Transaction.Status.RUNNING && !tx.isInDoubt()) {
                    try {
                        rollback(tx);
                    } catch (RuntimeException re) {
                        e.addSuppressed(re);
                    }
                }
                if (!isExpiredSnapshot(e) || attempt >= settings.retryAttempts()) {
                    throw e;
                }
                backoff = backOff(backoff);
                continue;
            }
            if (tx.wasRolledBackByClose()) {
                // Not the work's own rollback: the manager was closed (by another thread) after the work's last
                // write. Returning the result would report work as done that the close undid.
                throw new IllegalStateException("this TransactionManager was closed while run's work was under way:"
                        + " its transaction " + tx.getStartTimestamp() + " was rolled back and nothing of it was"
                        + " committed; create a new manager and run it again");
            }
            if (tx.getStatus() != Transaction.Status.RUNNING) {
                return result;
            }
            try {
                commit(tx);
                return result;
            } catch (RollbackException e) {
                if (!e.isRetryable()) {
                    throw e;
                }
                if (attempt >= settings.retryAttempts()) {
                    throw e.afterAttempts(attempt, RETRY_ATTEMPTS);
                }
            }
            backoff = backOff(backoff);
        }
    }

    /** A read refused because the oracle connection was lost long ago: a new transaction reads on a live one. */
    private static boolean isExpiredSnapshot(Throwable e) {
        return e instanceof UncheckedIOException u && u.getCause() instanceof SnapshotExpiredException;
    }

    /** Sleeps about {@code backoff} ms (jittered) and returns the next, doubled back-off. */
    private long backOff(long backoff) {
        if (backoff <= 0) {
            return backoff;
        }
        long sleep = backoff / 2 + ThreadLocalRandom.current().nextLong(backoff / 2 + 1);
        try {
            Thread.sleep(sleep);
        } catch (InterruptedException ie) {
            Thread.currentThread().interrupt();
            throw new IllegalStateException("interrupted while backing off before a retry", ie);
        }
        return Math.min(backoff * 2, settings.retryBackoffMaxMillis());
    }

    /**
     * Lets commits under way on other threads finish (for at most {@value #ORACLE_TIMEOUT_MS}), rolls back every
     * transaction still running, closes the oracle connection, and the HBase connection if this manager opened it.
     * Idempotent.
     */
    @Override
    public void close() {
        if (closed) {
            return;
        }
        closed = true;
        awaitCommitsUnderWay();
        for (Transaction tx : running.toArray(new Transaction[0])) {
            try {
                // A transaction another thread is committing or rolling back finishes on that thread: rolling it
                // back here could delete the versions of a commit the oracle has just decided.
                if (tx.getStatus() == Transaction.Status.RUNNING && !tx.isInDoubt() && tx.claimFinish()) {
                    try {
                        rollbackClaimed(tx);
                        tx.markRolledBackByClose();
                    } finally {
                        tx.releaseFinishIfRunning();
                    }
                }
            } catch (RuntimeException e) {
                LOG.warn("rolling back transaction {} at close failed: {}", tx.getStartTimestamp(), e.toString());
            }
        }
        // A commit that took its claim after the first wait (the loop above then left it alone) is under way too.
        awaitCommitsUnderWay();
        cleanup.close();
        oracle.close();
        if (ownsConnection) {
            try {
                connection.close();
            } catch (IOException e) {
                LOG.warn("closing the HBase connection failed: {}", e.toString());
            }
        }
    }

    /** True once {@link #close()} was called: begins are refused and running transactions were rolled back. */
    public boolean isClosed() {
        return closed;
    }

    /**
     * Lets commits that other threads have under way finish before the oracle connection closes, for at most
     * {@code sibyl.client.oracle.timeout.ms} (a commit waits no longer for its reply): closing the connection under
     * them would leave their outcome unknown.
     */
    private void awaitCommitsUnderWay() {
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(settings.oracleTimeoutMillis());
        for (Transaction tx : running.toArray(new Transaction[0])) {
            while (tx.isBeingFinished() && tx.getStatus() == Transaction.Status.RUNNING && !tx.isInDoubt()
                    && System.nanoTime() < deadline) {
                try {
                    Thread.sleep(1);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    return;
                }
            }
        }
    }

    // ---- package-private ----------------------------------------------------------------------------------------

    /** Aborted transactions whose versions are still being deleted in the background. */
    int pendingAbortCleanups() {
        return cleanup.pending();
    }

    /** The oracle client most recently connected (tests inspect its replica). */
    OracleClient oracle() {
        return oracle.lastConnected();
    }

    /** The link to the current oracle, which reconnects after a failover. */
    OracleConnection connection() {
        return oracle;
    }

    ClientSettings settings() {
        return settings;
    }

    void checkOpen() {
        if (closed) {
            throw new IllegalStateException("this TransactionManager is closed; create a new one");
        }
    }

    private void checkOwn(Transaction tx) {
        if (tx == null) {
            throw new NullPointerException("transaction is null: begin one with TransactionManager.begin()");
        }
        if (tx.manager() != this) {
            throw new IllegalArgumentException("transaction " + tx.getStartTimestamp()
                    + " was begun by another TransactionManager");
        }
    }

    /**
     * Waits for the oracle's reply, as {@code join} would, but for at most {@code sibyl.client.oracle.timeout.ms}. An
     * oracle that stays silent that long is treated as lost (frozen, or cut off with its connection still open): the
     * connection is dropped, so this and every other request on it fail as after a lost connection (begins retry
     * elsewhere, commits are resolved as in doubt) and the next request connects to whichever oracle leads.
     *
     * @throws CompletionException with the failure, an {@link OracleUnavailableException} on timeout
     */
    private <T> T awaitReply(CompletableFuture<T> reply, OracleClient client, String what) {
        long timeoutNanos = settings.oracleTimeoutMillis() * 1_000_000L;
        long deadline = System.nanoTime() + timeoutNanos;
        boolean interrupted = false;
        try {
            while (true) {
                try {
                    return reply.get(Math.max(0, deadline - System.nanoTime()), TimeUnit.NANOSECONDS);
                } catch (InterruptedException e) {
                    interrupted = true; // like join: the reply decides what happened, so keep waiting for it
                } catch (ExecutionException e) {
                    throw new CompletionException(e.getCause());
                } catch (TimeoutException e) {
                    String reason = "the oracle at " + client.address() + " did not answer " + what + " within "
                            + settings.oracleTimeoutMillis() + " ms (" + ORACLE_TIMEOUT_MS + "), so the connection"
                            + " to it was dropped";
                    LOG.warn(reason);
                    client.closeBecause(reason);
                    throw new CompletionException(new OracleUnavailableException(reason));
                }
            }
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }

    private void finished(Transaction tx) {
        running.remove(tx);
    }

    private void abortAtOracle(Transaction tx) {
        tx.endingAtOracle();
        if (!tx.begunOn().isOpen()) {
            return; // the oracle aborts what a lost connection was running (a new oracle: all it did not decide)
        }
        try {
            awaitReply(tx.begunOn().abort(tx.getStartTimestamp()), tx.begunOn(), "an abort");
        } catch (CompletionException e) {
            LOG.warn("abort of transaction {} at the oracle failed: {}", tx.getStartTimestamp(),
                    e.getCause().toString());
        }
    }

    /** Deletes the transaction's versions and, if all went and the oracle is reachable, reports the clean-up. */
    private void rollBackLocally(Transaction tx, boolean reportCleanUp) {
        cleanup.deleteNowOrLater(tx, reportCleanUp);
        finished(tx);
        tx.markRolledBack(null);
    }

    /** The transaction's connection was lost before its commit request left: the oracle aborted it. */
    private RollbackException lostBeforeCommit(Transaction tx, OracleClient client) {
        // The oracle ended it with the connection: a read on another thread during the clean-up is refused, as
        // during any other ending, instead of resolving against a replica that no longer keeps this snapshot.
        tx.endingAtOracle();
        rollBackLocally(tx, false);
        return new RollbackException(tx, RollbackException.Reason.ORACLE_FAILOVER, "the connection to the oracle at "
                + client.address() + " was lost before the commit was sent, so the oracle aborted it; run it again",
                null);
    }

    /**
     * The connection was lost while the commit request was in flight. The oracle that serves now (the same one
     * after a network failure, or the one that took over from the journal) knows the outcome: ask it. A transaction
     * it reports still running never reached its commit; it is aborted first, so the answer cannot change.
     *
     * <p>"Committed before T_max" is trusted only while less than the read window has passed since the commit was
     * sent. An aborted transaction is forgotten once its versions were swept (a dead client's abort, or an aborted
     * range after a crash), and after that the oracle answers "committed before T_max" for its timestamp, as for any
     * old commit. Forgetting waits for the low watermark, which the oracle holds down for the whole reader grace
     * (twice the read window) after the connection was lost or the new oracle started, and the commit was sent at
     * most a read window after the client last heard from the oracle (writes stop then). So an answer within a read
     * window of sending cannot come from a forgotten abort; a later one (the client stalled) is "outcome unknown".
     */
    private void resolveInDoubt(Transaction tx, OracleUnavailableException lost, long commitSentNanos,
                                long readWindowMillis) throws RollbackException {
        long startTs = tx.getStartTimestamp();
        boolean askAgain = true;
        for (int attempt = 0; attempt < 3 && askAgain; attempt++) {
            try {
                OracleClient client = oracle.current();
                TransactionStatus status = awaitReply(client.query(startTs), client, "a commit query");
                switch (status.state()) {
                    case COMMITTED, COMMITTED_LONG_AGO -> {
                        long sinceSentMillis = (System.nanoTime() - commitSentNanos) / 1_000_000L;
                        if (status.state() == TransactionStatus.State.COMMITTED_LONG_AGO
                                && sinceSentMillis >= readWindowMillis) {
                            LOG.warn("the oracle at {} reports in-doubt transaction {} committed before T_max, but {}"
                                    + " ms after its commit was sent, longer than the read window ({} ms): an abort"
                                    + " swept and forgotten meanwhile would read the same, so the outcome is unknown",
                                    client.address(), startTs, sinceSentMillis, readWindowMillis);
                            askAgain = false;
                        } else {
                            finished(tx);
                            tx.markCommitted(status.commitTimestamp());
                            LOG.info("commit of transaction {} was in flight when the oracle connection was lost;"
                                    + " the oracle at {} reports it committed", startTs, client.address());
                            return;
                        }
                    }
                    case ABORTED -> {
                        rollBackLocally(tx, true);
                        throw new RollbackException(tx, RollbackException.Reason.ORACLE_FAILOVER, "the connection to"
                                + " the oracle was lost while the commit was in flight, and the oracle at "
                                + client.address() + " reports it aborted; run it again", lost);
                    }
                    // Never reached its commit: abort it, then ask again, when the answer can no longer change.
                    case RUNNING -> awaitReply(client.abort(startTs), client, "an abort");
                    case UNKNOWN -> {
                        LOG.warn("the oracle at {} does not know transaction {} (was it restarted without its"
                                + " journal?)", client.address(), startTs);
                        askAgain = false;
                    }
                }
            } catch (CompletionException | OracleException e) {
                LOG.warn("asking the oracle about in-doubt transaction {} failed: {}", startTs, e.toString());
            }
        }
        finished(tx);
        tx.markInDoubt();
        throw new CommitOutcomeUnknownException(tx, lost);
    }
}
