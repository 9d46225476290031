package io.sibyl.oracle.journal;

import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.Stat;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * The journal's ledger list in one ZooKeeper znode (default {@code /sibyl/oracle/ledgers}), oldest first, with the
 * epoch of the oracle that writes it. Every change is a compare-and-set on the znode version, which makes the znode
 * the first fence of a takeover: recovery {@link #fence bumps the epoch} before it fences any ledger, so a deposed
 * writer can no longer register a new ledger (and, since a ledger is registered before its first entry is written,
 * it can no longer write anywhere recovery will not look).
 *
 * <p>Format (UTF-8 text, readable with {@code zkCli get}):
 * <pre>
 * sibyl-ledgers 1
 * epoch 7
 * owner host/pid/random
 * ledgers 12 15 16
 * deleted 9
 * </pre>
 * The {@code deleted} line (absent while no ledger was ever dropped, so older registries read unchanged) counts the
 * ledgers dropped from the head of the list after a checkpoint ({@link #dropLedgers}). When it is non-zero, the first
 * listed ledger holds a checkpoint, and recovery insists on finding one there.
 */
public final class LedgerRegistry {
    private static final String MAGIC = "sibyl-ledgers 1";
    private static final int ATTEMPTS = 30;
    private static final long RETRY_SLEEP_MS = 100;

    /**
     * One version of the registry: {@code version} is the znode version, -1 when the znode does not exist;
     * {@code deleted} counts the ledgers ever dropped from the head of the list.
     */
    public record Snapshot(long epoch, String owner, List<Long> ledgers, int version, long deleted) {
        public Snapshot {
            ledgers = List.copyOf(ledgers);
        }

        /** A registry from which no ledger was ever dropped. */
        public Snapshot(long epoch, String owner, List<Long> ledgers, int version) {
            this(epoch, owner, ledgers, version, 0);
        }

        Snapshot withLedger(long ledgerId) {
            List<Long> l = new ArrayList<>(ledgers);
            l.add(ledgerId);
            return new Snapshot(epoch, owner, l, version, deleted);
        }

        Snapshot withVersion(int v) {
            return new Snapshot(epoch, owner, ledgers, v, deleted);
        }

        /** Same content (ignoring the znode version). */
        boolean sameContent(Snapshot o) {
            return epoch == o.epoch && owner.equals(o.owner) && ledgers.equals(o.ledgers) && deleted == o.deleted;
        }
    }

    /** The registry was changed by someone else: a newer oracle took over. */
    public static final class FencedException extends IOException {
        FencedException(String message) {
            super(message);
        }
    }

    private final ZooKeeper zk;
    private final String path;
    private final ZnodeAcl acl;

    /** A registry whose znode, if this creates it, is open to anyone ({@code journal.zk.acl=open}). */
    public LedgerRegistry(ZooKeeper zk, String path) {
        this(zk, path, ZnodeAcl.OPEN);
    }

    /** A registry whose znode and parents, if this creates them, get {@code acl}. */
    public LedgerRegistry(ZooKeeper zk, String path, ZnodeAcl acl) {
        this.zk = zk;
        this.path = path;
        this.acl = acl;
    }

    public String path() {
        return path;
    }

    public ZooKeeper zooKeeper() {
        return zk;
    }

    /** Current content; an absent znode reads as epoch 0 with no ledgers. */
    public Snapshot read() throws IOException, InterruptedException {
        for (int attempt = 1; ; attempt++) {
            try {
                Stat stat = new Stat();
                byte[] data = zk.getData(path, false, stat);
                return decode(data, stat.getVersion());
            } catch (KeeperException.NoNodeException e) {
                return new Snapshot(0, "", List.of(), -1);
            } catch (KeeperException.ConnectionLossException e) {
                retryOrThrow(attempt, "read", e);
            } catch (KeeperException e) {
                throw acl.refused("reading the ledger registry", path, e);
            }
        }
    }

    /**
     * Takes the registry over for {@code owner}: writes the next epoch with a compare-and-set, retrying if another
     * writer changes it meanwhile. After this returns, a writer of an older epoch fails to register ledgers.
     */
    public Snapshot fence(String owner) throws IOException, InterruptedException {
        for (int attempt = 1; ; attempt++) {
            Snapshot current = read();
            Snapshot next = new Snapshot(current.epoch() + 1, owner, current.ledgers(), current.version(),
                    current.deleted());
            try {
                if (current.version() < 0) {
                    acl.createParents(zk, path);
                    zk.create(path, encode(next), acl.list(), CreateMode.PERSISTENT);
                    return next.withVersion(0);
                }
                Stat stat = zk.setData(path, encode(next), current.version());
                return next.withVersion(stat.getVersion());
            } catch (KeeperException.NodeExistsException | KeeperException.BadVersionException e) {
                // Someone else fenced or wrote meanwhile (or our own write went through before a connection loss):
                // read again; if the content is ours, we won.
                Snapshot now = read();
                if (now.epoch() == next.epoch() && now.owner().equals(owner)) {
                    return now;
                }
            } catch (KeeperException.ConnectionLossException e) {
                Snapshot now = read();
                if (now.epoch() == next.epoch() && now.owner().equals(owner)) {
                    return now;
                }
                retryOrThrow(attempt, "fence", e);
            } catch (KeeperException e) {
                throw acl.refused("fencing the ledger registry", path, e);
            }
        }
    }

    /**
     * Appends {@code ledgerId} if the registry is still exactly {@code expected}; returns the new version.
     *
     * @throws FencedException if anyone else changed the registry since {@code expected}
     */
    public Snapshot addLedger(Snapshot expected, long ledgerId) throws IOException, InterruptedException {
        return replace(expected, expected.withLedger(ledgerId), "register ledger " + ledgerId);
    }

    /**
     * Drops the first {@code count} ledgers if the registry is still exactly {@code expected} (same epoch fence as
     * {@link #addLedger}): the caller deletes them in BookKeeper only after this returns, so a crash in between
     * leaves unregistered ledgers that nothing reads (orphans), never a registered ledger that is gone.
     *
     * @throws FencedException if anyone else changed the registry since {@code expected}
     */
    public Snapshot dropLedgers(Snapshot expected, int count) throws IOException, InterruptedException {
        if (count < 1 || count >= expected.ledgers().size()) {
            throw new IllegalArgumentException("cannot drop " + count + " of the ledgers " + expected.ledgers()
                    + " (at least the newest stays)");
        }
        Snapshot next = new Snapshot(expected.epoch(), expected.owner(),
                expected.ledgers().subList(count, expected.ledgers().size()), expected.version(),
                expected.deleted() + count);
        return replace(expected, next, "drop ledgers " + expected.ledgers().subList(0, count));
    }

    private Snapshot replace(Snapshot expected, Snapshot next, String what) throws IOException, InterruptedException {
        for (int attempt = 1; ; attempt++) {
            try {
                Stat stat = zk.setData(path, encode(next), expected.version());
                return next.withVersion(stat.getVersion());
            } catch (KeeperException.BadVersionException | KeeperException.NoNodeException e) {
                Snapshot now = read();
                if (now.sameContent(next) && now.version() == expected.version() + 1) {
                    return now; // our write landed before a connection loss hid its reply
                }
                throw new FencedException("ledger registry " + path + " changed under epoch " + expected.epoch()
                        + ": now epoch " + now.epoch() + " of " + now.owner());
            } catch (KeeperException.ConnectionLossException e) {
                retryOrThrow(attempt, what, e);
            } catch (KeeperException e) {
                throw acl.refused(what + " in the ledger registry", path, e);
            }
        }
    }

    private void retryOrThrow(int attempt, String what, KeeperException e) throws IOException, InterruptedException {
        if (attempt >= ATTEMPTS) {
            throw new IOException("ledger registry " + path + ": " + what + " failed " + attempt + " times", e);
        }
        Thread.sleep(RETRY_SLEEP_MS);
    }

    static byte[] encode(Snapshot s) {
        StringBuilder b = new StringBuilder(64 + s.ledgers().size() * 8);
        b.append(MAGIC).append('\n');
        b.append("epoch ").append(s.epoch()).append('\n');
        b.append("owner ").append(s.owner()).append('\n');
        b.append("ledgers");
        for (long id : s.ledgers()) {
            b.append(' ').append(id);
        }
        b.append('\n');
        if (s.deleted() > 0) {
            b.append("deleted ").append(s.deleted()).append('\n');
        }
        return b.toString().getBytes(StandardCharsets.UTF_8);
    }

    static Snapshot decode(byte[] data, int version) throws IOException {
        String[] lines = new String(data, StandardCharsets.UTF_8).split("\n");
        if (lines.length < 4 || !lines[0].equals(MAGIC) || !lines[1].startsWith("epoch ")
                || !lines[2].startsWith("owner ") || !lines[3].startsWith("ledgers")) {
            throw new IOException("ledger registry znode is not in the '" + MAGIC + "' format");
        }
        try {
            long epoch = Long.parseLong(lines[1].substring(6).trim());
            String owner = lines[2].substring(6).trim();
            List<Long> ledgers = new ArrayList<>();
            for (String t : lines[3].substring(7).trim().split(" ")) {
                if (!t.isEmpty()) {
                    ledgers.add(Long.parseLong(t));
                }
            }
            long deleted = 0;
            if (lines.length > 4 && lines[4].startsWith("deleted ")) {
                deleted = Long.parseLong(lines[4].substring(8).trim());
            }
            return new Snapshot(epoch, owner, ledgers, version, deleted);
        } catch (NumberFormatException e) {
            throw new IOException("malformed ledger registry znode", e);
        }
    }
}
