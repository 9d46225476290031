package io.sibyl.client;

import io.sibyl.client.oracle.FixedOracleAddress;
import io.sibyl.client.oracle.OracleClient;
import io.sibyl.client.oracle.OracleConnection;
import io.sibyl.client.oracle.OracleTransport;
import io.sibyl.client.oracle.OracleCredentials;
import io.sibyl.client.oracle.OracleLocator;
import io.sibyl.client.oracle.OracleUnavailableException;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
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
    /**
     * A file holding the oracle's client secret (its {@code client.secret.file}): an oracle that has one serves only
     * connections that prove it. Unset: no proof is sent.
     */
    public static final String CLIENT_SECRET_FILE = "sibyl.client.secret.file";
    /**
     * {@code true}: connect to the oracle with TLS. With it: {@code sibyl.client.tls.trust.store} (certificates of the
     * oracles or their CA; default the JDK's CAs), {@code sibyl.client.tls.key.store} (this client's certificate, for
     * an oracle that requires one), their {@code .password.file}s, and {@code sibyl.client.tls.protocols}
     * (docs/operations.md, Security).
     */
    public static final String TLS = "sibyl.client.tls";
    /**
     * The isolation of {@link #begin()} and {@link #run(Function)}: {@code snapshot} (the default) or
     * {@code serializable} ({@link IsolationLevel}), so that an application or YCSB picks serializability by
     * configuration.
     */
    public static final String ISOLATION = "sibyl.client.isolation";
    /**
     * How stale the snapshot of {@link #beginReadOnly()} may be (default 100 ms): it sees every transaction committed
     * anywhere more than this long before it began, and every one this client committed before it began. A client
     * whose replica is further behind (its oracle silent or unreachable) refreshes it with one begin first, and fails
     * if the oracle does not answer.
     */
    public static final String READ_ONLY_MAX_STALENESS_MS = "sibyl.client.readonly.max.staleness.ms";
    /**
     * Which threads write the requests to the oracle and read its replies: {@code waiting-thread} (the default: the
     * thread that waits for a reply reads it, one thread wake-up less per round trip) or {@code event-loop} (a Netty
     * event loop of the connection, as TLS connections always use), {@link OracleTransport}.
     */
    public static final String ORACLE_TRANSPORT = "sibyl.client.oracle.transport";

    private final Connection connection;
    private final boolean ownsConnection;
    private final OracleConnection oracle;
    private final ClientSettings settings;
    private final AbortCleanup cleanup;
    private final RollbackProtocol rollbacks;
    private final CommitProtocol commits;
    private final ClientMetrics metrics;
    private final RunningTransactions running;
    private final TransactionStarts starts;
    private final ReplicaStarts replicaStarts;
    private final PastStarts pastStarts;
    private final RetryingRunner runner;

    private TransactionManager(Connection connection, boolean ownsConnection, OracleConnection oracle,
                               ClientSettings settings) {
        this.connection = connection;
        this.ownsConnection = ownsConnection;
        this.oracle = oracle;
        this.settings = settings;
        this.cleanup = new AbortCleanup(oracle::lastConnected);
        OracleReplies replies = new OracleReplies(settings.oracleTimeoutMillis());
        this.rollbacks = new RollbackProtocol(cleanup, replies);
        this.commits = new CommitProtocol(oracle, replies, rollbacks);
        this.metrics = new ClientMetrics(oracle::lastConnected);
        this.running = new RunningTransactions(this, rollbacks, settings);
        BeginContext begins = new BeginContext(this, oracle, replies, settings, running);
        this.starts = new TransactionStarts(begins, metrics);
        this.replicaStarts = new ReplicaStarts(begins);
        this.pastStarts = new PastStarts(begins);
        this.runner = new RetryingRunner(this, starts, settings);
    }

    /**
     * This manager's meters (begin and commit latency, rollbacks by reason, replica size): record them into the
     * application's Micrometer registry with {@code metrics().bindTo(registry)}; unbound, nothing is recorded.
     */
    public ClientMetrics metrics() {
        return metrics;
    }

    /**
     * Opens an HBase connection from {@code conf} and connects to the oracle named by {@value #ORACLE_ZK_CONNECT}
     * (HA) or {@value #ORACLE_ADDRESS}.
     */
    public static TransactionManager create(Configuration conf) throws IOException {
        Arguments.required(conf, "configuration", "pass the HBase Configuration, e.g. HBaseConfiguration.create()");
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
        Arguments.required(conf, "configuration", "pass the HBase Configuration, e.g. HBaseConfiguration.create()");
        Arguments.required(oracleHost, "oracle host", "pass the oracle's host name or address, e.g. \"localhost\"");
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
        Arguments.required(connection, "connection", "pass an open HBase Connection, e.g. ConnectionFactory.createConnection(conf)");
        ClientSettings settings = ClientSettings.from(connection.getConfiguration());
        return new TransactionManager(connection, false,
                connectOracle(oracleLocator(connection.getConfiguration()), settings), settings);
    }

    /** Uses an existing HBase connection (not closed by {@link #close()}) and the oracle at the given address. */
    public static TransactionManager create(Connection connection, String oracleHost, int oraclePort)
            throws IOException {
        Arguments.required(connection, "connection", "pass an open HBase Connection, e.g. ConnectionFactory.createConnection(conf)");
        Arguments.required(oracleHost, "oracle host", "pass the oracle's host name or address, e.g. \"localhost\"");
        ClientSettings settings = ClientSettings.from(connection.getConfiguration());
        return new TransactionManager(connection, false,
                connectOracle(new FixedOracleAddress(oracleHost, oraclePort), settings), settings);
    }

    /**
     * The identity and TLS settings {@code conf} gives a process that talks to the oracle ({@value #TLS}.*,
     * {@value #ADMIN_SECRET_FILE}), as a manager would use them; for other processes such as the region-server
     * garbage collector.
     */
    public static OracleCredentials oracleCredentials(Configuration conf) {
        Arguments.required(conf, "configuration", "pass the HBase Configuration, e.g. HBaseConfiguration.create()");
        return ClientSettings.credentials(conf);
    }

    /**
     * The transport {@code conf} names ({@value #ORACLE_TRANSPORT}), as a manager would use it; for other processes that
     * talk to the oracle, such as the region-server garbage collector.
     */
    public static OracleTransport oracleTransport(Configuration conf) {
        Arguments.required(conf, "configuration", "pass the HBase Configuration, e.g. HBaseConfiguration.create()");
        return ClientSettings.ORACLE_TRANSPORT.read(conf::getTrimmed);
    }

    /**
     * The oracle lookup {@code conf} names ({@value #ORACLE_ZK_CONNECT} or {@value #ORACLE_ADDRESS}), as a manager
     * would use it; for other processes that follow the oracle, such as the region-server garbage collector.
     */
    public static OracleLocator oracleLocator(Configuration conf) throws IOException {
        Arguments.required(conf, "configuration", "pass the HBase Configuration, e.g. HBaseConfiguration.create()");
        return OracleLocators.fromConfiguration(conf);
    }

    private static OracleConnection connectOracle(OracleLocator locator, ClientSettings settings) {
        return OracleConnection.open(locator, settings.failoverTimeoutMillis(), FAILOVER_TIMEOUT_MS,
                settings.credentials(), settings.oracleTransport());
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
        return begin(settings.isolation());
    }

    /**
     * Starts a transaction at {@code isolation}: {@link IsolationLevel#SERIALIZABLE} certifies its reads at commit
     * (no extra round trip; {@link RollbackException.Reason#READ_CONFLICT} when another transaction wrote what it read
     * since it began).
     *
     * @throws OracleUnavailableException if no oracle answered within the failover timeout
     */
    public Transaction begin(IsolationLevel isolation) {
        Arguments.required(isolation, "isolation level", "use IsolationLevel.SNAPSHOT or SERIALIZABLE");
        return starts.readWrite(isolation);
    }

    /**
     * Starts a read-only transaction with no round trip to the oracle: its snapshot is taken from this client's
     * replica of the commit metadata. It is a consistent snapshot (it sees exactly the transactions committed up to
     * some point, and never a later one); it includes every transaction this client committed before this call, and
     * every transaction committed anywhere more than {@value #READ_ONLY_MAX_STALENESS_MS} (default 100 ms) before it.
     * Writes are refused; {@link #commit} and {@link #rollback} end it without the oracle. Serializable writers are
     * serializable with it too: it reads at a point of their commit order. If the replica is staler than the bound
     * (an idle client, an oracle that went silent), this waits for one begin to bring it up to date.
     *
     * @throws OracleUnavailableException if the replica is staler than the bound and no oracle answered within the
     *                                    failover timeout: never an older snapshot than the bound allows
     */
    public Transaction beginReadOnly() {
        return replicaStarts.readOnly();
    }

    /**
     * Starts a read-only transaction that reads the database as it was at {@code timestamp}: exactly the transactions
     * committed at or below it (and the single-row writes at or below it), as a transaction begun just after it would
     * have. Timestamps come from transactions ({@link Transaction#getStartTimestamp()},
     * {@link Transaction#getCommitTimestamp()}). The oracle must keep that part of its history
     * ({@code history.retention.ms}); garbage collection spares what it reads. Writes are refused; it ends, like a
     * read-only transaction, with {@link #commit} or {@link #rollback}, and within the oracle's
     * {@code transaction.max.age.ms} (an hour without one). One round trip to the oracle.
     *
     * @throws HistoryUnavailableException if the oracle keeps no history that far back (or none at all), or the
     *                                     timestamp was not handed out yet; the message names the setting
     * @throws OracleUnavailableException  if no oracle answered within the failover timeout
     */
    public Transaction beginAt(long timestamp) {
        return pastStarts.atTimestamp(timestamp);
    }

    /**
     * Starts a read-only transaction that reads the database as it was at wall-clock {@code time} (by the oracle's
     * clock): every transaction whose commit the oracle decided by then, no later one. Otherwise as
     * {@link #beginAt(long)}; {@link Transaction#getStartTimestamp()} then tells the timestamp read at.
     *
     * @throws HistoryUnavailableException if the oracle keeps no history that far back (or none), or the time is in
     *                                     its future; the message names the setting
     * @throws OracleUnavailableException  if no oracle answered within the failover timeout
     */
    public Transaction beginAt(java.time.Instant time) {
        return pastStarts.atTime(time);
    }

    /** A transaction that reads one row's latest committed state, with no round trip in the common case. */
    HBaseTransaction beginLatestRow() {
        return starts.latestRow();
    }

    /**
     * Commits: sends the buffered writes to HBase, then asks the oracle (one round trip) with the rows written in
     * every table. A transaction that wrote nothing commits locally with no round trip.
     *
     * @throws RollbackException if the transaction could not commit; it is then rolled back and its versions removed
     * @throws CommitOutcomeUnknownException if the oracle connection was lost while the request was in flight
     */
    public void commit(Transaction tx) throws RollbackException {
        HBaseTransaction own = checkOwn(tx);
        own.checkNotFinished();
        claim(own, TransactionPhase.COMMITTING);
        try {
            metrics.timeCommit(() -> commits.commit(own));
        } finally {
            own.releaseClaim();
        }
    }

    /** Takes the transaction's commit-or-rollback claim, or says that another thread holds it. */
    private static void claim(HBaseTransaction tx, TransactionPhase claim) {
        if (!tx.claim(claim)) {
            throw new IllegalStateException("transaction " + tx.getStartTimestamp() + " is being committed or rolled"
                    + " back by another thread");
        }
    }

    /**
     * Rolls back: discards buffered writes, and if some writes already reached HBase, aborts at the oracle, deletes
     * those versions and reports the clean-up. Rolling back a rolled-back transaction does nothing. A transaction
     * whose commit outcome is unknown ({@link CommitOutcomeUnknownException}) cannot be rolled back: it may have
     * committed, so its writes stay.
     */
    public void rollback(Transaction tx) {
        HBaseTransaction own = checkOwn(tx);
        if (own.getStatus() == Transaction.Status.ROLLED_BACK) {
            return;
        }
        if (own.getStatus() == Transaction.Status.COMMITTED) {
            throw new IllegalStateException("transaction " + tx.getStartTimestamp()
                    + " is already committed and cannot be rolled back");
        }
        if (own.isInDoubt()) {
            throw new IllegalStateException("transaction " + tx.getStartTimestamp() + " cannot be rolled back: its"
                    + " commit outcome is unknown (it may have committed), so its writes are left in place; read the"
                    + " data to find out");
        }
        claim(own, TransactionPhase.ROLLING_BACK);
        try {
            rollbacks.rollBack(own, TransactionPhase.ROLLED_BACK);
        } finally {
            own.releaseClaim();
        }
    }

    /** A single-row transaction of this client was committed by its region server (the fast path), just now. */
    void fastPathCommitted() {
        replicaStarts.fastPathCommitted();
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
        return run(settings.isolation(), work);
    }

    /** As {@link #run(Function)}, each attempt at {@code isolation} (read conflicts are retried too). */
    public <T> T run(IsolationLevel isolation, Function<Transaction, T> work) throws RollbackException {
        Arguments.required(isolation, "isolation level", "use IsolationLevel.SNAPSHOT or SERIALIZABLE");
        Arguments.required(work, "work", "pass the function to run in each attempt's transaction");
        return runner.run(isolation, work);
    }

    /**
     * Lets commits under way on other threads finish (for at most {@value #ORACLE_TIMEOUT_MS}), rolls back every
     * transaction still running, closes the oracle connection, and the HBase connection if this manager opened it.
     * Idempotent.
     */
    @Override
    public void close() {
        if (!running.close()) {
            return;
        }
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
        return running.isClosed();
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
        running.checkOpen();
    }

    private HBaseTransaction checkOwn(Transaction tx) {
        HBaseTransaction own = HBaseTransaction.of(tx);
        if (own.manager() != this) {
            throw new IllegalArgumentException("transaction " + tx.getStartTimestamp()
                    + " was begun by another TransactionManager");
        }
        return own;
    }

    /** The transaction reached an outcome: close() no longer needs to roll it back or wait for it. */
    void forget(HBaseTransaction tx) {
        running.forget(tx);
    }
}
