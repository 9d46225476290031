package io.sibyl.oracle;

import io.sibyl.protocol.settings.Setting;
import io.sibyl.protocol.settings.SettingsSpec;
import io.sibyl.protocol.settings.Range;
import io.sibyl.oracle.IdentitySettings.CertificateField;
import io.sibyl.oracle.OracleConfig.JournalKind;
import io.sibyl.protocol.TlsSettings;

import static io.sibyl.oracle.OracleConfig.MAX_CONNECTIONS;
import static io.sibyl.oracle.OracleConfig.MAX_FRAME_BYTES;
import static io.sibyl.oracle.OracleConfig.MAX_INTERVAL_MILLIS;
import static io.sibyl.oracle.OracleConfig.MAX_IO_THREADS;
import static io.sibyl.oracle.OracleConfig.MAX_TABLE_ENTRIES;
import static io.sibyl.oracle.OracleConfig.MAX_TIMESTAMP_RESERVATION_BLOCK;
import static io.sibyl.oracle.OracleConfig.MAX_TRANSACTION_AGE_MILLIS;
import static io.sibyl.oracle.OracleConfig.METRICS_OFF;

/**
 * Every key of the oracle (except the BookKeeper journal's {@code journal.*}, which {@code JournalSettings} declares),
 * declared once: default, allowed values and what it is for. {@link OracleConfig} and the settings records it holds
 * read, check and list their keys through these declarations; docs/operations.md's table is held equal to them by
 * OracleConfigTest. The order is {@code --help}'s.
 */
public final class OracleSettings {
    private OracleSettings() {
    }

    /** The declarations, in {@code --help}'s order. */
    public static final SettingsSpec<OracleConfig> SPEC = new SettingsSpec<>("oracle", "docs/operations.md");

    private static final String HALF_RUNNING = "half of max.running.transactions";

