package io.sibyl.oracle;

import io.sibyl.oracle.ha.HaSettings;
import io.sibyl.oracle.journal.JournalSettings;
import io.sibyl.protocol.TlsSettings;

import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;
import java.util.function.Consumer;

import static io.sibyl.oracle.OracleSettings.*;

/**
 * Settings of one status oracle. Every key is declared once, with its default, its allowed values and its meaning, in
 * {@link OracleSettings}: {@link #describe()}, {@link #fromProperties} (a config file or {@code --key=value} flags) and
 * the checks below come from there, and docs/operations.md lists the same keys.
 * The {@code journal.*} keys of the BookKeeper journal are {@link JournalSettings}' (docs/journal.md); they are read
 * and checked whatever {@code journal} says, and used when it is {@code bookkeeper}.
 */
public record OracleConfig(
        String host,
        int port,
        int ioThreads,
        int conflictTableRows,
        int recentCommitsCapacity,
        int maxRunningTransactions,
        int maxWriteSetRows,
        int maxFrameBytes,
        long timestampReservationBlock,
        int maxBlockRecords,
        long pushIntervalMillis,
        long maxLagBytes,
        long readerGraceMillis,
        long statsLogIntervalMillis,
        boolean inlineSequencer,
        JournalKind journal,
        JournalSettings journalSettings,
        HaSettings ha,
        long transactionMaxAgeMillis,
        long handshakeTimeoutMillis,
        int maxConnections,
        int maxRunningTransactionsPerConnection,
        String adminSecretFile,
        int maxAbortedTransactions,
        TlsSettings tls,
        String clientSecretFile,
        long idleTimeoutMillis,
        int metricsHttpPort,
        RangeSweepSettings rangeSweep,
        IdentitySettings identities,
        HistorySettings history) {

    /** Where the oracle journals its decisions ({@code journal} key). */
    public enum JournalKind {
        /** Nothing is kept: decisions are lost with the process (tests, benchmarks of the oracle alone). */
        MEMORY,
        /** Apache BookKeeper ledgers with a registry in ZooKeeper; recovery at startup (docs/journal.md). */
        BOOKKEEPER;

        /** The key's value: {@code memory} or {@code bookkeeper}. */
        public String key() {
            return name().toLowerCase(Locale.ROOT);
        }

        static JournalKind parse(String v) {
            for (JournalKind k : values()) {
                if (k.key().equals(v.trim().toLowerCase(Locale.ROOT))) {
                    return k;
                }
            }
            throw new IllegalArgumentException("must be memory or bookkeeper");
        }
    }

    /**
     * Largest {@code timestamp.reservation.block}: every recovery skips up to one block of timestamps, so a block of
     * 2^32 still leaves 2^23 recoveries in the 2^55 timestamps the wire format carries, and the limit a reservation
     * journals can never overflow.
     */
    public static final long MAX_TIMESTAMP_RESERVATION_BLOCK = 1L << 32;
    /**
     * Largest conflict table, commit window or running-transaction table: each is rounded up to a power of two and
     * hashed into arrays of up to twice that, which must stay below Java's 2^31 array limit.
     */
    public static final int MAX_TABLE_ENTRIES = 1 << 29;
    /** Most I/O threads: far above any core count; a mistyped value would otherwise fail inside Netty. */
    public static final int MAX_IO_THREADS = 1024;
    /** Largest frame: the length prefix and Netty's frame decoder hold an int, and a frame is one buffer. */
    public static final int MAX_FRAME_BYTES = 1 << 30;
    /** Most connections: each needs a file descriptor; beyond this no kernel limit would let them open. */
    public static final int MAX_CONNECTIONS = 1 << 20;
    /** Longest interval setting (a day): intervals are converted to nanoseconds, which must not overflow. */
    public static final long MAX_INTERVAL_MILLIS = 86_400_000L;
    /** {@code metrics.http.port} value that serves no metrics over HTTP (the default). */
    public static final int METRICS_OFF = -1;
    /** Longest transaction.max.age.ms (30 days), for the same reason. */
    public static final long MAX_TRANSACTION_AGE_MILLIS = 30L * 86_400_000L;

    /**
     * Defaults sized for a production oracle: 330 MB of heap for the conflict table, the commit window and the running
     * transactions (docs/operations.md, "What bounds memory"). Each is declared in {@link OracleSettings}.
     */
    public static OracleConfig defaults() {
        return fromProperties(new Properties());
    }

    public OracleConfig {
        PORT.require(port);
        IO_THREADS.require(ioThreads);
        CONFLICT_TABLE_ROWS.require(conflictTableRows);
        RECENT_COMMITS_CAPACITY.require(recentCommitsCapacity);
        MAX_RUNNING_TRANSACTIONS.require(maxRunningTransactions);
        MAX_ABORTED_TRANSACTIONS.require(maxAbortedTransactions);
        MAX_WRITE_SET_ROWS.require(maxWriteSetRows);
        MAX_FRAME_BYTES_SETTING.require(maxFrameBytes);
        TIMESTAMP_RESERVATION_BLOCK.require(timestampReservationBlock);
        MAX_BLOCK_RECORDS.require(maxBlockRecords);
        PUSH_INTERVAL_MS.require(pushIntervalMillis);
        MAX_LAG_BYTES.require(maxLagBytes);
        STATS_LOG_INTERVAL_MS.require(statsLogIntervalMillis);
        READER_GRACE_MS.require(readerGraceMillis);
        TRANSACTION_MAX_AGE_MS.require(transactionMaxAgeMillis);
        HANDSHAKE_TIMEOUT_MS.require(handshakeTimeoutMillis);
        IDLE_TIMEOUT_MS.require(idleTimeoutMillis);
        MAX_CONNECTIONS_SETTING.require(maxConnections);
        METRICS_HTTP_PORT.require(metricsHttpPort);
        MAX_RUNNING_PER_CONNECTION.require(maxRunningTransactionsPerConnection);
        if (tls == null || adminSecretFile == null || clientSecretFile == null) {
            throw new IllegalArgumentException("admin.secret.file, client.secret.file and the TLS settings are"
                    + " required (empty: none)");
        }
        if (journal == null || journalSettings == null || ha == null || rangeSweep == null || identities == null
                || history == null) {
            throw new IllegalArgumentException("journal, journal settings, HA, range sweep, identity and history"
                    + " settings are required");
        }
        if (!identities.adminIdentities().isEmpty() && (!tls.enabled() || tls.trustStore().isEmpty())) {
            // Without client certificates no connection has an identity the oracle verified: nobody could be admin.
            throw new IllegalArgumentException("admin.identities needs tls=true and tls.trust.store: the admin role"
                    + " goes to clients whose certificates name them, and only mutual TLS asks for certificates"
                    + " (see docs/operations.md, Security)");
        }
        if (rangeSweep.enabled() && adminSecretFile.isEmpty()) {
            throw new IllegalArgumentException("range.sweep.tables needs admin.secret.file: the background sweep"
                    + " reports aborted ranges cleaned up with the admin role (see docs/operations.md)");
        }
        if (ha.enabled() && journal != JournalKind.BOOKKEEPER) {
            throw new IllegalArgumentException("ha=true needs journal=bookkeeper (a standby takes over the journal);"
                    + " see docs/operations.md");
        }
    }

    /** A copy with {@code change} made to its settings (the {@code withX} methods). */
    private OracleConfig copy(Consumer<OracleConfigBuilder> change) {
        OracleConfigBuilder b = new OracleConfigBuilder(this);
        change.accept(b);
        return b.build();
    }

    public OracleConfig withPort(int newPort) {
        return copy(b -> b.port = newPort);
    }

    /** Copy with the bounded structures resized (tests use tiny ones to force evictions). */
    public OracleConfig withCapacities(int conflictRows, int recentCommits, int runningTransactions) {
        return copy(b -> {
            b.conflictTableRows = conflictRows;
            b.recentCommitsCapacity = recentCommits;
            b.maxRunningTransactions = runningTransactions;
        });
    }

    public OracleConfig withLimits(int writeSetRows, int frameBytes) {
        return copy(b -> {
            b.maxWriteSetRows = writeSetRows;
            b.maxFrameBytes = frameBytes;
        });
    }

    public OracleConfig withReplication(long pushMillis, long lagBytes) {
        return copy(b -> {
            b.pushIntervalMillis = pushMillis;
            b.maxLagBytes = lagBytes;
        });
    }

    /** Copy whose lost readers are protected for {@code millis} (tests shorten it). */
    public OracleConfig withReaderGrace(long millis) {
        return copy(b -> b.readerGraceMillis = millis);
    }

    /** Copy whose transactions are aborted once they ran {@code millis} (0: never). */
    public OracleConfig withTransactionMaxAge(long millis) {
        return copy(b -> b.transactionMaxAgeMillis = millis);
    }

    /**
     * Copy with the given defences against misbehaving connections: {@code handshakeMillis} for the handshake,
     * {@code connections} open at most, {@code perConnection} running transactions per connection (0: half of
     * max.running.transactions).
     */
    public OracleConfig withConnectionLimits(long handshakeMillis, int connections, int perConnection) {
        return copy(b -> {
            b.handshakeTimeoutMillis = handshakeMillis;
            b.maxConnections = connections;
            b.maxRunningTransactionsPerConnection = perConnection;
        });
    }

    /**
     * Running transactions one connection may hold: {@code max.running.transactions.per.connection}, or half of
     * {@code max.running.transactions} when that is 0 (the default), so that one client leaking transactions leaves
     * the other half to everyone else while a single client process (its threads share one connection) still gets
     * more than it can use. Never more than {@code max.running.transactions}.
     */
    public int runningTransactionsPerConnection() {
        return maxRunningTransactionsPerConnection == 0 ? Math.max(1, maxRunningTransactions / 2)
                : Math.min(maxRunningTransactionsPerConnection, maxRunningTransactions);
    }

    /** Copy with the given threading: I/O threads, and whether a single I/O thread runs the sequencer itself. */
    public OracleConfig withThreads(int threads, boolean inline) {
        return copy(b -> {
            b.ioThreads = threads;
            b.inlineSequencer = inline;
        });
    }

    /** Copy whose admin role is proven with the secret in {@code file} (empty: no connection can be admin). */
    public OracleConfig withAdminSecretFile(String file) {
        return copy(b -> b.adminSecretFile = file);
    }

    /** Copy that refuses begins once {@code limit} aborted transactions wait for their clean-up. */
    public OracleConfig withMaxAbortedTransactions(int limit) {
        return copy(b -> b.maxAbortedTransactions = limit);
    }

    /** Copy whose clients connect with {@code settings}' TLS. */
    public OracleConfig withTls(TlsSettings settings) {
        return copy(b -> b.tls = settings);
    }

    /** Copy whose clients must prove the secret in {@code file} (empty: they need not). */
    public OracleConfig withClientSecretFile(String file) {
        return copy(b -> b.clientSecretFile = file);
    }

    /** Copy that closes client connections idle for {@code millis} holding no transaction (0: never). */
    public OracleConfig withIdleTimeout(long millis) {
        return copy(b -> b.idleTimeoutMillis = millis);
    }

    /** Copy that serves its metrics over HTTP on {@code httpPort} ({@link #METRICS_OFF}: not at all; 0: any port). */
    public OracleConfig withMetricsHttpPort(int httpPort) {
        return copy(b -> b.metricsHttpPort = httpPort);
    }

    /** Copy that sweeps aborted ranges in the background as {@code settings} say (when it leads). */
    public OracleConfig withRangeSweep(RangeSweepSettings settings) {
        return copy(b -> b.rangeSweep = settings);
    }

    /** Copy that names clients and caps what each may hold as {@code settings} say. */
    public OracleConfig withIdentities(IdentitySettings settings) {
        return copy(b -> b.identities = settings);
    }

    /**
     * Running transactions one identity (every connection of one client) may hold. By default never fewer than one
     * connection may hold: a quota raised per connection is not taken back per identity.
     */
    public int runningTransactionsPerIdentity() {
        int perIdentity = identities.runningTransactionsPerIdentity(maxRunningTransactions);
        return identities.maxRunningTransactionsPerIdentity() == 0
                ? Math.max(perIdentity, runningTransactionsPerConnection()) : perIdentity;
    }

    /** Connections one identity may hold open. */
    public int connectionsPerIdentity() {
        return identities.connectionsPerIdentity(maxConnections);
    }

    /** Copy that keeps points of its past for reads of the past as {@code settings} say. */
    public OracleConfig withHistory(HistorySettings settings) {
        return copy(b -> b.history = settings);
    }

    /** Copy with the given high-availability settings. */
    public OracleConfig withHa(HaSettings settings) {
        return copy(b -> b.ha = settings);
    }

    /** Copy that journals to {@code kind} with {@code settings} (used when {@code kind} is BOOKKEEPER). */
    public OracleConfig withJournal(JournalKind kind, JournalSettings settings) {
        return copy(b -> {
            b.journal = kind;
            b.journalSettings = settings;
        });
    }

    /**
     * Reads the keys {@link OracleSettings} declares and the {@code journal.*} keys
     * ({@link JournalSettings#fromProperties}, which rejects unknown ones); missing keys keep their defaults, other unknown keys are an error.
     */
    public static OracleConfig fromProperties(Properties p) {
        SPEC.refuseUnknown(p, key -> !key.startsWith(JournalSettings.PREFIX),
                " and the journal.* settings (so-server --help)");
        return new OracleConfig(HOST.read(p), PORT.read(p), IO_THREADS.read(p), CONFLICT_TABLE_ROWS.read(p),
                RECENT_COMMITS_CAPACITY.read(p), MAX_RUNNING_TRANSACTIONS.read(p), MAX_WRITE_SET_ROWS.read(p),
                MAX_FRAME_BYTES_SETTING.read(p), TIMESTAMP_RESERVATION_BLOCK.read(p), MAX_BLOCK_RECORDS.read(p),
                PUSH_INTERVAL_MS.read(p), MAX_LAG_BYTES.read(p), READER_GRACE_MS.read(p),
                STATS_LOG_INTERVAL_MS.read(p), SEQUENCER_INLINE.read(p), JOURNAL.read(p),
                JournalSettings.fromProperties(p), HaSettings.fromProperties(p), TRANSACTION_MAX_AGE_MS.read(p),
                HANDSHAKE_TIMEOUT_MS.read(p), MAX_CONNECTIONS_SETTING.read(p), MAX_RUNNING_PER_CONNECTION.read(p),
                ADMIN_SECRET_FILE.read(p), MAX_ABORTED_TRANSACTIONS.read(p), tlsOf(p), CLIENT_SECRET_FILE.read(p),
                IDLE_TIMEOUT_MS.read(p), METRICS_HTTP_PORT.read(p), RangeSweepSettings.fromProperties(p),
                IdentitySettings.fromProperties(p), HistorySettings.fromProperties(p));
    }

    private static TlsSettings tlsOf(Properties p) {
        List<String> protocols = Arrays.stream(TLS_PROTOCOLS.read(p).split(",")).map(String::trim)
                .filter(x -> !x.isEmpty()).toList();
        return new TlsSettings(TLS.read(p), TLS_KEY_STORE.read(p), TLS_KEY_STORE_PASSWORD_FILE.read(p),
                TLS_TRUST_STORE.read(p), TLS_TRUST_STORE_PASSWORD_FILE.read(p), protocols, "tls.");
    }

    /**
     * Every setting with its current value and what it is for; with {@code journal=bookkeeper} also the
     * {@code journal.*} settings ({@link JournalSettings#describe()}).
     */
    public Map<String, String> describe() {
        Map<String, String> m = SPEC.describe(this);
        if (journal == JournalKind.BOOKKEEPER) {
            m.putAll(journalSettings.describe());
        }
        return m;
    }
}
