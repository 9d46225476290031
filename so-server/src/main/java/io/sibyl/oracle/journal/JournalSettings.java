package io.sibyl.oracle.journal;

import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Properties;

/**
 * Settings of the BookKeeper journal, its ledger registry and recovery. Every key starts with {@code journal.}; the
 * keys, defaults and meanings are listed by {@link #describe()} and in docs/journal.md.
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

    public static JournalSettings defaults() {
        // Ensemble 2, not 3: a recovery re-writes the dead writer's unconfirmed entries to their write set and needs a
        // bookie outside the ledger's ensemble to stand in for a lost one, so with three bookies a ledger on all three
        // could not be recovered (no oracle could take over) while one of them is down.
        return new JournalSettings("127.0.0.1:2181", 10_000, "", "/sibyl/oracle/ledgers", 2, 2, 2,
                64 * 1024, 1000, true, 32, 64L << 20, 256L << 20, 1_000_000, 10_000, "sibyl", "/sibyl/oracle/leader",
                "/sibyl/oracle/election", 1, true, "", ACL_OPEN, "world:anyone");
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
        return new JournalSettings(connect, zkSessionTimeoutMs, metadataUri, ledgersZnode, ensembleSize, writeQuorum,
                ackQuorum, groupMaxBytes, groupMaxDelayMicros, flushWhenIdle, maxAddsInFlight, maxPendingBytes,
                ledgerMaxBytes, ledgerMaxEntries, writeRetryMs, password, leaderZnode, electionZnode,
                retainLedgersMin, sweepOrphans, zkAuthFile, zkAcl, zkAclReaders);
    }

    public JournalSettings withLedgersZnode(String znode) {
        return new JournalSettings(zkConnect, zkSessionTimeoutMs, metadataServiceUri, znode, ensembleSize,
                writeQuorum, ackQuorum, groupMaxBytes, groupMaxDelayMicros, flushWhenIdle, maxAddsInFlight,
                maxPendingBytes, ledgerMaxBytes, ledgerMaxEntries, writeRetryMs, password, leaderZnode,
                electionZnode, retainLedgersMin, sweepOrphans, zkAuthFile, zkAcl, zkAclReaders);
    }

    public JournalSettings withQuorums(int ensemble, int write, int ack) {
        return new JournalSettings(zkConnect, zkSessionTimeoutMs, metadataServiceUri, ledgersZnode, ensemble, write,
                ack, groupMaxBytes, groupMaxDelayMicros, flushWhenIdle, maxAddsInFlight, maxPendingBytes,
                ledgerMaxBytes, ledgerMaxEntries, writeRetryMs, password, leaderZnode, electionZnode,
                retainLedgersMin, sweepOrphans, zkAuthFile, zkAcl, zkAclReaders);
    }

    public JournalSettings withGroupCommit(int maxBytes, long maxDelayMicros, boolean whenIdle, int addsInFlight) {
        return new JournalSettings(zkConnect, zkSessionTimeoutMs, metadataServiceUri, ledgersZnode, ensembleSize,
                writeQuorum, ackQuorum, maxBytes, maxDelayMicros, whenIdle, addsInFlight, maxPendingBytes,
                ledgerMaxBytes, ledgerMaxEntries, writeRetryMs, password, leaderZnode, electionZnode,
                retainLedgersMin, sweepOrphans, zkAuthFile, zkAcl, zkAclReaders);
    }

    public JournalSettings withRollover(long maxBytes, long maxEntries) {
        return new JournalSettings(zkConnect, zkSessionTimeoutMs, metadataServiceUri, ledgersZnode, ensembleSize,
                writeQuorum, ackQuorum, groupMaxBytes, groupMaxDelayMicros, flushWhenIdle, maxAddsInFlight,
                maxPendingBytes, maxBytes, maxEntries, writeRetryMs, password, leaderZnode, electionZnode,
                retainLedgersMin, sweepOrphans, zkAuthFile, zkAcl, zkAclReaders);
    }

    /** Copy with the leader znode and the election parent znode (docs/operations.md, "High availability"). */
    public JournalSettings withLeaderZnodes(String leader, String election) {
        return new JournalSettings(zkConnect, zkSessionTimeoutMs, metadataServiceUri, ledgersZnode, ensembleSize,
                writeQuorum, ackQuorum, groupMaxBytes, groupMaxDelayMicros, flushWhenIdle, maxAddsInFlight,
                maxPendingBytes, ledgerMaxBytes, ledgerMaxEntries, writeRetryMs, password, leader, election,
                retainLedgersMin, sweepOrphans, zkAuthFile, zkAcl, zkAclReaders);
    }

    public JournalSettings withWriteRetryMs(long millis) {
        return new JournalSettings(zkConnect, zkSessionTimeoutMs, metadataServiceUri, ledgersZnode, ensembleSize,
                writeQuorum, ackQuorum, groupMaxBytes, groupMaxDelayMicros, flushWhenIdle, maxAddsInFlight,
                maxPendingBytes, ledgerMaxBytes, ledgerMaxEntries, millis, password, leaderZnode, electionZnode,
                retainLedgersMin, sweepOrphans, zkAuthFile, zkAcl, zkAclReaders);
    }

    /** Copy with at least {@code min} ledgers kept registered after checkpoints allow deleting older ones. */
    public JournalSettings withRetainLedgersMin(int min) {
        return new JournalSettings(zkConnect, zkSessionTimeoutMs, metadataServiceUri, ledgersZnode, ensembleSize,
                writeQuorum, ackQuorum, groupMaxBytes, groupMaxDelayMicros, flushWhenIdle, maxAddsInFlight,
                maxPendingBytes, ledgerMaxBytes, ledgerMaxEntries, writeRetryMs, password, leaderZnode, electionZnode,
                min, sweepOrphans, zkAuthFile, zkAcl, zkAclReaders);
    }

    /** Copy with the oracle's ZooKeeper credentials file, ACL mode and readers (docs/operations.md, "Security"). */
    public JournalSettings withZooKeeperAcl(String authFile, String acl, String readers) {
        return new JournalSettings(zkConnect, zkSessionTimeoutMs, metadataServiceUri, ledgersZnode, ensembleSize,
                writeQuorum, ackQuorum, groupMaxBytes, groupMaxDelayMicros, flushWhenIdle, maxAddsInFlight,
                maxPendingBytes, ledgerMaxBytes, ledgerMaxEntries, writeRetryMs, password, leaderZnode, electionZnode,
                retainLedgersMin, sweepOrphans, authFile, acl, readers);
    }

    /** Copy that sweeps (or leaves) orphan ledgers of earlier epochs when it starts as leader. */
    public JournalSettings withSweepOrphans(boolean sweep) {
        return new JournalSettings(zkConnect, zkSessionTimeoutMs, metadataServiceUri, ledgersZnode, ensembleSize,
                writeQuorum, ackQuorum, groupMaxBytes, groupMaxDelayMicros, flushWhenIdle, maxAddsInFlight,
                maxPendingBytes, ledgerMaxBytes, ledgerMaxEntries, writeRetryMs, password, leaderZnode, electionZnode,
                retainLedgersMin, sweep, zkAuthFile, zkAcl, zkAclReaders);
    }

    /**
     * Reads the {@code journal.*} keys of {@code p}; missing keys keep their defaults, keys that do not start with
     * {@code journal.} are ignored (they belong to the oracle), unknown {@code journal.*} keys are an error.
     */
    public static JournalSettings fromProperties(Properties p) {
        JournalSettings d = defaults();
        Map<String, String> known = d.describe();
        for (String key : p.stringPropertyNames()) {
            if (key.startsWith(PREFIX) && !known.containsKey(key)) {
                throw new IllegalArgumentException("unknown journal setting '" + key + "'; known settings: "
                        + known.keySet());
            }
        }
        return new JournalSettings(
                p.getProperty("journal.zk.connect", d.zkConnect).trim(),
                intOf(p, "journal.zk.session.timeout.ms", d.zkSessionTimeoutMs),
                p.getProperty("journal.bk.metadata.uri", d.metadataServiceUri).trim(),
                p.getProperty("journal.ledgers.znode", d.ledgersZnode).trim(),
                intOf(p, "journal.ensemble.size", d.ensembleSize),
                intOf(p, "journal.write.quorum", d.writeQuorum),
                intOf(p, "journal.ack.quorum", d.ackQuorum),
                intOf(p, "journal.group.max.bytes", d.groupMaxBytes),
                longOf(p, "journal.group.max.delay.us", d.groupMaxDelayMicros),
                boolOf(p, "journal.group.flush.when.idle", d.flushWhenIdle),
                intOf(p, "journal.max.adds.in.flight", d.maxAddsInFlight),
                longOf(p, "journal.max.pending.bytes", d.maxPendingBytes),
                longOf(p, "journal.ledger.max.bytes", d.ledgerMaxBytes),
                longOf(p, "journal.ledger.max.entries", d.ledgerMaxEntries),
                longOf(p, "journal.write.retry.ms", d.writeRetryMs),
                p.getProperty("journal.password", d.password),
                p.getProperty("journal.leader.znode", d.leaderZnode).trim(),
                p.getProperty("journal.election.znode", d.electionZnode).trim(),
                intOf(p, "journal.retain.ledgers.min", d.retainLedgersMin),
                boolOf(p, "journal.sweep.orphans", d.sweepOrphans),
                p.getProperty("journal.zk.auth.file", d.zkAuthFile).trim(),
                p.getProperty("journal.zk.acl", d.zkAcl).trim(),
                p.getProperty("journal.zk.acl.readers", d.zkAclReaders).trim());
    }

    private static int intOf(Properties p, String key, int dflt) {
        long v = longOf(p, key, dflt);
        if (v != (int) v) {
            throw new IllegalArgumentException("setting '" + key + "' is out of range: " + v);
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

    private static boolean boolOf(Properties p, String key, boolean dflt) {
        String v = p.getProperty(key);
        if (v == null) {
            return dflt;
        }
        return switch (v.trim().toLowerCase()) {
            case "true" -> true;
            case "false" -> false;
            default -> throw new IllegalArgumentException("setting '" + key + "' must be true or false, got '" + v + "'");
        };
    }

    /** Every setting with its current value and what it is for (the password is not shown). */
    public Map<String, String> describe() {
        Map<String, String> m = new LinkedHashMap<>();
        m.put("journal.zk.connect", zkConnect + "  # ZooKeeper ensemble: ledger registry (and BookKeeper metadata)");
        m.put("journal.zk.session.timeout.ms", zkSessionTimeoutMs
                + "  # oracle's ZooKeeper session; losing it is fatal");
        m.put("journal.bk.metadata.uri", (metadataServiceUri.isBlank() ? "" : metadataServiceUri)
                + "  # BookKeeper metadata URI; empty = zk+null://<journal.zk.connect>/ledgers");
        m.put("journal.ledgers.znode", ledgersZnode + "  # znode listing the journal's ledgers, oldest first");
        m.put("journal.ensemble.size", ensembleSize
                + "  # bookies per ledger; keep it below the number of bookies (a takeover needs a spare)");
        m.put("journal.write.quorum", writeQuorum + "  # bookies each entry is written to");
        m.put("journal.ack.quorum", ackQuorum + "  # acknowledgements that make an entry durable");
        m.put("journal.group.max.bytes", groupMaxBytes + "  # group commit: send an entry once it is this large");
        m.put("journal.group.max.delay.us", groupMaxDelayMicros
                + "  # group commit: longest a block waits for company (microseconds)");
        m.put("journal.group.flush.when.idle", flushWhenIdle + "  # send at once when no add is in flight");
        m.put("journal.max.adds.in.flight", maxAddsInFlight + "  # entries sent and not yet acknowledged");
        m.put("journal.max.pending.bytes", maxPendingBytes + "  # unacknowledged bytes before appends block");
        m.put("journal.ledger.max.bytes", ledgerMaxBytes + "  # roll over to a new ledger after this many bytes");
        m.put("journal.ledger.max.entries", ledgerMaxEntries + "  # ... or after this many entries");
        m.put("journal.write.retry.ms", writeRetryMs
                + "  # after a write failure, keep trying new ledgers this long before giving up (fatal); also the"
                + " longest an add may stay pending (at least BookKeeper's 5 s add timeout)");
        m.put("journal.password", "*****  # BookKeeper ledger password (same on every oracle)");
        m.put("journal.leader.znode", leaderZnode + "  # ephemeral znode where the serving oracle announces itself");
        m.put("journal.election.znode", electionZnode + "  # parent of the HA candidates' znodes (ha=true)");
        m.put("journal.retain.ledgers.min", retainLedgersMin
                + "  # ledgers kept at least when a checkpoint lets older ones be deleted");
        m.put("journal.sweep.orphans", sweepOrphans
                + "  # a new leader deletes unregistered ledgers of earlier epochs of its registry");
        m.put("journal.zk.auth.file", zkAuthFile + "  # file holding user:password, the oracle's ZooKeeper digest"
                + " identity (empty: none; SASL comes from the JAAS configuration)");
        m.put("journal.zk.acl", zkAcl + "  # open: anyone may change the oracle's znodes; secure: only the oracle's"
                + " identity, others read (journal.zk.acl.readers)");
        m.put("journal.zk.acl.readers", zkAclReaders + "  # with journal.zk.acl=secure: ZooKeeper ids (scheme:id,"
                + " comma-separated) that may read the oracle's znodes");
        return m;
    }
}
