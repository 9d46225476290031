package io.sibyl.oracle.journal;

import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;
import org.apache.zookeeper.data.ACL;
import org.apache.zookeeper.data.ClientInfo;
import org.apache.zookeeper.data.Id;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Set;

/**
 * The ACL every znode the oracle creates gets ({@code journal.zk.acl}): open to anyone, or ({@code secure}) all
 * rights for the identities the oracle's session authenticated as (ZooKeeper's {@code auth} scheme: its digest user,
 * its SASL principal) and READ for {@code journal.zk.acl.readers}. A znode's children can only be created or deleted
 * by who may CREATE or DELETE on the znode itself, so securing the parents (the election znode, the leader znode's
 * parent) is what stops a stranger from deleting a candidate's or the leader's ephemeral znode.
 */
public final class ZnodeAcl {
    private static final Logger LOG = LoggerFactory.getLogger(ZnodeAcl.class);

    /** Anyone may do anything: the oracle's znodes before ACLs, and {@code journal.zk.acl=open}. */
    public static final ZnodeAcl OPEN = new ZnodeAcl(ZooDefs.Ids.OPEN_ACL_UNSAFE, false);

    private final List<ACL> acl;
    private final boolean secure;

    private ZnodeAcl(List<ACL> acl, boolean secure) {
        this.acl = acl;
        this.secure = secure;
    }

    /** The ACL {@code s} asks for. */
    public static ZnodeAcl of(JournalSettings s) {
        if (!JournalSettings.ACL_SECURE.equals(s.zkAcl())) {
            return OPEN;
        }
        List<ACL> list = new ArrayList<>();
        list.add(new ACL(ZooDefs.Perms.ALL, ZooDefs.Ids.AUTH_IDS));
        for (Id reader : readers(s.zkAclReaders())) {
            list.add(new ACL(ZooDefs.Perms.READ, reader));
        }
        // Not List.copyOf: ZooKeeper checks the list with contains(null), which immutable lists refuse.
        return new ZnodeAcl(Collections.unmodifiableList(list), true);
    }

    /** Whether {@code readers} is a valid {@code journal.zk.acl.readers}: empty, or comma-separated scheme:id. */
    static boolean validReaders(String readers) {
        try {
            readers(readers);
            return true;
        } catch (IllegalArgumentException e) {
            return false;
        }
    }

    private static List<Id> readers(String readers) {
        List<Id> ids = new ArrayList<>();
        for (String entry : readers.split(",")) {
            String e = entry.strip();
            if (e.isEmpty()) {
                continue;
            }
            int colon = e.indexOf(':');
            if (colon <= 0 || colon == e.length() - 1) {
                throw new IllegalArgumentException(e);
            }
            ids.add(new Id(e.substring(0, colon), e.substring(colon + 1)));
        }
        return ids;
    }

    /** The ACL to create a znode with. */
    public List<ACL> list() {
        return acl;
    }

    /** Creates every missing ancestor of {@code path} (not {@code path} itself) as a persistent empty znode. */
    public void createParents(ZooKeeper zk, String path) throws KeeperException, InterruptedException {
        int i = 0;
        while ((i = path.indexOf('/', i + 1)) > 0) {
            String parent = path.substring(0, i);
            // Look before creating: ZooKeeper checks the CREATE right on the grandparent before it sees that the
            // znode exists, so creating an existing parent under someone else's znode would be refused.
            if (zk.exists(parent, false) != null) {
                continue;
            }
            try {
                zk.create(parent, new byte[0], acl, CreateMode.PERSISTENT);
            } catch (KeeperException.NodeExistsException e) {
                // created meanwhile
            }
        }
    }

