package io.sibyl.oracle;

import io.sibyl.oracle.ha.HaSettings;
import io.sibyl.oracle.journal.JournalSettings;
import io.sibyl.protocol.TlsSettings;

/**
 * A mutable copy of an {@link OracleConfig}, so that each {@code withX} copy method names only what it changes; the
 * record checks the result when it is built.
 */
final class OracleConfigBuilder {
    String host;
    int port;
    int ioThreads;
    int conflictTableRows;
    int recentCommitsCapacity;
    int maxRunningTransactions;
    int maxWriteSetRows;
    int maxFrameBytes;
    long timestampReservationBlock;
    int maxBlockRecords;
    long pushIntervalMillis;
    long maxLagBytes;
    long readerGraceMillis;
    long statsLogIntervalMillis;
    boolean inlineSequencer;
    OracleConfig.JournalKind journal;
    JournalSettings journalSettings;
    HaSettings ha;
    long transactionMaxAgeMillis;
    long handshakeTimeoutMillis;
    int maxConnections;
    int maxRunningTransactionsPerConnection;
    String adminSecretFile;
    int maxAbortedTransactions;
    TlsSettings tls;
    String clientSecretFile;
    long idleTimeoutMillis;
    int metricsHttpPort;
    RangeSweepSettings rangeSweep;
    IdentitySettings identities;
    HistorySettings history;

    OracleConfigBuilder(OracleConfig c) {
        host = c.host();
        port = c.port();
        ioThreads = c.ioThreads();
        conflictTableRows = c.conflictTableRows();
        recentCommitsCapacity = c.recentCommitsCapacity();
        maxRunningTransactions = c.maxRunningTransactions();
        maxWriteSetRows = c.maxWriteSetRows();
        maxFrameBytes = c.maxFrameBytes();
        timestampReservationBlock = c.timestampReservationBlock();
        maxBlockRecords = c.maxBlockRecords();
        pushIntervalMillis = c.pushIntervalMillis();
        maxLagBytes = c.maxLagBytes();
        readerGraceMillis = c.readerGraceMillis();
        statsLogIntervalMillis = c.statsLogIntervalMillis();
        inlineSequencer = c.inlineSequencer();
        journal = c.journal();
        journalSettings = c.journalSettings();
        ha = c.ha();
        transactionMaxAgeMillis = c.transactionMaxAgeMillis();
        handshakeTimeoutMillis = c.handshakeTimeoutMillis();
        maxConnections = c.maxConnections();
        maxRunningTransactionsPerConnection = c.maxRunningTransactionsPerConnection();
        adminSecretFile = c.adminSecretFile();
        maxAbortedTransactions = c.maxAbortedTransactions();
        tls = c.tls();
        clientSecretFile = c.clientSecretFile();
        idleTimeoutMillis = c.idleTimeoutMillis();
        metricsHttpPort = c.metricsHttpPort();
        rangeSweep = c.rangeSweep();
        identities = c.identities();
        history = c.history();
    }

    OracleConfig build() {
        return new OracleConfig(host, port, ioThreads, conflictTableRows, recentCommitsCapacity, maxRunningTransactions,
                maxWriteSetRows, maxFrameBytes, timestampReservationBlock, maxBlockRecords, pushIntervalMillis,
                maxLagBytes, readerGraceMillis, statsLogIntervalMillis, inlineSequencer, journal, journalSettings, ha,
                transactionMaxAgeMillis, handshakeTimeoutMillis, maxConnections, maxRunningTransactionsPerConnection,
                adminSecretFile, maxAbortedTransactions, tls, clientSecretFile, idleTimeoutMillis, metricsHttpPort,
                rangeSweep, identities, history);
    }
}
