package io.sibyl.oracle.ha;

import io.sibyl.oracle.journal.BookKeeperCluster;
import io.sibyl.oracle.journal.DigestFiles;
import io.sibyl.oracle.tls.TestCertificates;
import io.sibyl.protocol.SelfSignedTls;
import io.sibyl.protocol.Wire;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import javax.net.ssl.SSLSocket;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An HA pair of so-server processes with {@code tls=true}, client certificates and ACLs on their ZooKeeper znodes
 * (a digest identity, {@code journal.zk.acl=secure}): the standby watches the leader over TLS (a certificate problem
 * there would make it depose a live leader, or never notice a dead one), takes over when the leader is killed, and
 * serves TLS clients.
 */
@Timeout(value = 180, unit = TimeUnit.SECONDS)
class TlsFailoverTest {
    @RegisterExtension
    static final BookKeeperCluster cluster = BookKeeperCluster.perTestClass(3);

    @TempDir
    Path dir;

    @Test
    void aTlsStandbyWatchesTheLeaderOverTlsAndTakesOverWhenItIsKilled() throws Exception {
        SelfSignedTls certs = TestCertificates.get();
        List<String> flags = new ArrayList<>(StandbyTakeoverTest.haFlags(cluster, "tls"));
        flags.addAll(certs.oracleFlags());
        Path identity = DigestFiles.write(dir, "oracle.digest", "sibyl-oracle:s3cret-of-the-oracles");
        flags.addAll(List.of("--journal.zk.auth.file=" + identity, "--journal.zk.acl=secure"));
        try (OracleProcess first = new OracleProcess("tls-first", flags)) {
            int firstPort = first.awaitReady(60_000);
            assertEquals(Wire.STARTED, beginOverTls(certs, firstPort), "the leader serves TLS clients");
            try (OracleProcess second = new OracleProcess("tls-second", flags)) {
                second.owner(60_000);
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (second.stderrLines("watching the leader").isEmpty() && System.nanoTime() < deadline) {
                    Thread.sleep(50);
                }
                assertTrue(!second.stderrLines("watching the leader").isEmpty(), second.tail());
                Thread.sleep(1000); // a watch refused in its TLS handshake would say so within this time
                assertTrue(second.stderrLines("refused the watch").isEmpty(), second.tail());
                assertTrue(first.stderrLines("refused the TLS handshake").isEmpty(), first.tail());

                first.process.destroyForcibly();
                assertTrue(first.process.waitFor(10, TimeUnit.SECONDS));
                int port = second.awaitReady(60_000);
                assertEquals(Wire.STARTED, beginOverTls(certs, port), "the new leader serves TLS clients");
            }
        }
    }

    /** Handshakes over TLS with the client's certificate, begins, and returns the reply's type. */
    private static byte beginOverTls(SelfSignedTls certs, int port) throws IOException {
        try (SSLSocket s = (SSLSocket) certs.client("client.p12").jdkClientContext().getSocketFactory()
                .createSocket("127.0.0.1", port)) {
            s.setSoTimeout(10_000);
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            DataInputStream in = new DataInputStream(s.getInputStream());
            out.writeInt(6);
            out.writeInt(Wire.MAGIC);
            out.writeShort(Wire.VERSION);
            out.flush();
            while (frame(in)[0] != Wire.HELLO) {
                Thread.onSpinWait();
            }
            out.writeInt(2);
            out.writeByte(Wire.BEGIN);
            out.writeByte(1);
            out.flush();
            byte[] reply;
            do {
                reply = frame(in);
            } while (reply[0] == 0 || reply[0] == Wire.DELTA); // heartbeats and pushed metadata
            return reply[0];
        }
    }

    private static byte[] frame(DataInputStream in) throws IOException {
        byte[] f = new byte[in.readInt()];
        in.readFully(f);
        return f.length == 0 ? new byte[] {0} : f;
    }
}