    /**
     * For {@code journal.zk.acl=secure}, on a session just opened: checks that the session is authenticated, then
     * gives the oracle's znodes that exist (the registry, the leader znode, the election znode and their parents)
     * this ACL. Znodes an older oracle created open to anyone are so taken over at the first start with ACLs; one
     * that another identity holds is refused, naming the settings to fix. With {@code open} it does nothing.
     */
    public void secureExisting(ZooKeeper zk, JournalSettings s) throws IOException, InterruptedException {
        if (!secure) {
            return;
        }
        requireAuthenticated(zk);
        Set<String> paths = new LinkedHashSet<>();
        for (String p : List.of(s.ledgersZnode(), s.leaderZnode(), s.electionZnode())) {
            paths.add(p);
            String parent = p.substring(0, p.lastIndexOf('/'));
            if (!parent.isEmpty()) {
                paths.add(parent); // never "/": the root is the ZooKeeper administrator's
            }
        }
        for (String p : paths) {
            try {
                List<ACL> before = zk.getACL(p, null);
                zk.setACL(p, acl, -1);
                if (before.stream().anyMatch(a -> a.getId().equals(ZooDefs.Ids.ANYONE_ID_UNSAFE)
                        && a.getPerms() != ZooDefs.Perms.READ)) {
                    LOG.warn("znode {} was open to anyone (ACL {}, from an oracle without journal.zk.acl=secure or"
                            + " made by hand): gave it this oracle's ACL", p, before);
                }
            } catch (KeeperException.NoNodeException e) {
                // not created yet: it gets the ACL when it is
            } catch (KeeperException e) {
                throw refused("taking over the znode", p, e);
            }
        }
    }

    /** Refuses an unauthenticated session: with {@code auth} in the ACL, ZooKeeper would refuse every create. */
    private static void requireAuthenticated(ZooKeeper zk) throws IOException, InterruptedException {
        List<ClientInfo> who = zk.whoAmI();
        if (who == null) {
            return; // a ZooKeeper server before 3.7 cannot say; a create without identity still fails, as refused()
        }
        if (who.stream().noneMatch(c -> !c.getAuthScheme().equals("ip"))) {
            throw new IOException("journal.zk.acl=secure, but this oracle's ZooKeeper session is not authenticated"
                    + " (ZooKeeper sees " + describe(who) + "): set journal.zk.auth.file to a file holding"
                    + " user:password, or configure SASL (a JAAS Client section, -Djava.security.auth.login.config);"
                    + " see docs/operations.md, Security");
        }
        LOG.info("oracle's ZooKeeper identity: {}", describe(who));
    }

    private static String describe(List<ClientInfo> who) {
        List<String> ids = new ArrayList<>();
        for (ClientInfo c : who) {
            ids.add(c.getAuthScheme() + ":" + c.getUser());
        }
        return ids.toString();
    }

    /**
     * The error for a ZooKeeper refusal of {@code what} on {@code path}: for a NoAuth or InvalidACL it explains which
     * settings to fix; any other error is passed on with its message.
     */
    public IOException refused(String what, String path, KeeperException e) {
        if (e instanceof KeeperException.NoAuthException) {
            return new IOException(what + " " + path + ": ZooKeeper refused it (not authorized). The znode's ACL"
                    + " does not give this oracle's identity the right: every oracle of a deployment must authenticate"
                    + " as the identity that created the oracle's znodes, with the same journal.zk.auth.file (digest"
                    + " user:password) or SASL principal (this oracle has journal.zk.acl=" + (secure
                    ? JournalSettings.ACL_SECURE : JournalSettings.ACL_OPEN) + "); or a ZooKeeper administrator must"
                    + " give this identity the znode (setAcl); see docs/operations.md, Security", e);
        }
        if (e instanceof KeeperException.InvalidACLException) {
            return new IOException(what + " " + path + ": ZooKeeper refused the ACL " + acl + " (invalid ACL):"
                    + " journal.zk.acl=secure needs an authenticated session (journal.zk.auth.file, or SASL), and"
                    + " every entry of journal.zk.acl.readers must be an id ZooKeeper knows (world:anyone,"
                    + " digest:user:base64-sha1, sasl:principal, ip:address)", e);
        }
        return new IOException(what + " " + path + ": " + e.getMessage(), e);
    }
}
