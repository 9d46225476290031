package io.sibyl.oracle;

import io.sibyl.oracle.ha.HaSettings;
import io.sibyl.oracle.journal.JournalSettings;
import io.sibyl.protocol.TlsSettings;

import java.util.LinkedHashMap;
import java.util.Locale;
import java.util.Map;
import java.util.Properties;

/**
 * Settings of one status oracle. Every key, its default and its meaning are listed by {@link #describe()} and in
 * docs/operations.md; {@link #fromProperties} reads the same keys from a config file or {@code --key=value} flags.
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
            throw new IllegalArgumentException("setting 'journal' must be memory or bookkeeper, got '" + v + "'");
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
     * transactions (docs/operations.md, "What bounds memory").
     */
    public static OracleConfig defaults() {
        return new OracleConfig("0.0.0.0", 24680, 1, 16 << 20, 1 << 20, 1 << 20, 1 << 20, 16 << 20,
                1_000_000, 4096, 1000, 64L << 20, 60_000, 60_000, true, JournalKind.MEMORY, JournalSettings.defaults(),
                HaSettings.defaults(), 3_600_000, 10_000, 4096, 0, "", 1 << 17,
                TlsSettings.disabled("tls."), "", 600_000, METRICS_OFF, RangeSweepSettings.defaults(), IdentitySettings.defaults(), HistorySettings.defaults());
    }

    public OracleConfig {
        require(port >= 0 && port <= 65535, "port", port, "0 to 65535");
        require(ioThreads >= 1 && ioThreads <= MAX_IO_THREADS, "io.threads", ioThreads, "1 to " + MAX_IO_THREADS);
        requireTable(conflictTableRows, 8, "conflict.table.rows");
        requireTable(recentCommitsCapacity, 2, "recent.commits.capacity");
        requireTable(maxRunningTransactions, 2, "max.running.transactions");
        requireTable(maxAbortedTransactions, 1, "max.aborted.transactions");
        require(maxWriteSetRows >= 1, "max.write.set.rows", maxWriteSetRows, "at least 1");
        require(maxFrameBytes >= 1024 && maxFrameBytes <= MAX_FRAME_BYTES, "max.frame.bytes", maxFrameBytes,
                "1024 to " + MAX_FRAME_BYTES);
        require(timestampReservationBlock >= 1 && timestampReservationBlock <= MAX_TIMESTAMP_RESERVATION_BLOCK,
                "timestamp.reservation.block", timestampReservationBlock, "1 to " + MAX_TIMESTAMP_RESERVATION_BLOCK);
        require(maxBlockRecords >= 1, "max.block.records", maxBlockRecords, "at least 1");
        require(pushIntervalMillis >= 1 && pushIntervalMillis <= MAX_INTERVAL_MILLIS, "push.interval.ms",
                pushIntervalMillis, "1 to " + MAX_INTERVAL_MILLIS);
        require(maxLagBytes >= 1024 && maxLagBytes <= Integer.MAX_VALUE, "max.lag.bytes", maxLagBytes,
                "1024 to " + Integer.MAX_VALUE);
        require(statsLogIntervalMillis >= 0 && statsLogIntervalMillis <= MAX_INTERVAL_MILLIS,
                "stats.log.interval.ms", statsLogIntervalMillis, "0 (never) to " + MAX_INTERVAL_MILLIS);
        require(readerGraceMillis >= 100 && readerGraceMillis <= 3_600_000, "reader.grace.ms", readerGraceMillis,
                "100 to 3600000");
        require(transactionMaxAgeMillis == 0 || transactionMaxAgeMillis >= 1000
                        && transactionMaxAgeMillis <= MAX_TRANSACTION_AGE_MILLIS, "transaction.max.age.ms",
                transactionMaxAgeMillis, "0 (no limit) or 1000 to " + MAX_TRANSACTION_AGE_MILLIS);
        require(handshakeTimeoutMillis >= 1 && handshakeTimeoutMillis <= 3_600_000, "handshake.timeout.ms",
                handshakeTimeoutMillis, "1 to 3600000");
        require(idleTimeoutMillis == 0 || idleTimeoutMillis >= 1000 && idleTimeoutMillis <= MAX_INTERVAL_MILLIS,
                "idle.timeout.ms", idleTimeoutMillis, "0 (never) or 1000 to " + MAX_INTERVAL_MILLIS);
        require(maxConnections >= 1 && maxConnections <= MAX_CONNECTIONS, "max.connections", maxConnections,
                "1 to " + MAX_CONNECTIONS);
        require(metricsHttpPort >= METRICS_OFF && metricsHttpPort <= 65535, "metrics.http.port", metricsHttpPort,
                METRICS_OFF + " (off), 0 (pick a free port) or 1 to 65535");
        require(maxRunningTransactionsPerConnection >= 0, "max.running.transactions.per.connection",
                maxRunningTransactionsPerConnection, "0 (half of max.running.transactions) or more");
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

    /** A table sized from {@code key} must fit Java arrays: the code rounds sizes up to twice a power of two. */
    private static void requireTable(int size, int least, String key) {
        require(size >= least && size <= MAX_TABLE_ENTRIES, key, size, least + " to " + MAX_TABLE_ENTRIES);
    }

    private static void require(boolean ok, String key, long value, String rule) {
        if (!ok) {
            throw new IllegalArgumentException("invalid value " + value + " for " + key + ": must be " + rule
                    + " (see docs/operations.md)");
        }
    }

    public OracleConfig withPort(int newPort) {
        return new OracleConfig(host, newPort, ioThreads, conflictTableRows, recentCommitsCapacity,
                maxRunningTransactions, maxWriteSetRows, maxFrameBytes, timestampReservationBlock, maxBlockRecords,
                pushIntervalMillis, maxLagBytes, readerGraceMillis, statsLogIntervalMillis, inlineSequencer, journal, journalSettings, ha, transactionMaxAgeMillis,
                handshakeTimeoutMillis, maxConnections, maxRunningTransactionsPerConnection, adminSecretFile,
                maxAbortedTransactions, tls, clientSecretFile, idleTimeoutMillis, metricsHttpPort, rangeSweep, identities, history);
    }

    /** Copy with the bounded structures resized (tests use tiny ones to force evictions). */
    public OracleConfig withCapacities(int conflictRows, int recentCommits, int runningTransactions) {
        return new OracleConfig(host, port, ioThreads, conflictRows, recentCommits, runningTransactions,
                maxWriteSetRows, maxFrameBytes, timestampReservationBlock, maxBlockRecords, pushIntervalMillis,
                maxLagBytes, readerGraceMillis, statsLogIntervalMillis, inlineSequencer, journal, journalSettings, ha, transactionMaxAgeMillis,
                handshakeTimeoutMillis, maxConnections, maxRunningTransactionsPerConnection, adminSecretFile,
                maxAbortedTransactions, tls, clientSecretFile, idleTimeoutMillis, metricsHttpPort, rangeSweep, identities, history);
    }

    public OracleConfig withLimits(int writeSetRows, int frameBytes) {
        return new OracleConfig(host, port, ioThreads, conflictTableRows, recentCommitsCapacity,
                maxRunningTransactions, writeSetRows, frameBytes, timestampReservationBlock, maxBlockRecords,
                pushIntervalMillis, maxLagBytes, readerGraceMillis, statsLogIntervalMillis, inlineSequencer, journal, journalSettings, ha, transactionMaxAgeMillis,
                handshakeTimeoutMillis, maxConnections, maxRunningTransactionsPerConnection, adminSecretFile,
                maxAbortedTransactions, tls, clientSecretFile, idleTimeoutMillis, metricsHttpPort, rangeSweep, identities, history);
    }

    public OracleConfig withReplication(long pushMillis, long lagBytes) {
        return new OracleConfig(host, port, ioThreads, conflictTableRows, recentCommitsCapacity,
                maxRunningTransactions, maxWriteSetRows, maxFrameBytes, timestampReservationBlock, maxBlockRecords,
                pushMillis, lagBytes, readerGraceMillis, statsLogIntervalMillis, inlineSequencer, journal, journalSettings, ha, transactionMaxAgeMillis,
                handshakeTimeoutMillis, maxConnections, maxRunningTransactionsPerConnection, adminSecretFile,
                maxAbortedTransactions, tls, clientSecretFile, idleTimeoutMillis, metricsHttpPort, rangeSweep, identities, history);
    }

    /** Copy whose lost readers are protected for {@code millis} (tests shorten it). */
    public OracleConfig withReaderGrace(long millis) {
        return new OracleConfig(host, port, ioThreads, conflictTableRows, recentCommitsCapacity,
                maxRunningTransactions, maxWriteSetRows, maxFrameBytes, timestampReservationBlock, maxBlockRecords,
                pushIntervalMillis, maxLagBytes, millis, statsLogIntervalMillis, inlineSequencer, journal, journalSettings, ha, transactionMaxAgeMillis,
                handshakeTimeoutMillis, maxConnections, maxRunningTransactionsPerConnection, adminSecretFile,
                maxAbortedTransactions, tls, clientSecretFile, idleTimeoutMillis, metricsHttpPort, rangeSweep, identities, history);
    }

    /** Copy whose transactions are aborted once they ran {@code millis} (0: never). */
    public OracleConfig withTransactionMaxAge(long millis) {
        return new OracleConfig(host, port, ioThreads, conflictTableRows, recentCommitsCapacity,
                maxRunningTransactions, maxWriteSetRows, maxFrameBytes, timestampReservationBlock, maxBlockRecords,
                pushIntervalMillis, maxLagBytes, readerGraceMillis, statsLogIntervalMillis, inlineSequencer, journal,
                journalSettings, ha, millis, handshakeTimeoutMillis, maxConnections,
                maxRunningTransactionsPerConnection, adminSecretFile, maxAbortedTransactions, tls, clientSecretFile, idleTimeoutMillis, metricsHttpPort, rangeSweep, identities, history);
    }

    /**
     * Copy with the given defences against misbehaving connections: {@code handshakeMillis} for the handshake,
     * {@code connections} open at most, {@code perConnection} running transactions per connection (0: half of
     * max.running.transactions).
     */
    public OracleConfig withConnectionLimits(long handshakeMillis, int connections, int perConnection) {
        return new OracleConfig(host, port, ioThreads, conflictTableRows, recentCommitsCapacity,
                maxRunningTransactions, maxWriteSetRows, maxFrameBytes, timestampReservationBlock, maxBlockRecords,
                pushIntervalMillis, maxLagBytes, readerGraceMillis, statsLogIntervalMillis, inlineSequencer, journal,
                journalSettings, ha, transactionMaxAgeMillis, handshakeMillis, connections, perConnection,
                adminSecretFile, maxAbortedTransactions, tls, clientSecretFile, idleTimeoutMillis, metricsHttpPort, rangeSweep, identities, history);
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
        return new OracleConfig(host, port, threads, conflictTableRows, recentCommitsCapacity, maxRunningTransactions,
                maxWriteSetRows, maxFrameBytes, timestampReservationBlock, maxBlockRecords, pushIntervalMillis,
                maxLagBytes, readerGraceMillis, statsLogIntervalMillis, inline, journal, journalSettings, ha, transactionMaxAgeMillis,
                handshakeTimeoutMillis, maxConnections, maxRunningTransactionsPerConnection, adminSecretFile,
                maxAbortedTransactions, tls, clientSecretFile, idleTimeoutMillis, metricsHttpPort, rangeSweep, identities, history);
    }

    /** Copy whose admin role is proven with the secret in {@code file} (empty: no connection can be admin). */
    public OracleConfig withAdminSecretFile(String file) {
        return new OracleConfig(host, port, ioThreads, conflictTableRows, recentCommitsCapacity,
                maxRunningTransactions, maxWriteSetRows, maxFrameBytes, timestampReservationBlock, maxBlockRecords,
                pushIntervalMillis, maxLagBytes, readerGraceMillis, statsLogIntervalMillis, inlineSequencer, journal,
                journalSettings, ha, transactionMaxAgeMillis, handshakeTimeoutMillis, maxConnections,
                maxRunningTransactionsPerConnection, file, maxAbortedTransactions, tls, clientSecretFile, idleTimeoutMillis, metricsHttpPort, rangeSweep, identities, history);
    }

    /** Copy that refuses begins once {@code limit} aborted transactions wait for their clean-up. */
    public OracleConfig withMaxAbortedTransactions(int limit) {
        return new OracleConfig(host, port, ioThreads, conflictTableRows, recentCommitsCapacity,
                maxRunningTransactions, maxWriteSetRows, maxFrameBytes, timestampReservationBlock, maxBlockRecords,
                pushIntervalMillis, maxLagBytes, readerGraceMillis, statsLogIntervalMillis, inlineSequencer, journal,
                journalSettings, ha, transactionMaxAgeMillis, handshakeTimeoutMillis, maxConnections,
                maxRunningTransactionsPerConnection, adminSecretFile, limit, tls, clientSecretFile,
                idleTimeoutMillis, metricsHttpPort, rangeSweep, identities, history);
    }

    /** Copy whose clients connect with {@code settings}' TLS. */
    public OracleConfig withTls(TlsSettings settings) {
        return new OracleConfig(host, port, ioThreads, conflictTableRows, recentCommitsCapacity,
                maxRunningTransactions, maxWriteSetRows, maxFrameBytes, timestampReservationBlock, maxBlockRecords,
                pushIntervalMillis, maxLagBytes, readerGraceMillis, statsLogIntervalMillis, inlineSequencer, journal,
                journalSettings, ha, transactionMaxAgeMillis, handshakeTimeoutMillis, maxConnections,
                maxRunningTransactionsPerConnection, adminSecretFile, maxAbortedTransactions, settings,
                clientSecretFile, idleTimeoutMillis, metricsHttpPort, rangeSweep, identities, history);
    }

    /** Copy whose clients must prove the secret in {@code file} (empty: they need not). */
    public OracleConfig withClientSecretFile(String file) {
        return new OracleConfig(host, port, ioThreads, conflictTableRows, recentCommitsCapacity,
                maxRunningTransactions, maxWriteSetRows, maxFrameBytes, timestampReservationBlock, maxBlockRecords,
                pushIntervalMillis, maxLagBytes, readerGraceMillis, statsLogIntervalMillis, inlineSequencer, journal,
                journalSettings, ha, transactionMaxAgeMillis, handshakeTimeoutMillis, maxConnections,
                maxRunningTransactionsPerConnection, adminSecretFile, maxAbortedTransactions, tls, file,
                idleTimeoutMillis, metricsHttpPort, rangeSweep, identities, history);
    }

    /** Copy that closes client connections idle for {@code millis} holding no transaction (0: never). */
    public OracleConfig withIdleTimeout(long millis) {
        return new OracleConfig(host, port, ioThreads, conflictTableRows, recentCommitsCapacity,
                maxRunningTransactions, maxWriteSetRows, maxFrameBytes, timestampReservationBlock, maxBlockRecords,
                pushIntervalMillis, maxLagBytes, readerGraceMillis, statsLogIntervalMillis, inlineSequencer, journal,
                journalSettings, ha, transactionMaxAgeMillis, handshakeTimeoutMillis, maxConnections,
                maxRunningTransactionsPerConnection, adminSecretFile, maxAbortedTransactions, tls, clientSecretFile,
                millis, metricsHttpPort, rangeSweep, identities, history);
    }

    /** Copy that serves its metrics over HTTP on {@code httpPort} ({@link #METRICS_OFF}: not at all; 0: any port). */
    public OracleConfig withMetricsHttpPort(int httpPort) {
        return new OracleConfig(host, port, ioThreads, conflictTableRows, recentCommitsCapacity,
                maxRunningTransactions, maxWriteSetRows, maxFrameBytes, timestampReservationBlock, maxBlockRecords,
                pushIntervalMillis, maxLagBytes, readerGraceMillis, statsLogIntervalMillis, inlineSequencer, journal,
                journalSettings, ha, transactionMaxAgeMillis, handshakeTimeoutMillis, maxConnections,
                maxRunningTransactionsPerConnection, adminSecretFile, maxAbortedTransactions, tls, clientSecretFile,
                idleTimeoutMillis, httpPort, rangeSweep, identities, history);
    }

    /** Copy that sweeps aborted ranges in the background as {@code settings} say (when it leads). */
    public OracleConfig withRangeSweep(RangeSweepSettings settings) {
        return new OracleConfig(host, port, ioThreads, conflictTableRows, recentCommitsCapacity,
                maxRunningTransactions, maxWriteSetRows, maxFrameBytes, timestampReservationBlock, maxBlockRecords,
                pushIntervalMillis, maxLagBytes, readerGraceMillis, statsLogIntervalMillis, inlineSequencer, journal,
                journalSettings, ha, transactionMaxAgeMillis, handshakeTimeoutMillis, maxConnections,
                maxRunningTransactionsPerConnection, adminSecretFile, maxAbortedTransactions, tls, clientSecretFile,
                idleTimeoutMillis, metricsHttpPort, settings, identities, history);
    }

    /** Copy that names clients and caps what each may hold as {@code settings} say. */
    public OracleConfig withIdentities(IdentitySettings settings) {
        return new OracleConfig(host, port, ioThreads, conflictTableRows, recentCommitsCapacity,
                maxRunningTransactions, maxWriteSetRows, maxFrameBytes, timestampReservationBlock, maxBlockRecords,
                pushIntervalMillis, maxLagBytes, readerGraceMillis, statsLogIntervalMillis, inlineSequencer, journal,
                journalSettings, ha, transactionMaxAgeMillis, handshakeTimeoutMillis, maxConnections,
                maxRunningTransactionsPerConnection, adminSecretFile, maxAbortedTransactions, tls, clientSecretFile,
                idleTimeoutMillis, metricsHttpPort, rangeSweep, settings, history);
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
        return new OracleConfig(host, port, ioThreads, conflictTableRows, recentCommitsCapacity,
                maxRunningTransactions, maxWriteSetRows, maxFrameBytes, timestampReservationBlock, maxBlockRecords,
                pushIntervalMillis, maxLagBytes, readerGraceMillis, statsLogIntervalMillis, inlineSequencer, journal,
                journalSettings, ha, transactionMaxAgeMillis, handshakeTimeoutMillis, maxConnections,
                maxRunningTransactionsPerConnection, adminSecretFile, maxAbortedTransactions, tls, clientSecretFile,
                idleTimeoutMillis, metricsHttpPort, rangeSweep, identities, settings);
    }

    /** Copy with the given high-availability settings. */
    public OracleConfig withHa(HaSettings settings) {
        return new OracleConfig(host, port, ioThreads, conflictTableRows, recentCommitsCapacity,
                maxRunningTransactions, maxWriteSetRows, maxFrameBytes, timestampReservationBlock, maxBlockRecords,
                pushIntervalMillis, maxLagBytes, readerGraceMillis, statsLogIntervalMillis, inlineSequencer, journal, journalSettings, settings, transactionMaxAgeMillis,
                handshakeTimeoutMillis, maxConnections, maxRunningTransactionsPerConnection, adminSecretFile,
                maxAbortedTransactions, tls, clientSecretFile, idleTimeoutMillis, metricsHttpPort, rangeSweep, identities, history);
    }

    /** Copy that journals to {@code kind} with {@code settings} (used when {@code kind} is BOOKKEEPER). */
    public OracleConfig withJournal(JournalKind kind, JournalSettings settings) {
        return new OracleConfig(host, port, ioThreads, conflictTableRows, recentCommitsCapacity,
                maxRunningTransactions, maxWriteSetRows, maxFrameBytes, timestampReservationBlock, maxBlockRecords,
                pushIntervalMillis, maxLagBytes, readerGraceMillis, statsLogIntervalMillis, inlineSequencer, kind, settings, ha, transactionMaxAgeMillis,
                handshakeTimeoutMillis, maxConnections, maxRunningTransactionsPerConnection, adminSecretFile,
                maxAbortedTransactions, tls, clientSecretFile, idleTimeoutMillis, metricsHttpPort, rangeSweep, identities, history);
    }

    /**
     * Reads the keys of {@link #describe()} and the {@code journal.*} keys ({@link JournalSettings#fromProperties},
     * which rejects unknown ones); missing keys keep their defaults, other unknown keys are an error.
     */
    public static OracleConfig fromProperties(Properties p) {
        OracleConfig d = defaults();
        Map<String, String> known = d.describe();
        for (String key : p.stringPropertyNames()) {
            if (!known.containsKey(key) && !key.startsWith(JournalSettings.PREFIX)) {
                throw new IllegalArgumentException("unknown oracle setting '" + key + "'; known settings: "
                        + known.keySet() + " and the journal.* settings (so-server --help)");
            }
        }
        JournalSettings journalSettings = JournalSettings.fromProperties(p);
        String journalKey = p.getProperty("journal");
        return new OracleConfig(
                p.getProperty("host", d.host),
                intOf(p, "port", d.port),
                intOf(p, "io.threads", d.ioThreads),
                intOf(p, "conflict.table.rows", d.conflictTableRows),
                intOf(p, "recent.commits.capacity", d.recentCommitsCapacity),
                intOf(p, "max.running.transactions", d.maxRunningTransactions),
                intOf(p, "max.write.set.rows", d.maxWriteSetRows),
                intOf(p, "max.frame.bytes", d.maxFrameBytes),
                longOf(p, "timestamp.reservation.block", d.timestampReservationBlock),
                intOf(p, "max.block.records", d.maxBlockRecords),
                longOf(p, "push.interval.ms", d.pushIntervalMillis),
                longOf(p, "max.lag.bytes", d.maxLagBytes),
                longOf(p, "reader.grace.ms", d.readerGraceMillis),
                longOf(p, "stats.log.interval.ms", d.statsLogIntervalMillis),
                boolOf(p, "sequencer.inline", d.inlineSequencer),
                journalKey == null ? d.journal : JournalKind.parse(journalKey),
                journalSettings,
                new HaSettings(boolOf(p, "ha", d.ha.enabled()), p.getProperty("advertised.host", d.ha.advertisedHost()),
                        longOf(p, "ha.tail.interval.ms", d.ha.tailIntervalMs())),
                longOf(p, "transaction.max.age.ms", d.transactionMaxAgeMillis),
                longOf(p, "handshake.timeout.ms", d.handshakeTimeoutMillis),
                intOf(p, "max.connections", d.maxConnections),
                intOf(p, "max.running.transactions.per.connection", d.maxRunningTransactionsPerConnection),
                p.getProperty("admin.secret.file", d.adminSecretFile).trim(),
                intOf(p, "max.aborted.transactions", d.maxAbortedTransactions),
                tlsOf(p),
                p.getProperty("client.secret.file", d.clientSecretFile).trim(),
                longOf(p, "idle.timeout.ms", d.idleTimeoutMillis),
                intOf(p, "metrics.http.port", d.metricsHttpPort),
                new RangeSweepSettings(p.getProperty("range.sweep.tables", d.rangeSweep.tables()),
                        p.getProperty("range.sweep.exclude", d.rangeSweep.excluded()),
                        longOf(p, "range.sweep.settle.ms", d.rangeSweep.settleMillis()),
                        longOf(p, "range.sweep.interval.ms", d.rangeSweep.intervalMillis()),
                        p.getProperty("range.sweep.hbase.site", d.rangeSweep.hbaseSite())),
                IdentitySettings.fromProperties(p, (key, dflt) -> intOf(p, key, dflt)),
                historyOf(p, d.history));
    }

    private static HistorySettings historyOf(Properties p, HistorySettings d) {
        return new HistorySettings(longOf(p, "history.retention.ms", d.retentionMillis()),
                longOf(p, "history.interval.ms", d.intervalMillis()), longOf(p, "history.max.bytes", d.maxBytes()));
    }

    private static TlsSettings tlsOf(Properties p) {
        String protocols = p.getProperty("tls.protocols", String.join(",", TlsSettings.DEFAULT_PROTOCOLS));
        return new TlsSettings(boolOf(p, "tls", false), p.getProperty("tls.key.store", "").trim(),
                p.getProperty("tls.key.store.password.file", "").trim(), p.getProperty("tls.trust.store", "").trim(),
                p.getProperty("tls.trust.store.password.file", "").trim(),
                java.util.Arrays.stream(protocols.split(",")).map(String::trim).filter(x -> !x.isEmpty()).toList(),
                "tls.");
    }

    private static boolean boolOf(Properties p, String key, boolean dflt) {
        String v = p.getProperty(key);
        if (v == null) {
            return dflt;
        }
        return switch (v.trim().toLowerCase(java.util.Locale.ROOT)) {
            case "true", "yes", "1" -> true;
            case "false", "no", "0" -> false;
            default -> throw new IllegalArgumentException("setting '" + key + "' must be true or false, got '" + v + "'");
        };
    }

    private static int intOf(Properties p, String key, int dflt) {
        long v = longOf(p, key, dflt);
        if (v != (int) v) {
            // A silent cast would turn 4294967296 into 0 and pass the range checks with a value nobody asked for.
            throw new IllegalArgumentException("setting '" + key + "' must be at most " + Integer.MAX_VALUE + ", got '"
                    + p.getProperty(key) + "'");
        }
        return (int) v;
    }

    private static long longOf(Properties p, String key, long dflt) {
        String v = p.getProperty(key);
        if (v == null) {
            return dflt;
        }
        try {
            return Long.parseLong(v.trim().replace("_", ""));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("setting '" + key + "' must be a whole number, got '" + v + "'");
        }
    }

    /**
     * Every setting with its current value and what it is for; with {@code journal=bookkeeper} also the
     * {@code journal.*} settings ({@link JournalSettings#describe()}).
     */
    public Map<String, String> describe() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("host", host + "  # address to listen on");
        m.put("port", port + "  # TCP port for clients (0 = pick a free one)");
        m.put("io.threads", ioThreads + "  # Netty event-loop threads that decode and encode frames");
        m.put("conflict.table.rows", conflictTableRows + "  # rows whose last commit timestamp is remembered (16 B each)");
        m.put("recent.commits.capacity", recentCommitsCapacity + "  # commits remembered above T_max (commit queries)");
        m.put("max.running.transactions", maxRunningTransactions + "  # started-but-unfinished transactions kept");
        m.put("max.running.transactions.per.connection", maxRunningTransactionsPerConnection + "  # running"
                + " transactions one connection may hold (0 = half of max.running.transactions, now "
                + runningTransactionsPerConnection() + "); its begins beyond it are refused, other connections'"
                + " are not");
        m.put("max.running.transactions.per.identity", identities.maxRunningTransactionsPerIdentity() + "  # running"
                + " transactions one identity (a client certificate's, or a client's token: all its connections"
                + " together) may hold (0 = half of max.running.transactions, at least the per-connection limit, now " + runningTransactionsPerIdentity()
                + "); its begins beyond it are refused, other identities' are not");
        m.put("max.write.set.rows", maxWriteSetRows + "  # largest write set one commit may carry");
        m.put("max.frame.bytes", maxFrameBytes + "  # largest frame a client may send");
        m.put("timestamp.reservation.block", timestampReservationBlock + "  # timestamps reserved per journal write");
        m.put("max.block.records", maxBlockRecords + "  # requests decided per block before it is sealed and its replies released");
        m.put("max.connections", maxConnections + "  # open connections (clients, region servers, sweepers,"
                + " standbys); a connection beyond it gets an error and is closed");
        m.put("max.connections.per.identity", identities.maxConnectionsPerIdentity() + "  # open connections of one"
                + " identity (0 = half of max.connections, now " + connectionsPerIdentity() + "); a connection beyond"
                + " it gets an error and is closed, other identities' are not");
        m.put("max.aborted.transactions", maxAbortedTransactions + "  # aborted transactions kept until swept;"
                + " at the limit new begins are refused until bin/sibyl-sweep reports some cleaned up");
        m.put("tls", tls.enabled() + "  # clients connect with TLS (and, with tls.trust.store, present a"
                + " certificate it trusts); plaintext is refused");
        m.put("tls.key.store", tls.keyStore() + "  # the oracle's certificate and private key (PKCS12 or JKS)");
        m.put("tls.key.store.password.file", tls.keyStorePasswordFile() + "  # file holding its password");
        m.put("tls.trust.store", tls.trustStore() + "  # certificates of the clients (or their CAs) accepted;"
                + " empty: no client certificate asked for");
        m.put("tls.trust.store.password.file", tls.trustStorePasswordFile() + "  # file holding its password");
        m.put("tls.identity", identities.certificateField().key() + "  # what names a client with a certificate:"
                + " cn (the subject's common name), dn (the subject), san.dns or san.uri (its first such alternative"
                + " name); the identity its limits count and admin.identities grant");
        m.put("tls.protocols", String.join(",", tls.protocols()) + "  # TLS versions allowed (TLSv1.3, TLSv1.2)");
        m.put("client.secret.file", clientSecretFile + "  # file holding the secret every client must prove"
                + " before its first request (a shared-secret alternative to client certificates); empty: none");
        m.put("admin.secret.file", adminSecretFile + "  # file holding the secret that gives a connection the admin"
                + " role (the sweeper's: abort any transaction, report clean-up of dead clients' transactions and"
                + " aborted ranges); empty: no connection can be admin");
        m.put("admin.identities", identities.adminIdentitiesSetting() + "  # client certificate identities"
                + " (tls.identity) given the admin role without the admin secret, comma-separated (semicolons with"
                + " tls.identity=dn); needs tls.trust.store; empty: none");
        m.put("handshake.timeout.ms", handshakeTimeoutMillis + "  # a connection that has not sent its handshake"
                + " this long after it was accepted gets an error and is closed");
        m.put("idle.timeout.ms", idleTimeoutMillis + "  # a client connection that sent nothing this long and holds no"
                + " running transaction is closed (0 = never); its client reconnects when it next needs the oracle");
        m.put("push.interval.ms", pushIntervalMillis + "  # a silent connection gets commit metadata pushed after this");
        m.put("max.lag.bytes", maxLagBytes + "  # unsent commit metadata after which a connection is closed");
        m.put("reader.grace.ms", readerGraceMillis + "  # garbage collection spares the snapshots of a lost"
                + " connection's transactions (and, after a recovery, of every earlier one) this long; clients read"
                + " on a lost connection for half of it");
        m.put("transaction.max.age.ms", transactionMaxAgeMillis + "  # a transaction still running this long"
                + " after it began is aborted, and its client stops reading and writing in it (0 = no limit): a"
                + " leaked transaction cannot hold back garbage collection for ever");
        m.put("stats.log.interval.ms", statsLogIntervalMillis + "  # log a line of counters and rates this often"
                + " (0 = never); the same figures are JMX attributes of io.sibyl:type=StatusOracle,port=PORT and"
                + " metrics on metrics.http.port");
        m.put("metrics.http.port", metricsHttpPort + "  # serve the metrics in Prometheus' text format at"
                + " http://host:PORT/metrics (" + METRICS_OFF + " = off, 0 = pick a free port, logged)");
        m.put("range.sweep.tables", rangeSweep.tables() + "  # a leading oracle sweeps the aborted ranges of"
                + " failovers in the background over these tables (comma-separated; * = every table that can hold"
                + " transactional data; empty = off, leave it to bin/sibyl-sweep); needs admin.secret.file");
        m.put("range.sweep.exclude", rangeSweep.excluded() + "  # tables the background sweep never scans");
        m.put("range.sweep.settle.ms", rangeSweep.settleMillis() + "  # how long a range stays sweepable before it"
                + " is swept (as bin/sibyl-sweep --settle-ms)");
        m.put("range.sweep.interval.ms", rangeSweep.intervalMillis() + "  # how often the background sweep looks for"
                + " aborted ranges");
        m.put("range.sweep.hbase.site", rangeSweep.hbaseSite() + "  # the HBase cluster's hbase-site.xml for the"
                + " background sweep; empty = $HBASE_CONF_DIR/hbase-site.xml");
        m.put("history.retention.ms", history.retentionMillis() + "  # read-only transactions may read the"
                + " database as it was up to this long ago (tm.beginAt); garbage collection keeps what they read"
                + " (0 = no reads of the past)");
        m.put("history.interval.ms", history.intervalMillis() + "  # at most one point of the past recorded per"
                + " interval while commits arrive; between points each commit is logged (24 bytes)");
        m.put("history.max.bytes", history.maxBytes() + "  # memory the history may take (8 bytes per transaction"
                + " running at each point, 24 per commit); beyond it the oldest points are dropped");
        m.put("sequencer.inline", inlineSequencer + "  # with io.threads=1, decide on the I/O thread (no hand-off)");
        m.put("journal", journal.key() + "  # memory (decisions lost on exit) or bookkeeper (journal.* settings,"
                + " recovery at startup)");
        m.put("ha", ha.enabled() + "  # join the leader election; stand by tailing the journal until elected"
                + " (needs journal=bookkeeper)");
        m.put("advertised.host", ha.advertisedHost() + "  # host clients are told in the leader znode; empty ="
                + " host, or this machine's name when host is 0.0.0.0");
        m.put("ha.tail.interval.ms", ha.tailIntervalMs() + "  # standby: pause between polls of the journal when"
                + " it found nothing new");
        if (journal == JournalKind.BOOKKEEPER) {
            m.putAll(journalSettings.describe());
        }
        return m;
    }
}