    public static final Setting<OracleConfig, String> HOST = SPEC.text("host", "0.0.0.0", OracleConfig::host,
            "address to listen on");
    public static final Setting<OracleConfig, Integer> PORT = SPEC.integer("port", 24680, Range.between(0, 65535),
            OracleConfig::port, "TCP port for clients (0 = pick a free one)");
    public static final Setting<OracleConfig, Integer> IO_THREADS = SPEC.integer("io.threads", 1,
            Range.between(1, MAX_IO_THREADS), OracleConfig::ioThreads,
            "Netty event-loop threads that decode and encode frames");
    // Tables are rounded up to twice a power of two: MAX_TABLE_ENTRIES keeps them within Java's array limit.
    public static final Setting<OracleConfig, Integer> CONFLICT_TABLE_ROWS = SPEC.integer("conflict.table.rows",
            16 << 20, Range.between(8, MAX_TABLE_ENTRIES), OracleConfig::conflictTableRows,
            "rows whose last commit timestamp is remembered (16 B each)");
    public static final Setting<OracleConfig, Integer> RECENT_COMMITS_CAPACITY = SPEC.integer(
            "recent.commits.capacity", 1 << 20, Range.between(2, MAX_TABLE_ENTRIES),
            OracleConfig::recentCommitsCapacity, "commits remembered above T_max (commit queries)");
    public static final Setting<OracleConfig, Integer> MAX_RUNNING_TRANSACTIONS = SPEC.integer(
            "max.running.transactions", 1 << 20, Range.between(2, MAX_TABLE_ENTRIES),
            OracleConfig::maxRunningTransactions, "started-but-unfinished transactions kept");
    public static final Setting<OracleConfig, Integer> MAX_RUNNING_PER_CONNECTION = SPEC.integer(
            "max.running.transactions.per.connection", 0, Range.atLeast(0).leastMeaning(HALF_RUNNING),
            OracleConfig::maxRunningTransactionsPerConnection, c -> "running transactions one connection may hold"
                    + " (0 = half of max.running.transactions, now " + c.runningTransactionsPerConnection() + ");"
                    + " its begins beyond it are refused, other connections' are not");
    public static final Setting<OracleConfig, Integer> MAX_RUNNING_PER_IDENTITY = SPEC.integer(
            "max.running.transactions.per.identity", 0, Range.between(0, MAX_TABLE_ENTRIES).leastMeaning(HALF_RUNNING),
            c -> c.identities().maxRunningTransactionsPerIdentity(), c -> "running transactions one identity (a"
                    + " client certificate's, or a client's token: all its connections together) may hold (0 = half"
                    + " of max.running.transactions, at least the per-connection limit, now "
                    + c.runningTransactionsPerIdentity() + "); its begins"
                    + " beyond it are refused, other identities' are not");
    public static final Setting<OracleConfig, Integer> MAX_WRITE_SET_ROWS = SPEC.integer("max.write.set.rows",
            1 << 20, Range.atLeast(1), OracleConfig::maxWriteSetRows, "largest write set one commit may carry");
    public static final Setting<OracleConfig, Integer> MAX_FRAME_BYTES_SETTING = SPEC.integer("max.frame.bytes",
            16 << 20, Range.between(1024, MAX_FRAME_BYTES), OracleConfig::maxFrameBytes,
            "largest frame a client may send");
    public static final Setting<OracleConfig, Long> TIMESTAMP_RESERVATION_BLOCK = SPEC.longInteger(
            "timestamp.reservation.block", 1_000_000, Range.between(1, MAX_TIMESTAMP_RESERVATION_BLOCK),
            OracleConfig::timestampReservationBlock, "timestamps reserved per journal write");
    public static final Setting<OracleConfig, Integer> MAX_BLOCK_RECORDS = SPEC.integer("max.block.records", 4096,
            Range.atLeast(1), OracleConfig::maxBlockRecords,
            "requests decided per block before it is sealed and its replies released");
    public static final Setting<OracleConfig, Integer> MAX_CONNECTIONS_SETTING = SPEC.integer("max.connections",
            4096, Range.between(1, MAX_CONNECTIONS), OracleConfig::maxConnections, "open connections (clients,"
                    + " region servers, sweepers, standbys); a connection beyond it gets an error and is closed");
    public static final Setting<OracleConfig, Integer> MAX_CONNECTIONS_PER_IDENTITY = SPEC.integer(
            "max.connections.per.identity", 0,
            Range.between(0, MAX_CONNECTIONS).leastMeaning("half of max.connections"),
            c -> c.identities().maxConnectionsPerIdentity(), c -> "open connections of one identity (0 = half of"
                    + " max.connections, now " + c.connectionsPerIdentity() + "); a connection beyond it gets an"
                    + " error and is closed, other identities' are not");
    public static final Setting<OracleConfig, Integer> MAX_ABORTED_TRANSACTIONS = SPEC.integer(
            "max.aborted.transactions", 1 << 17, Range.between(1, MAX_TABLE_ENTRIES),
            OracleConfig::maxAbortedTransactions, "aborted transactions kept until swept; at the limit new begins"
                    + " are refused until bin/sibyl-sweep reports some cleaned up");
    public static final Setting<OracleConfig, Boolean> TLS = SPEC.bool("tls", false, c -> c.tls().enabled(),
            "clients connect with TLS (and, with tls.trust.store, present a certificate it trusts); plaintext is"
                    + " refused");
    public static final Setting<OracleConfig, String> TLS_KEY_STORE = SPEC.trimmed("tls.key.store", "",
            c -> c.tls().keyStore(), "the oracle's certificate and private key (PKCS12 or JKS)");
    public static final Setting<OracleConfig, String> TLS_KEY_STORE_PASSWORD_FILE = SPEC.trimmed(
            "tls.key.store.password.file", "", c -> c.tls().keyStorePasswordFile(), "file holding its password");
    public static final Setting<OracleConfig, String> TLS_TRUST_STORE = SPEC.trimmed("tls.trust.store", "",
            c -> c.tls().trustStore(), "certificates of the clients (or their CAs) accepted; empty: no client"
                    + " certificate asked for");
    public static final Setting<OracleConfig, String> TLS_TRUST_STORE_PASSWORD_FILE = SPEC.trimmed(
            "tls.trust.store.password.file", "", c -> c.tls().trustStorePasswordFile(), "file holding its password");
    public static final Setting<OracleConfig, CertificateField> TLS_IDENTITY = SPEC.of("tls.identity",
            Setting.Type.of((key, text) -> CertificateField.parse(text), CertificateField::key), CertificateField.CN,
            c -> c.identities().certificateField(), "what names a client with a certificate: cn (the subject's"
                    + " common name), dn (the subject), san.dns or san.uri (its first such alternative name); the"
                    + " identity its limits count and admin.identities grant");
    public static final Setting<OracleConfig, String> TLS_PROTOCOLS = SPEC.text("tls.protocols",
            String.join(",", TlsSettings.DEFAULT_PROTOCOLS), c -> String.join(",", c.tls().protocols()),
            "TLS versions allowed (TLSv1.3, TLSv1.2)");
    public static final Setting<OracleConfig, String> CLIENT_SECRET_FILE = SPEC.trimmed("client.secret.file", "",
            OracleConfig::clientSecretFile, "file holding the secret every client must prove before its first"
                    + " request (a shared-secret alternative to client certificates); empty: none");
    public static final Setting<OracleConfig, String> ADMIN_SECRET_FILE = SPEC.trimmed("admin.secret.file", "",
            OracleConfig::adminSecretFile, "file holding the secret that gives a connection the admin role (the"
                    + " sweeper's: abort any transaction, report clean-up of dead clients' transactions and aborted"
                    + " ranges); empty: no connection can be admin");
    public static final Setting<OracleConfig, String> ADMIN_IDENTITIES = SPEC.text("admin.identities", "",
            c -> c.identities().adminIdentitiesSetting(), "client certificate identities (tls.identity) given the"
                    + " admin role without the admin secret, comma-separated (semicolons with tls.identity=dn); needs"
                    + " tls.trust.store; empty: none");
    public static final Setting<OracleConfig, Long> HANDSHAKE_TIMEOUT_MS = SPEC.longInteger("handshake.timeout.ms",
            10_000, Range.between(1, 3_600_000), OracleConfig::handshakeTimeoutMillis, "a connection that has not"
                    + " sent its handshake this long after it was accepted gets an error and is closed");
    public static final Setting<OracleConfig, Long> IDLE_TIMEOUT_MS = SPEC.longInteger("idle.timeout.ms", 600_000,
            Range.between(1000, MAX_INTERVAL_MILLIS).orValue(0, "never"), OracleConfig::idleTimeoutMillis,
            "a client connection that sent nothing this long and holds no running transaction is closed (0 ="
                    + " never); its client reconnects when it next needs the oracle");
    public static final Setting<OracleConfig, Long> PUSH_INTERVAL_MS = SPEC.longInteger("push.interval.ms", 1000,
            Range.between(1, MAX_INTERVAL_MILLIS), OracleConfig::pushIntervalMillis,
            "a silent connection gets commit metadata pushed after this");
    public static final Setting<OracleConfig, Long> MAX_LAG_BYTES = SPEC.longInteger("max.lag.bytes", 64L << 20,
            Range.between(1024, Integer.MAX_VALUE), OracleConfig::maxLagBytes,
            "unsent commit metadata after which a connection is closed");
    public static final Setting<OracleConfig, Long> READER_GRACE_MS = SPEC.longInteger("reader.grace.ms", 60_000,
            Range.between(100, 3_600_000), OracleConfig::readerGraceMillis, "garbage collection spares the"
                    + " snapshots of a lost connection's transactions (and, after a recovery, of every earlier one)"
                    + " this long; clients read on a lost connection for half of it");
    public static final Setting<OracleConfig, Long> TRANSACTION_MAX_AGE_MS = SPEC.longInteger(
            "transaction.max.age.ms", 3_600_000, Range.between(1000, MAX_TRANSACTION_AGE_MILLIS).orValue(0, "no limit"),
            OracleConfig::transactionMaxAgeMillis, "a transaction still running this long after it began is"
                    + " aborted, and its client stops reading and writing in it (0 = no limit): a leaked transaction"
                    + " cannot hold back garbage collection for ever");
    public static final Setting<OracleConfig, Long> STATS_LOG_INTERVAL_MS = SPEC.longInteger("stats.log.interval.ms",
            60_000, Range.between(0, MAX_INTERVAL_MILLIS).leastMeaning("never"), OracleConfig::statsLogIntervalMillis,
            "log a line of counters and rates this often (0 = never); the same figures are JMX attributes of"
                    + " io.sibyl:type=StatusOracle,port=PORT and metrics on metrics.http.port");
    public static final Setting<OracleConfig, Integer> METRICS_HTTP_PORT = SPEC.integer("metrics.http.port",
            METRICS_OFF, Range.between(1, 65535).orValue(0, "pick a free port").orValue(METRICS_OFF, "off"),
            OracleConfig::metricsHttpPort, "serve the metrics in Prometheus' text format at"
                    + " http://host:PORT/metrics (" + METRICS_OFF + " = off, 0 = pick a free port, logged)");
    public static final Setting<OracleConfig, String> RANGE_SWEEP_TABLES = SPEC.text("range.sweep.tables", "",
            c -> c.rangeSweep().tables(), "a leading oracle sweeps the aborted ranges of failovers in the background"
                    + " over these tables (comma-separated; * = every table that can hold transactional data; empty ="
                    + " off, leave it to bin/sibyl-sweep); needs admin.secret.file");
    public static final Setting<OracleConfig, String> RANGE_SWEEP_EXCLUDE = SPEC.text("range.sweep.exclude", "",
            c -> c.rangeSweep().excluded(), "tables the background sweep never scans");
    public static final Setting<OracleConfig, Long> RANGE_SWEEP_SETTLE_MS = SPEC.longInteger("range.sweep.settle.ms",
            RangeSweepSettings.DEFAULT_SETTLE_MS, Range.between(0, 86_400_000L), c -> c.rangeSweep().settleMillis(),
            "how long a range stays sweepable before it is swept (as bin/sibyl-sweep --settle-ms)");
    public static final Setting<OracleConfig, Long> RANGE_SWEEP_INTERVAL_MS = SPEC.longInteger(
            "range.sweep.interval.ms", 10_000, Range.between(100, 86_400_000L), c -> c.rangeSweep().intervalMillis(),
            "how often the background sweep looks for aborted ranges");
    public static final Setting<OracleConfig, String> RANGE_SWEEP_HBASE_SITE = SPEC.text("range.sweep.hbase.site", "",
            c -> c.rangeSweep().hbaseSite(), "the HBase cluster's hbase-site.xml for the background sweep; empty ="
                    + " $HBASE_CONF_DIR/hbase-site.xml");
    public static final Setting<OracleConfig, Long> HISTORY_RETENTION_MS = SPEC.longInteger("history.retention.ms", 0,
            Range.between(0, HistorySettings.MAX_RETENTION_MILLIS).leastMeaning("no reads of the past"),
            c -> c.history().retentionMillis(), "read-only transactions may read the database as it was up to this"
                    + " long ago (tm.beginAt); garbage collection keeps what they read (0 = no reads of the past)");
    public static final Setting<OracleConfig, Long> HISTORY_INTERVAL_MS = SPEC.longInteger("history.interval.ms",
            1000, Range.between(1, 3_600_000L), c -> c.history().intervalMillis(), "at most one point of the past"
                    + " recorded per interval while commits arrive; between points each commit is logged (24 bytes)");
    public static final Setting<OracleConfig, Long> HISTORY_MAX_BYTES = SPEC.longInteger("history.max.bytes",
            64L << 20, Range.between(1 << 20, 1L << 40), c -> c.history().maxBytes(), "memory the history may take"
                    + " (8 bytes per transaction running at each point, 24 per commit); beyond it the oldest points"
                    + " are dropped");
    public static final Setting<OracleConfig, Boolean> SEQUENCER_INLINE = SPEC.bool("sequencer.inline", true,
            OracleConfig::inlineSequencer, "with io.threads=1, decide on the I/O thread (no hand-off)");
    public static final Setting<OracleConfig, JournalKind> JOURNAL = SPEC.of("journal",
            Setting.Type.of((key, text) -> JournalKind.parse(text), JournalKind::key), JournalKind.MEMORY,
            OracleConfig::journal, "memory (decisions lost on exit) or bookkeeper (journal.* settings, recovery at"
                    + " startup)");
    public static final Setting<OracleConfig, Boolean> HA = SPEC.bool("ha", false, c -> c.ha().enabled(),
            "join the leader election; stand by tailing the journal until elected (needs journal=bookkeeper)");
    public static final Setting<OracleConfig, String> ADVERTISED_HOST = SPEC.text("advertised.host", "",
            c -> c.ha().advertisedHost(), "host clients are told in the leader znode; empty = host, or this"
                    + " machine's name when host is 0.0.0.0");
    public static final Setting<OracleConfig, Long> HA_TAIL_INTERVAL_MS = SPEC.longInteger("ha.tail.interval.ms", 5,
            Range.between(1, 10_000), c -> c.ha().tailIntervalMs(),
            "standby: pause between polls of the journal when it found nothing new");
}
