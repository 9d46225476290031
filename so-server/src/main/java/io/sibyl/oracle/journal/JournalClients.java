package io.sibyl.oracle.journal;

import io.sibyl.protocol.DigestCredentials;
import org.apache.bookkeeper.client.BKException;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.conf.ClientConfiguration;
import org.apache.zookeeper.Watcher;
import org.apache.zookeeper.ZooKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.file.Path;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

/** Builds the ZooKeeper and BookKeeper clients the journal runs on, configured the way the journal expects. */
public final class JournalClients {
    private static final Logger LOG = LoggerFactory.getLogger(JournalClients.class);

    private JournalClients() {
    }

    /**
     * How long a starting oracle waits for its first ZooKeeper session at least. The session timeout bounds how long
     * a leader may stay cut off, which says nothing about how long a first connection may take on a busy machine;
     * the ZooKeeper client keeps trying meanwhile.
     */
    static final long FIRST_CONNECT_MIN_MS = 30_000;

    /**
     * Opens a ZooKeeper session as the oracle and waits (the session timeout, at least 30 s) until it is connected:
     * authenticated with {@code journal.zk.auth.file} if set (SASL comes from the JVM's JAAS configuration), and,
     * with {@code journal.zk.acl=secure}, with the oracle's existing znodes given that ACL
     * ({@link ZnodeAcl#secureExisting}).
     */
    public static ZooKeeper connectZooKeeper(JournalSettings s) throws IOException, InterruptedException {
        DigestCredentials credentials = s.zkAuthFile().isEmpty() ? null
                : DigestCredentials.read(Path.of(s.zkAuthFile()), "journal.zk.auth.file");
        CountDownLatch connected = new CountDownLatch(1);
        ZooKeeper zk = new ZooKeeper(s.zkConnect(), s.zkSessionTimeoutMs(), event -> {
            if (event.getType() == Watcher.Event.EventType.None) {
                if (event.getState() == Watcher.Event.KeeperState.SyncConnected) {
                    connected.countDown();
                } else {
                    LOG.info("oracle ZooKeeper session: {}", event.getState());
                }
            }
        });
        long waitMs = Math.max(s.zkSessionTimeoutMs(), FIRST_CONNECT_MIN_MS);
        if (!connected.await(waitMs, TimeUnit.MILLISECONDS)) {
            zk.close();
            throw new IOException("could not connect to ZooKeeper at " + s.zkConnect() + " within " + waitMs
                    + " ms: check journal.zk.connect and that ZooKeeper runs");
        }
        try {
            if (credentials != null) {
                // Before any request: ZooKeeper sends it first, so every znode below is created as this identity.
                zk.addAuthInfo(DigestCredentials.SCHEME, credentials.authBytes());
            }
            ZnodeAcl.of(s).secureExisting(zk, s);
        } catch (IOException | InterruptedException | RuntimeException e) {
            zk.close();
            throw e;
        }
        return zk;
    }

    /**
     * BookKeeper's add timeout (its default, set explicitly because the journal's watchdog relies on it): a bookie that
     * has not answered an add for this long is replaced, so an add pending for less is not stuck yet.
     */
    static final int ADD_TIMEOUT_SECONDS = 5;

    /**
     * A BookKeeper client for the journal: no client-side add throttle (the default caps a client at about 5,000
     * adds/s) and bookie health tracking, so a bookie that keeps failing is quarantined and left out of the next
     * ledger's ensemble.
     */
    public static BookKeeper newBookKeeper(JournalSettings s) throws IOException, InterruptedException {
        ClientConfiguration cc = new ClientConfiguration();
        cc.setAddEntryTimeout(ADD_TIMEOUT_SECONDS);
        cc.setMetadataServiceUri(s.effectiveMetadataServiceUri());
        cc.setZkTimeout(s.zkSessionTimeoutMs());
        cc.setThrottleValue(0);
        cc.enableBookieHealthCheck();
        cc.setBookieHealthCheckInterval(1, TimeUnit.SECONDS);
        cc.setBookieErrorThresholdPerInterval(1);
        cc.setBookieQuarantineTime(30, TimeUnit.SECONDS);
        try {
            return new BookKeeper(cc);
        } catch (BKException e) {
            throw new IOException("could not start the BookKeeper client (" + s.effectiveMetadataServiceUri() + "): "
                    + e.getMessage(), e);
        }
    }

    /** A name for this process in the ledger registry: host, pid and a random part (unique per start). */
    public static String ownerName() {
        String host;
        try {
            host = java.net.InetAddress.getLocalHost().getHostName();
        } catch (IOException e) {
            host = "unknown-host";
        }
        return host + "/" + ManagementFactory.getRuntimeMXBean().getPid() + "/"
                + UUID.randomUUID().toString().substring(0, 8);
    }
}
