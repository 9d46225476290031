package io.sibyl.oracle.journal;

/**
 * A mutable copy of a {@link JournalSettings}, so that each {@code withX} copy method names only what it changes; the
 * record checks the result when it is built.
 */
final class JournalSettingsBuilder {
    String zkConnect;
    int zkSessionTimeoutMs;
    String metadataServiceUri;
    String ledgersZnode;
    int ensembleSize;
    int writeQuorum;
    int ackQuorum;
    int groupMaxBytes;
    long groupMaxDelayMicros;
    boolean flushWhenIdle;
    int maxAddsInFlight;
    long maxPendingBytes;
    long ledgerMaxBytes;
    long ledgerMaxEntries;
    long writeRetryMs;
    String password;
    String leaderZnode;
    String electionZnode;
    int retainLedgersMin;
    boolean sweepOrphans;
    String zkAuthFile;
    String zkAcl;
    String zkAclReaders;

    JournalSettingsBuilder(JournalSettings s) {
        zkConnect = s.zkConnect();
        zkSessionTimeoutMs = s.zkSessionTimeoutMs();
        metadataServiceUri = s.metadataServiceUri();
        ledgersZnode = s.ledgersZnode();
        ensembleSize = s.ensembleSize();
        writeQuorum = s.writeQuorum();
        ackQuorum = s.ackQuorum();
        groupMaxBytes = s.groupMaxBytes();
        groupMaxDelayMicros = s.groupMaxDelayMicros();
        flushWhenIdle = s.flushWhenIdle();
        maxAddsInFlight = s.maxAddsInFlight();
        maxPendingBytes = s.maxPendingBytes();
        ledgerMaxBytes = s.ledgerMaxBytes();
        ledgerMaxEntries = s.ledgerMaxEntries();
        writeRetryMs = s.writeRetryMs();
        password = s.password();
        leaderZnode = s.leaderZnode();
        electionZnode = s.electionZnode();
        retainLedgersMin = s.retainLedgersMin();
        sweepOrphans = s.sweepOrphans();
        zkAuthFile = s.zkAuthFile();
        zkAcl = s.zkAcl();
        zkAclReaders = s.zkAclReaders();
    }

    JournalSettings build() {
        return new JournalSettings(zkConnect, zkSessionTimeoutMs, metadataServiceUri, ledgersZnode, ensembleSize,
                writeQuorum, ackQuorum, groupMaxBytes, groupMaxDelayMicros, flushWhenIdle, maxAddsInFlight,
                maxPendingBytes, ledgerMaxBytes, ledgerMaxEntries, writeRetryMs, password, leaderZnode, electionZnode,
                retainLedgersMin, sweepOrphans, zkAuthFile, zkAcl, zkAclReaders);
    }
}
