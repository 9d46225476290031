package io.sibyl.oracle.journal;

import io.sibyl.protocol.settings.Setting;
import io.sibyl.protocol.settings.SettingsSpec;

import java.util.Locale;

/**
 * Every {@code journal.*} key declared once: default and what it is for. {@link JournalSettings} reads and lists its
 * keys through these declarations; docs/journal.md's table is held equal to them by OracleConfigTest. Its checks stay
 * in the record: most compare one setting with another (quorums, znodes). The order is {@code --help}'s.
 */
public final class JournalKeys {
    private JournalKeys() {
    }

    /** The declarations, in {@code --help}'s order. */
    public static final SettingsSpec<JournalSettings> SPEC = new SettingsSpec<>("journal", "docs/journal.md");

    /** Journal switches take true or false only, as they always have (the oracle's also take yes, no, 1 and 0). */
    private static final Setting.Type<Boolean> TRUE_OR_FALSE = Setting.Type.of(JournalKeys::trueOrFalse,
            String::valueOf);
    /** The password is a secret: {@code --help} does not show it. */
    private static final Setting.Type<String> SECRET = Setting.Type.of((key, text) -> text, text -> "*****");

    public static final Setting<JournalSettings, String> ZK_CONNECT = SPEC.trimmed("journal.zk.connect",
            "127.0.0.1:2181", JournalSettings::zkConnect, "ZooKeeper ensemble: ledger registry (and BookKeeper"
                    + " metadata)");
    public static final Setting<JournalSettings, Integer> ZK_SESSION_TIMEOUT_MS = SPEC.integer(
            "journal.zk.session.timeout.ms", 10_000, null, JournalSettings::zkSessionTimeoutMs,
            "oracle's ZooKeeper session; losing it is fatal");
    public static final Setting<JournalSettings, String> BK_METADATA_URI = SPEC.trimmed("journal.bk.metadata.uri", "",
            JournalSettings::metadataServiceUri,
            "BookKeeper metadata URI; empty = zk+null://<journal.zk.connect>/ledgers");
    public static final Setting<JournalSettings, String> LEDGERS_ZNODE = SPEC.trimmed("journal.ledgers.znode",
            "/sibyl/oracle/ledgers", JournalSettings::ledgersZnode,
            "znode listing the journal's ledgers, oldest first");
    // Ensemble 2, not 3: a recovery re-writes the dead writer's unconfirmed entries to their write set and needs a
    // bookie outside the ledger's ensemble to stand in for a lost one, so with three bookies a ledger on all three
    // could not be recovered (no oracle could take over) while one of them is down.
    public static final Setting<JournalSettings, Integer> ENSEMBLE_SIZE = SPEC.integer("journal.ensemble.size", 2,
            null, JournalSettings::ensembleSize, "bookies per ledger; keep it below the number of bookies (a takeover"
                    + " needs a spare)");
    public static final Setting<JournalSettings, Integer> WRITE_QUORUM = SPEC.integer("journal.write.quorum", 2, null,
            JournalSettings::writeQuorum, "bookies each entry is written to");
    public static final Setting<JournalSettings, Integer> ACK_QUORUM = SPEC.integer("journal.ack.quorum", 2, null,
            JournalSettings::ackQuorum, "acknowledgements that make an entry durable");
    public static final Setting<JournalSettings, Integer> GROUP_MAX_BYTES = SPEC.integer("journal.group.max.bytes",
            64 * 1024, null, JournalSettings::groupMaxBytes, "group commit: send an entry once it is this large");
    public static final Setting<JournalSettings, Long> GROUP_MAX_DELAY_US = SPEC.longInteger(
            "journal.group.max.delay.us", 1000, null, JournalSettings::groupMaxDelayMicros,
            "group commit: longest a block waits for company (microseconds)");
    public static final Setting<JournalSettings, Boolean> GROUP_FLUSH_WHEN_IDLE = SPEC.of(
            "journal.group.flush.when.idle", TRUE_OR_FALSE, true, JournalSettings::flushWhenIdle,
            "send at once when no add is in flight");
    public static final Setting<JournalSettings, Integer> MAX_ADDS_IN_FLIGHT = SPEC.integer(
            "journal.max.adds.in.flight", 32, null, JournalSettings::maxAddsInFlight,
            "entries sent and not yet acknowledged");
    public static final Setting<JournalSettings, Long> MAX_PENDING_BYTES = SPEC.longInteger(
            "journal.max.pending.bytes", 64L << 20, null, JournalSettings::maxPendingBytes,
            "unacknowledged bytes before appends block");
    public static final Setting<JournalSettings, Long> LEDGER_MAX_BYTES = SPEC.longInteger("journal.ledger.max.bytes",
            256L << 20, null, JournalSettings::ledgerMaxBytes, "roll over to a new ledger after this many bytes");
    public static final Setting<JournalSettings, Long> LEDGER_MAX_ENTRIES = SPEC.longInteger(
            "journal.ledger.max.entries", 1_000_000, null, JournalSettings::ledgerMaxEntries,
            "... or after this many entries");
    public static final Setting<JournalSettings, Long> WRITE_RETRY_MS = SPEC.longInteger("journal.write.retry.ms",
            10_000, null, JournalSettings::writeRetryMs, "after a write failure, keep trying new ledgers this long"
                    + " before giving up (fatal); also the longest an add may stay pending (at least BookKeeper's 5 s"
                    + " add timeout)");
    public static final Setting<JournalSettings, String> PASSWORD = SPEC.of("journal.password", SECRET, "sibyl",
            JournalSettings::password, "BookKeeper ledger password (same on every oracle)");
    public static final Setting<JournalSettings, String> LEADER_ZNODE = SPEC.trimmed("journal.leader.znode",
            "/sibyl/oracle/leader", JournalSettings::leaderZnode,
            "ephemeral znode where the serving oracle announces itself");
    public static final Setting<JournalSettings, String> ELECTION_ZNODE = SPEC.trimmed("journal.election.znode",
            "/sibyl/oracle/election", JournalSettings::electionZnode, "parent of the HA candidates' znodes (ha=true)");
    public static final Setting<JournalSettings, Integer> RETAIN_LEDGERS_MIN = SPEC.integer(
            "journal.retain.ledgers.min", 1, null, JournalSettings::retainLedgersMin,
            "ledgers kept at least when a checkpoint lets older ones be deleted");
    public static final Setting<JournalSettings, Boolean> SWEEP_ORPHANS = SPEC.of("journal.sweep.orphans",
            TRUE_OR_FALSE, true, JournalSettings::sweepOrphans, "a new leader deletes unregistered ledgers of earlier epochs of its"
                    + " registry");
    public static final Setting<JournalSettings, String> ZK_AUTH_FILE = SPEC.trimmed("journal.zk.auth.file", "",
            JournalSettings::zkAuthFile, "file holding user:password, the oracle's ZooKeeper digest identity (empty:"
                    + " none; SASL comes from the JAAS configuration)");
    public static final Setting<JournalSettings, String> ZK_ACL = SPEC.trimmed("journal.zk.acl",
            JournalSettings.ACL_OPEN, JournalSettings::zkAcl, "open: anyone may change the oracle's znodes; secure:"
                    + " only the oracle's identity, others read (journal.zk.acl.readers)");
    public static final Setting<JournalSettings, String> ZK_ACL_READERS = SPEC.trimmed("journal.zk.acl.readers",
            "world:anyone", JournalSettings::zkAclReaders, "with journal.zk.acl=secure: ZooKeeper ids (scheme:id,"
                    + " comma-separated) that may read the oracle's znodes");

    private static boolean trueOrFalse(String key, String text) {
        return switch (text.trim().toLowerCase(Locale.ROOT)) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException("must be true or false");
        };
    }
}
