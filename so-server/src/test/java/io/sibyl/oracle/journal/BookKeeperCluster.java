package io.sibyl.oracle.journal;

import org.apache.bookkeeper.client.BookKeeper;
import org.apache.bookkeeper.conf.ServerConfiguration;
import org.apache.bookkeeper.util.LocalBookKeeper;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.IOException;
import java.net.ServerSocket;
import java.util.ArrayList;
import java.util.List;

/**
 * In-process ZooKeeper and bookies for the journal tests (../shared/stack-notes.md): one per test class, about 2 s to
 * start; {@code @RegisterExtension static final BookKeeperCluster cluster = BookKeeperCluster.perTestClass(3);}
 * starts it before the class's tests and stops it after them. Bookies flush their journal when its queue is empty, so adds are acknowledged in about a millisecond.
 * Public (and shipped in so-server's test jar) for the client module's recovery tests. A JVM running it with
 * assertions on needs {@code --add-opens java.base/java.io=ALL-UNNAMED} (see so-server/pom.xml).
 */
public final class BookKeeperCluster implements AutoCloseable, BeforeAllCallback, AfterAllCallback {
    static {
        // Quiet the cluster's own logging (slf4j-simple reads these when each logger is created).
        System.setProperty("zookeeper.4lw.commands.whitelist", "*");
        System.setProperty("org.slf4j.simpleLogger.showDateTime", "true");
        System.setProperty("org.slf4j.simpleLogger.dateTimeFormat", "HH:mm:ss.SSS");
        for (String chatty : new String[] {"org.apache.bookkeeper", "org.apache.zookeeper"}) {
            System.setProperty("org.slf4j.simpleLogger.log." + chatty, "warn");
        }
        System.setProperty("org.slf4j.simpleLogger.log.org.apache.bookkeeper.proto.PerChannelBookieClient", "off");
        System.setProperty("org.slf4j.simpleLogger.log.org.apache.bookkeeper.client.RackawareEnsemblePlacementPolicyImpl",
                "error");
        System.setProperty("org.slf4j.simpleLogger.log.org.apache.bookkeeper.bookie.Journal", "off");
        System.setProperty("org.slf4j.simpleLogger.log.org.apache.bookkeeper.util.PageCacheUtil", "off");
    }

    private final int bookies;
    private final List<AutoCloseable> clients = new ArrayList<>();
    private LocalBookKeeper local;
    private int zkPort;

    private BookKeeperCluster(int bookies) {
        this.bookies = bookies;
    }

    /** Starts ZooKeeper and {@code bookies} bookies now; close it when done. */
    public static BookKeeperCluster start(int bookies) throws Exception {
        BookKeeperCluster c = new BookKeeperCluster(bookies);
        c.startServers();
        return c;
    }

    /** A cluster for {@code @RegisterExtension}: started before the test class's tests, stopped after them. */
    public static BookKeeperCluster perTestClass(int bookies) {
        return new BookKeeperCluster(bookies);
    }

    private void startServers() throws Exception {
        try (ServerSocket s = new ServerSocket(0)) {
            zkPort = s.getLocalPort();
        }
        ServerConfiguration sc = new ServerConfiguration();
        sc.setAllowLoopback(true);
        sc.setJournalFlushWhenQueueEmpty(true);
        local = LocalBookKeeper.getLocalBookies("127.0.0.1", zkPort, bookies, true, sc);
        local.start();
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        startServers();
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        close();
    }

    public String zkConnect() {
        return "127.0.0.1:" + zkPort;
    }

    /** Settings pointing at this cluster, with their own registry znode. */
    public JournalSettings settings(String name) {
        return JournalSettings.defaults()
                .withZooKeeper(zkConnect(), "zk+null://" + zkConnect() + "/ledgers")
                .withLedgersZnode("/sibyl/test/" + name + "/ledgers");
    }

    /** A BookKeeper client closed with the cluster (unless the test closes it first). */
    public BookKeeper bookKeeper(JournalSettings s) throws IOException, InterruptedException {
        BookKeeper bk = JournalClients.newBookKeeper(s);
        clients.add(bk::close);
        return bk;
    }

    public ZooKeeper zooKeeper(JournalSettings s) throws IOException, InterruptedException {
        ZooKeeper zk = JournalClients.connectZooKeeper(s);
        clients.add(zk::close);
        return zk;
    }

    /** Stops the most recently started bookie (gracefully: it leaves the bookie registry at once). */
    public void removeBookie() throws Exception {
        local.removeBookie();
    }

    /** Starts one more bookie (a new one, with an address of its own). */
    public void addBookie() throws Exception {
        local.addBookie();
    }

    @Override
    public void close() throws Exception {
        for (int i = clients.size() - 1; i >= 0; i--) {
            try {
                clients.get(i).close();
            } catch (Exception e) {
                // already closed
            }
        }
        clients.clear();
        if (local != null) {
            local.close();
            local = null;
        }
    }
}
