package io.sibyl.oracle;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sibyl.oracle.OracleSurvivesRandomFramesTest.Msg;
import io.sibyl.oracle.OracleSurvivesRandomFramesTest.WireSocket;
import io.sibyl.protocol.AdminReplies;
import io.sibyl.protocol.SecretProof;
import io.sibyl.protocol.Wire;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;

import static io.sibyl.oracle.ForeignTransactionRequestsTest.request;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The admin-only ORACLE_STATUS_QUERY and RUNNING_QUERY (bin/sibyl status and transactions): the admin gets the
 * figures and the oldest running transactions; any other connection is refused with a reply that says what to give,
 * and stays open.
 */
class AdminRequestsTest {
    private static final byte[] SECRET = "admin-secret-of-the-admin-test-0123".getBytes(StandardCharsets.UTF_8);
    @TempDir
    static Path dir;
    /** One oracle per test (an instance field): the figures of one test must not count another's transactions. */
    @RegisterExtension
    final OracleExtension oracle = OracleExtension.withSettings(c -> c
            .withCapacities(1 << 12, 1 << 10, 1 << 8)
            .withAdminSecretFile(Files.write(dir.resolve("admin.secret"), SECRET).toString()));

    @Test
    void theAdminSeesTheFiguresOfTheOracle() throws Exception {
        try (WireSocket client = WireSocket.connect(oracle.port()); WireSocket admin = admin()) {
            client.handshake(Wire.VERSION);
            long running = begin(client, 1);
            long committed = begin(client, 2);
            client.send(request(Wire.COMMIT, 3, committed, 1).writeLong(42));
            assertEquals(Wire.COMMITTED, reply(client, 3).type());

            admin.send(request(Wire.ORACLE_STATUS_QUERY, 7));
            Msg status = reply(admin, 7);
            assertEquals(Wire.ORACLE_STATUS, status.type(), status.toString());
            String figures = status.text();
            for (String name : new String[] {"last.timestamp=", "t.max=", "low.watermark=" + running,
                    "running.transactions=1", "max.running.transactions=", "aborted.transactions=0",
                    "aborted.ranges=0", "recent.commits=", "commits=1", "aborts=0", "connections=2"}) {
                assertTrue(figures.contains(name), name + " in " + figures);
            }
        }
    }

    @Test
    void theAdminListsTheOldestRunningTransactionsUpToTheLimit() throws Exception {
        try (WireSocket client = WireSocket.connect(oracle.port()); WireSocket admin = admin()) {
            client.handshake(Wire.VERSION);
            long first = begin(client, 1);
            long second = begin(client, 2);
            long third = begin(client, 3);
            admin.send(request(Wire.ABORT, 4, second)); // the admin may abort it: still listed, as aborted
            assertEquals(Wire.ACK, reply(admin, 4).type());

            admin.send(request(Wire.RUNNING_QUERY, 5, 2));
            Msg list = reply(admin, 5);
            assertEquals(Wire.RUNNING_LIST, list.type(), list.toString());
            assertTrue(list.value() >= 3, "every running transaction is counted: " + list);
            assertTrue(list.text().contains("startTs=" + first + ", state=" + AdminReplies.RUNNING),
                    list.text());
            assertTrue(list.text().contains("startTs=" + second + ", state=" + AdminReplies.ABORTED_ELSEWHERE),
                    list.text());
            assertTrue(!list.text().contains("startTs=" + third + ","), "two listed, as asked: " + list.text());
            assertTrue(list.text().contains("127.0.0.1"), "with the client's address: " + list.text());
        }
    }

    @Test
    void aClientWithoutTheAdminRoleIsRefusedAndTheConnectionStaysOpen() throws Exception {
        try (WireSocket client = WireSocket.connect(oracle.port())) {
            client.handshake(Wire.VERSION);
            client.send(request(Wire.ORACLE_STATUS_QUERY, 1));
            Msg refused = reply(client, 1);
            assertEquals(Wire.ERR_FORBIDDEN, refused.code(), refused.toString());
            assertTrue(refused.text().contains("admin secret"), refused.text());
            client.send(request(Wire.RUNNING_QUERY, 2, 10));
            assertEquals(Wire.ERR_FORBIDDEN, reply(client, 2).code());
            assertTrue(begin(client, 3) > 0, "the connection still serves");
        }
    }

    private WireSocket admin() throws Exception {
        WireSocket admin = WireSocket.connect(oracle.port());
        admin.handshake(Wire.VERSION);
        ByteBuf proof = Unpooled.buffer().writeByte(Wire.AUTHENTICATE).writeByte(99).writeByte(Wire.AUTH_ADMIN);
        proof.writeBytes(SecretProof.compute(SECRET, Wire.AUTH_ADMIN, admin.nonce()));
        admin.send(proof);
        assertEquals(Wire.ACK, reply(admin, 99).type());
        return admin;
    }

    private static long begin(WireSocket s, long id) throws Exception {
        s.send(request(Wire.BEGIN, id));
        return reply(s, id).value();
    }

    /** The reply to {@code id}, ERROR included. */
    private static Msg reply(WireSocket s, long id) throws Exception {
        while (true) {
            for (Msg m : s.readFrameForTest()) {
                if (m.id() == id && m.type() != Wire.DELTA && m.type() != Wire.HELLO) {
                    return m;
                }
            }
        }
    }
}
