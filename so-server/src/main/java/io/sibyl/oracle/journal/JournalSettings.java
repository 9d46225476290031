package io.sibyl.oracle.journal;

import java.util.Map;
import java.util.Properties;
import java.util.function.Consumer;

import static io.sibyl.oracle.journal.JournalKeys.*;

/**
 * Settings of the BookKeeper journal, its ledger registry and recovery. Every key starts with {@code journal.} and is
 * declared, with its default and meaning, in {@link JournalKeys}; {@link #describe()} and docs/journal.md list them.
 *
 * @param zkConnect             ZooKeeper connect string (ledger registry, and BookKeeper metadata by default)
 * @param zkSessionTimeoutMs    ZooKeeper session timeout of the oracle's own session
 * @param metadataServiceUri    BookKeeper metadata service URI; empty means {@code zk+null://<zkConnect>/ledgers}
 * @param ledgersZnode          znode listing this oracle's journal ledgers in order
 * @param ensembleSize          bookies each ledger is striped over; keep it below the number of bookies, or a recovery
 *                              cannot close the last ledger while one of its bookies is down
 * @param writeQuorum           bookies each entry is written to
 * @param ackQuorum             bookies that must acknowledge an entry before it is durable
 * @param groupMaxBytes         an entry is sent as soon as its blocks reach this size
 * @param groupMaxDelayMicros   a block waits at most this long for others to share its entry
 * @param flushWhenIdle         with no add in flight, a block is sent at once instead of waiting for company
 * @param maxAddsInFlight       entries sent and not yet acknowledged; further blocks accumulate meanwhile
 * @param maxPendingBytes       bytes appended and not yet acknowledged before {@code append} blocks its caller
 * @param ledgerMaxBytes        a new ledger is started once the current one holds this many bytes
 * @param ledgerMaxEntries      ... or this many entries
 * @param writeRetryMs          after a write failure, how long new ledgers are tried before the error is fatal
 * @param password              BookKeeper ledger password (all oracles of one deployment must agree)
 * @param leaderZnode           ephemeral znode the serving oracle announces itself in ({@code LeaderRecord})
 * @param electionZnode         parent of the candidates' ephemeral sequential znodes ({@code so-server --ha=true})
 * @param retainLedgersMin      ledgers kept registered at least when older ones could be deleted after a checkpoint
 * @param sweepOrphans          a new leader deletes the unregistered ledgers of earlier epochs of its registry
 * @param zkAuthFile            file holding the oracle's ZooKeeper digest credentials, {@code user:password}; empty:
 *                              none (SASL, if the JVM's JAAS configuration has a {@code Client} section, still works)
 * @param zkAcl                 {@value #ACL_OPEN}: the oracle's znodes are open to anyone (as before ACLs);
 *                              {@value #ACL_SECURE}: the oracle's authenticated identity may do anything, the
 *                              {@code zkAclReaders} may read, nobody else anything ({@link ZnodeAcl})
 * @param zkAclReaders          with {@value #ACL_SECURE}: comma-separated ZooKeeper ids ({@code scheme:id}) given READ
 *                              on the oracle's znodes; {@code world:anyone} (the default) lets every client read
 */
