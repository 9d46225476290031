package io.sibyl.client;

import io.sibyl.client.oracle.OracleCredentials;
import io.sibyl.client.oracle.OracleTransport;
import io.sibyl.protocol.SecretProof;
import io.sibyl.protocol.TlsSettings;
import io.sibyl.protocol.settings.Range;
import io.sibyl.protocol.settings.Setting;
import io.sibyl.protocol.settings.SettingsSpec;
import org.apache.hadoop.conf.Configuration;

import java.nio.file.Path;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * Client settings read from the HBase {@link Configuration}: each declared once in {@link #SPEC} (key, default,
 * allowed values, what it is for), which reads, checks and documents it (docs/user-guide.md, kept equal by
 * DocumentedSettingsTest).
 */
record ClientSettings(int readVersions, long writeBufferBytes, int retryAttempts, long retryBackoffMillis,
                      long retryBackoffMaxMillis, long oracleTimeoutMillis, long failoverTimeoutMillis,
                      OracleCredentials credentials, IsolationLevel isolation, long readOnlyMaxStalenessMillis,
                      int zooKeeperSessionTimeoutMillis, OracleTransport oracleTransport) {
    /** Largest {@link TransactionManager#READ_ONLY_MAX_STALENESS_MS}: an hour. */
    static final long MAX_STALENESS_MILLIS = 3_600_000L;

    /** The client's declared settings, in declaration order. */
    static final SettingsSpec<ClientSettings> SPEC = new SettingsSpec<>("client", "docs/user-guide.md");
    static final Setting<ClientSettings, Integer> ZK_SESSION_TIMEOUT = SPEC.integer(
            TransactionManager.ORACLE_ZK_SESSION_TIMEOUT_MS, TransactionManager.DEFAULT_ZK_SESSION_TIMEOUT_MS,
            Range.atLeast(1), ClientSettings::zooKeeperSessionTimeoutMillis,
            "ZooKeeper session timeout while looking up the leading oracle");
    static final Setting<ClientSettings, Long> FAILOVER_TIMEOUT = SPEC.longInteger(
            TransactionManager.FAILOVER_TIMEOUT_MS, 30_000, Range.atLeast(1), ClientSettings::failoverTimeoutMillis,
            "how long a request waits for an oracle to take over");
    static final Setting<ClientSettings, Integer> READ_VERSIONS = SPEC.integer(TransactionManager.READ_VERSIONS, 3,
            Range.atLeast(1), ClientSettings::readVersions, "versions per column a transactional read fetches at once");
    static final Setting<ClientSettings, Long> WRITE_BUFFER = SPEC.longInteger(TransactionManager.WRITE_BUFFER_BYTES,
            4L << 20, Range.atLeast(0), ClientSettings::writeBufferBytes,
            "buffered write bytes that send the buffer to HBase before the commit (0: every write at once)");
    static final Setting<ClientSettings, Integer> RETRY_ATTEMPTS = SPEC.integer(TransactionManager.RETRY_ATTEMPTS,
            10, Range.atLeast(1), ClientSettings::retryAttempts, "attempts of TransactionManager.run");
    static final Setting<ClientSettings, Long> RETRY_BACKOFF = SPEC.longInteger(TransactionManager.RETRY_BACKOFF_MS,
            5, Range.atLeast(0), ClientSettings::retryBackoffMillis, "first pause between attempts of run");
    static final Setting<ClientSettings, Long> RETRY_BACKOFF_MAX = SPEC.longInteger(
            TransactionManager.RETRY_BACKOFF_MAX_MS, 1000, Range.atLeast(0), ClientSettings::retryBackoffMaxMillis,
            "longest pause between attempts of run (at least the first)");
    static final Setting<ClientSettings, Long> ORACLE_TIMEOUT = SPEC.longInteger(TransactionManager.ORACLE_TIMEOUT_MS,
            30_000, Range.atLeast(1), ClientSettings::oracleTimeoutMillis, "how long a reply of the oracle is awaited");
    static final Setting<ClientSettings, Long> READ_ONLY_MAX_STALENESS = SPEC.longInteger(
            TransactionManager.READ_ONLY_MAX_STALENESS_MS, 100, Range.between(1, MAX_STALENESS_MILLIS),
            ClientSettings::readOnlyMaxStalenessMillis, "bound on how stale a beginReadOnly() snapshot may be");
    static final Setting<ClientSettings, IsolationLevel> ISOLATION = SPEC.of(TransactionManager.ISOLATION,
            Setting.Type.of((key, text) -> isolation(text), level -> level.name().toLowerCase(Locale.ROOT)),
            IsolationLevel.SNAPSHOT, ClientSettings::isolation, "isolation of begin(): snapshot or serializable");
    static final Setting<ClientSettings, OracleTransport> ORACLE_TRANSPORT = SPEC.of(TransactionManager.ORACLE_TRANSPORT,
            Setting.Type.of((key, text) -> transport(text), ClientSettings::transportName),
            OracleTransport.WAITING_THREAD, ClientSettings::oracleTransport,
            "which threads write the oracle's requests and read its replies: waiting-thread or event-loop");

    static ClientSettings from(Configuration conf) {
        Function<String, String> values = conf::getTrimmed;
        ClientSettings s = new ClientSettings(READ_VERSIONS.read(values), WRITE_BUFFER.read(values),
                RETRY_ATTEMPTS.read(values), RETRY_BACKOFF.read(values), RETRY_BACKOFF_MAX.read(values),
                ORACLE_TIMEOUT.read(values), FAILOVER_TIMEOUT.read(values), credentials(conf), ISOLATION.read(values),
                READ_ONLY_MAX_STALENESS.read(values), ZK_SESSION_TIMEOUT.read(values), ORACLE_TRANSPORT.read(values));
        s.check();
        return s;
    }

    /**
     * A new client identity, with the admin secret of {@link TransactionManager#ADMIN_SECRET_FILE} if it is set, and
     * TLS if {@link TransactionManager#TLS} is true.
     */
    static OracleCredentials credentials(Configuration conf) {
        String file = conf.getTrimmed(TransactionManager.ADMIN_SECRET_FILE, "");
        OracleCredentials c = file.isEmpty() ? OracleCredentials.newClient()
                : OracleCredentials.newAdmin(SecretProof.readSecret(Path.of(file), TransactionManager.ADMIN_SECRET_FILE));
        String clientFile = conf.getTrimmed(TransactionManager.CLIENT_SECRET_FILE, "");
        if (!clientFile.isEmpty()) {
            c = c.withClientSecret(SecretProof.readSecret(Path.of(clientFile), TransactionManager.CLIENT_SECRET_FILE));
        }
        return c.withTls(tls(conf));
    }

    private static IsolationLevel isolation(String text) {
        return switch (text.trim().toLowerCase(Locale.ROOT)) {
            case "snapshot" -> IsolationLevel.SNAPSHOT;
            case "serializable" -> IsolationLevel.SERIALIZABLE;
            default -> throw new IllegalArgumentException("must be snapshot or serializable");
        };
    }

    private static OracleTransport transport(String text) {
        return switch (text.trim().toLowerCase(Locale.ROOT)) {
            case "waiting-thread" -> OracleTransport.WAITING_THREAD;
            case "event-loop" -> OracleTransport.EVENT_LOOP;
            default -> throw new IllegalArgumentException("must be waiting-thread or event-loop");
        };
    }

    private static String transportName(OracleTransport t) {
        return t == OracleTransport.WAITING_THREAD ? "waiting-thread" : "event-loop";
    }

    private static TlsSettings tls(Configuration conf) {
        String p = TransactionManager.TLS + ".";
        String enabled = conf.getTrimmed(TransactionManager.TLS, "false");
        if (!enabled.equals("true") && !enabled.equals("false")) {
            throw new IllegalArgumentException("invalid value '" + enabled + "' for " + TransactionManager.TLS
                    + ": must be true or false (see docs/user-guide.md)");
        }
        return new TlsSettings(enabled.equals("true"), conf.getTrimmed(p + "key.store", ""),
                conf.getTrimmed(p + "key.store.password.file", ""), conf.getTrimmed(p + "trust.store", ""),
                conf.getTrimmed(p + "trust.store.password.file", ""),
                List.of(conf.getTrimmedStrings(p + "protocols", TlsSettings.DEFAULT_PROTOCOLS.toArray(new String[0]))),
                p);
    }

    /** Refuses values outside their declared ranges, and a longest pause shorter than the first. */
    private void check() {
        READ_VERSIONS.require(readVersions);
        WRITE_BUFFER.require(writeBufferBytes);
        RETRY_ATTEMPTS.require(retryAttempts);
        RETRY_BACKOFF.require(retryBackoffMillis);
        RETRY_BACKOFF_MAX.require(retryBackoffMaxMillis);
        if (retryBackoffMaxMillis < retryBackoffMillis) {
            throw new IllegalArgumentException("invalid value " + retryBackoffMaxMillis + " for "
                    + TransactionManager.RETRY_BACKOFF_MAX_MS + ": must be >= " + TransactionManager.RETRY_BACKOFF_MS
                    + " (see docs/user-guide.md)");
        }
        ORACLE_TIMEOUT.require(oracleTimeoutMillis);
        FAILOVER_TIMEOUT.require(failoverTimeoutMillis);
        READ_ONLY_MAX_STALENESS.require(readOnlyMaxStalenessMillis);
        ZK_SESSION_TIMEOUT.require(zooKeeperSessionTimeoutMillis);
    }
}
