package io.sibyl.client;

import io.sibyl.client.oracle.OracleCredentials;
import io.sibyl.protocol.SecretProof;
import io.sibyl.protocol.TlsSettings;
import org.apache.hadoop.conf.Configuration;

import java.nio.file.Path;
import java.util.List;

/** Client settings read from the HBase {@link Configuration} (keys in docs/user-guide.md). */
record ClientSettings(int readVersions, long writeBufferBytes, int retryAttempts, long retryBackoffMillis,
                      long retryBackoffMaxMillis, long oracleTimeoutMillis, long failoverTimeoutMillis,
                      OracleCredentials credentials, IsolationLevel isolation, long readOnlyMaxStalenessMillis) {
    /** Largest {@link TransactionManager#READ_ONLY_MAX_STALENESS_MS}: an hour. */
    static final long MAX_STALENESS_MILLIS = 3_600_000L;


    static ClientSettings from(Configuration conf) {
        ClientSettings s = new ClientSettings(
                (int) number(conf, TransactionManager.READ_VERSIONS, 3, Integer.MAX_VALUE),
                number(conf, TransactionManager.WRITE_BUFFER_BYTES, 4L << 20, Long.MAX_VALUE),
                (int) number(conf, TransactionManager.RETRY_ATTEMPTS, 10, Integer.MAX_VALUE),
                number(conf, TransactionManager.RETRY_BACKOFF_MS, 5, Long.MAX_VALUE),
                number(conf, TransactionManager.RETRY_BACKOFF_MAX_MS, 1000, Long.MAX_VALUE),
                number(conf, TransactionManager.ORACLE_TIMEOUT_MS, 30_000, Long.MAX_VALUE),
                number(conf, TransactionManager.FAILOVER_TIMEOUT_MS, 30_000, Long.MAX_VALUE),
                credentials(conf),
                isolation(conf),
                number(conf, TransactionManager.READ_ONLY_MAX_STALENESS_MS, 100, MAX_STALENESS_MILLIS));
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

    private static IsolationLevel isolation(Configuration conf) {
        String v = conf.getTrimmed(TransactionManager.ISOLATION, "snapshot");
        return switch (v.toLowerCase(java.util.Locale.ROOT)) {
            case "snapshot" -> IsolationLevel.SNAPSHOT;
            case "serializable" -> IsolationLevel.SERIALIZABLE;
            default -> throw new IllegalArgumentException("invalid value '" + v + "' for " + TransactionManager.ISOLATION
                    + ": must be snapshot or serializable (see docs/user-guide.md)");
        };
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

    /**
     * The whole number {@code key} holds, or {@code dflt}. Configuration.getLong would throw a NumberFormatException
     * ("For input string: ...") that does not say which setting is wrong.
     */
    static long number(Configuration conf, String key, long dflt, long max) {
        String v = conf.getTrimmed(key);
        if (v == null || v.isEmpty()) {
            return dflt;
        }
        long n;
        try {
            n = Long.parseLong(v);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("invalid value '" + v + "' for " + key + ": must be a whole number"
                    + " (see docs/user-guide.md)");
        }
        if (n > max) {
            throw new IllegalArgumentException("invalid value " + v + " for " + key + ": must be at most " + max
                    + " (see docs/user-guide.md)");
        }
        return n;
    }

    private void check() {
        require(readVersions >= 1, TransactionManager.READ_VERSIONS, readVersions, ">= 1");
        require(writeBufferBytes >= 0, TransactionManager.WRITE_BUFFER_BYTES, writeBufferBytes, ">= 0");
        require(retryAttempts >= 1, TransactionManager.RETRY_ATTEMPTS, retryAttempts, ">= 1");
        require(retryBackoffMillis >= 0, TransactionManager.RETRY_BACKOFF_MS, retryBackoffMillis, ">= 0");
        require(retryBackoffMaxMillis >= retryBackoffMillis, TransactionManager.RETRY_BACKOFF_MAX_MS,
                retryBackoffMaxMillis, ">= " + TransactionManager.RETRY_BACKOFF_MS);
        require(oracleTimeoutMillis >= 1, TransactionManager.ORACLE_TIMEOUT_MS, oracleTimeoutMillis, ">= 1");
        require(failoverTimeoutMillis >= 1, TransactionManager.FAILOVER_TIMEOUT_MS, failoverTimeoutMillis, ">= 1");
        require(readOnlyMaxStalenessMillis >= 1, TransactionManager.READ_ONLY_MAX_STALENESS_MS,
                readOnlyMaxStalenessMillis, ">= 1");
    }

    private static void require(boolean ok, String key, long value, String rule) {
        if (!ok) {
            throw new IllegalArgumentException("invalid value " + value + " for " + key + ": must be " + rule
                    + " (see docs/user-guide.md)");
        }
    }
}