public record JournalSettings(
        String zkConnect,
        int zkSessionTimeoutMs,
        String metadataServiceUri,
        String ledgersZnode,
        int ensembleSize,
        int writeQuorum,
        int ackQuorum,
        int groupMaxBytes,
        long groupMaxDelayMicros,
        boolean flushWhenIdle,
        int maxAddsInFlight,
        long maxPendingBytes,
        long ledgerMaxBytes,
        long ledgerMaxEntries,
        long writeRetryMs,
        String password,
        String leaderZnode,
        String electionZnode,
        int retainLedgersMin,
        boolean sweepOrphans,
        String zkAuthFile,
        String zkAcl,
        String zkAclReaders) {

    /** Prefix of every journal key. */
    public static final String PREFIX = "journal.";
    /** {@code journal.zk.acl} value: the oracle's znodes are open to anyone (the behaviour before ACLs). */
    public static final String ACL_OPEN = "open";
    /** {@code journal.zk.acl} value: only the oracle's identity writes its znodes; the readers may read. */
    public static final String ACL_SECURE = "secure";

    /** The declared defaults ({@link JournalKeys}). */
    public static JournalSettings defaults() {
        return fromProperties(new Properties());
    }

    public JournalSettings {
        require(!zkConnect.isBlank(), "journal.zk.connect", zkConnect);
        require(zkSessionTimeoutMs >= 1000, "journal.zk.session.timeout.ms", zkSessionTimeoutMs);
        require(isZnodePath(ledgersZnode), "journal.ledgers.znode", ledgersZnode);
        require(ackQuorum >= 1, "journal.ack.quorum", ackQuorum);
        require(writeQuorum >= ackQuorum, "journal.write.quorum (must be >= journal.ack.quorum)", writeQuorum);
        require(ensembleSize >= writeQuorum, "journal.ensemble.size (must be >= journal.write.quorum)",
                ensembleSize);
        require(groupMaxBytes >= 64 && groupMaxBytes <= 4 << 20, "journal.group.max.bytes (64 B to 4 MB)",
                groupMaxBytes);
        require(groupMaxDelayMicros >= 0, "journal.group.max.delay.us", groupMaxDelayMicros);
        require(maxAddsInFlight >= 1, "journal.max.adds.in.flight", maxAddsInFlight);
        require(maxPendingBytes >= groupMaxBytes, "journal.max.pending.bytes (must be >= journal.group.max.bytes)",
                maxPendingBytes);
        require(ledgerMaxBytes >= groupMaxBytes, "journal.ledger.max.bytes", ledgerMaxBytes);
        require(ledgerMaxEntries >= 1, "journal.ledger.max.entries", ledgerMaxEntries);
        require(writeRetryMs >= 0, "journal.write.retry.ms", writeRetryMs);
        require(!password.isEmpty(), "journal.password", password);
        require(isZnodePath(leaderZnode), "journal.leader.znode", leaderZnode);
        require(isZnodePath(electionZnode) && !electionZnode.equals(leaderZnode)
                && !leaderZnode.startsWith(electionZnode + "/"), "journal.election.znode (a path of its own)",
                electionZnode);
        require(retainLedgersMin >= 1, "journal.retain.ledgers.min", retainLedgersMin);
        require(zkAuthFile != null, "journal.zk.auth.file", zkAuthFile);
        require(ACL_OPEN.equals(zkAcl) || ACL_SECURE.equals(zkAcl), "journal.zk.acl (" + ACL_OPEN + " or "
                + ACL_SECURE + ")", zkAcl);
        require(ZnodeAcl.validReaders(zkAclReaders), "journal.zk.acl.readers (comma-separated scheme:id, such as"
                + " world:anyone or sasl:hbase)", zkAclReaders);
    }

    private static boolean isZnodePath(String path) {
        return path.startsWith("/") && !path.endsWith("/") && path.length() > 1 && !path.contains("//");
    }

    private static void require(boolean ok, String key, Object value) {
        if (!ok) {
            throw new IllegalArgumentException("invalid value '" + value + "' for " + key + "; see docs/journal.md");
        }
    }

    /** The BookKeeper metadata service URI: the configured one, or the ZooKeeper ensemble's {@code /ledgers}. */
    public String effectiveMetadataServiceUri() {
        if (!metadataServiceUri.isBlank()) {
            return metadataServiceUri;
        }
        return "zk+null://" + zkConnect.replace(',', ';') + "/ledgers";
    }

    public JournalSettings withZooKeeper(String connect, String metadataUri) {
        return copy(b -> {
            b.zkConnect = connect;
            b.metadataServiceUri = metadataUri;
        });
    }

    public JournalSettings withLedgersZnode(String znode) {
        return copy(b -> b.ledgersZnode = znode);
    }

    public JournalSettings withQuorums(int ensemble, int write, int ack) {
        return copy(b -> {
            b.ensembleSize = ensemble;
            b.writeQuorum = write;
            b.ackQuorum = ack;
        });
    }

    public JournalSettings withGroupCommit(int maxBytes, long maxDelayMicros, boolean whenIdle, int addsInFlight) {
        return copy(b -> {
            b.groupMaxBytes = maxBytes;
            b.groupMaxDelayMicros = maxDelayMicros;
            b.flushWhenIdle = whenIdle;
            b.maxAddsInFlight = addsInFlight;
        });
    }

    public JournalSettings withRollover(long maxBytes, long maxEntries) {
        return copy(b -> {
            b.ledgerMaxBytes = maxBytes;
            b.ledgerMaxEntries = maxEntries;
        });
    }

    /** Copy with the leader znode and the election parent znode (docs/operations.md, "High availability"). */
    public JournalSettings withLeaderZnodes(String leader, String election) {
        return copy(b -> {
            b.leaderZnode = leader;
            b.electionZnode = election;
        });
    }

    public JournalSettings withWriteRetryMs(long millis) {
        return copy(b -> b.writeRetryMs = millis);
    }

    /** Copy with at least {@code min} ledgers kept registered after checkpoints allow deleting older ones. */
    public JournalSettings withRetainLedgersMin(int min) {
        return copy(b -> b.retainLedgersMin = min);
    }

    /** Copy with the oracle's ZooKeeper credentials file, ACL mode and readers (docs/operations.md, "Security"). */
    public JournalSettings withZooKeeperAcl(String authFile, String acl, String readers) {
        return copy(b -> {
            b.zkAuthFile = authFile;
            b.zkAcl = acl;
            b.zkAclReaders = readers;
        });
    }

    /** Copy that sweeps (or leaves) orphan ledgers of earlier epochs when it starts as leader. */
    public JournalSettings withSweepOrphans(boolean sweep) {
        return copy(b -> b.sweepOrphans = sweep);
    }

    /** A copy with {@code change} made to its settings (the {@code withX} methods). */
    private JournalSettings copy(Consumer<JournalSettingsBuilder> change) {
        JournalSettingsBuilder b = new JournalSettingsBuilder(this);
        change.accept(b);
        return b.build();
    }

    /**
     * Reads the {@code journal.*} keys of {@code p}; missing keys keep their defaults, keys that do not start with
     * {@code journal.} are ignored (they belong to the oracle), unknown {@code journal.*} keys are an error.
     */
    public static JournalSettings fromProperties(Properties p) {
        SPEC.refuseUnknown(p, key -> key.startsWith(PREFIX), "");
        return new JournalSettings(ZK_CONNECT.read(p), ZK_SESSION_TIMEOUT_MS.read(p), BK_METADATA_URI.read(p),
                LEDGERS_ZNODE.read(p), ENSEMBLE_SIZE.read(p), WRITE_QUORUM.read(p), ACK_QUORUM.read(p),
                GROUP_MAX_BYTES.read(p), GROUP_MAX_DELAY_US.read(p), GROUP_FLUSH_WHEN_IDLE.read(p),
                MAX_ADDS_IN_FLIGHT.read(p), MAX_PENDING_BYTES.read(p), LEDGER_MAX_BYTES.read(p),
                LEDGER_MAX_ENTRIES.read(p), WRITE_RETRY_MS.read(p), PASSWORD.read(p), LEADER_ZNODE.read(p),
                ELECTION_ZNODE.read(p), RETAIN_LEDGERS_MIN.read(p), SWEEP_ORPHANS.read(p), ZK_AUTH_FILE.read(p),
                ZK_ACL.read(p), ZK_ACL_READERS.read(p));
    }

    /** Every setting with its current value and what it is for (the password is not shown). */
    public Map<String, String> describe() {
        return SPEC.describe(this);
    }
}
