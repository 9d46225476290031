package io.sibyl.oracle;

import io.sibyl.oracle.journal.BookKeeperCluster;
import io.sibyl.oracle.journal.JournalClients;
import io.sibyl.oracle.journal.JournalRecovery;
import io.sibyl.oracle.journal.JournalSettings;
import io.sibyl.oracle.journal.LedgerRegistry;
import io.sibyl.oracle.journal.RecoveredState;
import io.sibyl.protocol.Wire;
import org.apache.bookkeeper.client.BookKeeper;
import org.apache.zookeeper.ZooKeeper;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The oracle as so-server starts it on the BookKeeper journal (recover, serve), and its one fatal-error path: when
 * another oracle takes the journal over, it closes its listener and every connection at once and tells its fatal
 * listeners (so-server then exits with status 1).
 */
@Timeout(value = 60, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class OracleServerFatalErrorTest {
    @RegisterExtension
    static final BookKeeperCluster cluster = BookKeeperCluster.perTestClass(3);

    @Test
    void aFencedOracleStopsServingAtOnceThroughOnePath() throws Exception {
        JournalSettings js = cluster.settings("fatal");
        OracleConfig config = OracleConfig.defaults().withPort(0).withCapacities(1 << 12, 1 << 10, 64)
                .withJournal(OracleConfig.JournalKind.BOOKKEEPER, js);
        OracleServer server = OracleServerMain.startOnBookKeeper(config);
        try {
            CountDownLatch told = new CountDownLatch(1);
            AtomicReference<String> reason = new AtomicReference<>();
            server.onFatalError((why, cause) -> {
                reason.set(why);
                told.countDown();
            });
            try (Socket s = new Socket("127.0.0.1", server.port())) {
                DataOutputStream out = new DataOutputStream(s.getOutputStream());
                out.writeInt(6);
                out.writeInt(Wire.MAGIC);
                out.writeShort(Wire.VERSION);
                out.flush();
                DataInputStream in = new DataInputStream(s.getInputStream());
                int len = in.readInt();
                assertTrue(len > 0);
                assertEquals(Wire.HELLO, in.readByte(), "served on the journal");
                in.skipBytes(len - 1);

                // Another oracle takes the journal over: recovery fences the registry and the ledgers.
                BookKeeper bk = cluster.bookKeeper(js);
                ZooKeeper zk = cluster.zooKeeper(js);
                RecoveredState r = JournalRecovery.recover(bk, new LedgerRegistry(zk, js.ledgersZnode()), js,
                        JournalClients.ownerName());
                assertEquals(0, r.commitCount(), "nothing was committed");

                assertTrue(told.await(20, TimeUnit.SECONDS), "the fatal listener is told");
                assertTrue(server.failure().contains("taken over") || server.failure().contains("fenced"),
                        server.failure());
                assertEquals(server.failure(), reason.get());
                s.setSoTimeout(5000);
                try {
                    assertEquals(-1, in.read(), "the client connection is closed");
                } catch (IOException reset) {
                    // closed too
                }
            }
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(5);
            while (true) {
                try {
                    new Socket("127.0.0.1", server.port()).close();
                } catch (IOException refused) {
                    break;
                }
                if (System.nanoTime() > deadline) {
                    fail("the fenced oracle still accepts connections");
                }
                Thread.sleep(50);
            }
            CountDownLatch late = new CountDownLatch(1);
            server.onFatalError((why, cause) -> late.countDown());
            assertEquals(0, late.getCount(), "a listener added after the error is told at once");
            server.fatalError("again", null);
            assertTrue(server.failure().contains("taken over") || server.failure().contains("fenced"),
                    "only the first error counts");
        } finally {
            server.close();
        }
    }
}
