package io.sibyl.oracle;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sibyl.oracle.OracleSurvivesRandomFramesTest.Msg;
import io.sibyl.oracle.OracleSurvivesRandomFramesTest.WireSocket;
import io.sibyl.protocol.SecretProof;
import io.sibyl.protocol.Varints;
import io.sibyl.protocol.Wire;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Requests about a transaction from a connection that did not begin it (found by OracleSurvivesRandomFramesTest and
 * an attacker's tests): COMMIT is refused and FINISH ignored, so another connection cannot decide or drop it; ABORT
 * is honoured from another connection of the same client (its identity token: a client aborts on a new connection a
 * transaction it began on one it lost), the transaction then holding the low watermark for its owner until the
 * owner is done with it, and from the admin role, but refused from a stranger; the clean-up of a lost client's
 * transaction and of an aborted range may be reported by the admin role only.
 */
class ForeignTransactionRequestsTest {
    private static final int MAX_WRITE_SET_ROWS = 4;
    private static final long CLIENT = 0x5151_7777_1234_5678L;
    private static final byte[] SECRET = "admin-secret-of-this-test-0123456789".getBytes(StandardCharsets.UTF_8);
    @TempDir
    static Path dir;
    @RegisterExtension
    final OracleExtension oracle = OracleExtension.withSettings(c -> c
            .withCapacities(1 << 12, 1 << 10, 1 << 8).withLimits(MAX_WRITE_SET_ROWS, 4096)
            .withReaderGrace(100).withAdminSecretFile(Files.write(dir.resolve("admin.secret"), SECRET).toString()));
    private WireSocket owner;
    /** Another connection of the owner's client (same identity token). */
    private WireSocket other;
    /** A connection of another client, which knows the owner's timestamps from the HELLO and the metadata. */
    private WireSocket stranger;

    @BeforeEach
    void connect() throws Exception {
        owner = WireSocket.connect(oracle.port());
        owner.handshakeAs(CLIENT);
        other = WireSocket.connect(oracle.port());
        other.handshakeAs(CLIENT);
        stranger = WireSocket.connect(oracle.port());
        stranger.handshake(Wire.VERSION);
    }

    @AfterEach
    void disconnect() throws Exception {
        owner.close();
        other.close();
        stranger.close();
    }

    @Test
    void aStrangersAbortIsRefusedAndTheOwnerStillCommits() throws Exception {
        long start = begin(owner);
        stranger.send(request(Wire.ABORT, 1, start));
        Msg refused = reply(stranger, 1);
        assertEquals(Wire.ERROR, refused.type(), refused.toString());
        assertEquals(Wire.ERR_FORBIDDEN, refused.code(), refused.toString());
        assertTrue(refused.text().contains("another client"), refused.text());
        assertEquals(Wire.STATUS_RUNNING, query(stranger, start).value());
        owner.send(commit(2, start, 1));
        assertEquals(Wire.COMMITTED, reply(owner, 2).type());
    }

    /**
     * The attack: a lost client's transaction is in the aborted set (every HELLO lists it); a forged CLEANED_UP would
     * let the oracle forget it once the watermark passes, and its versions, still in HBase, would read as committed.
     */
    @Test
    void aForgedCleanUpOfALostClientsTransactionIsRefusedAndTheTransactionStaysAborted() throws Exception {
        WireSocket victim = WireSocket.connect(oracle.port());
        victim.handshakeAs(0x7777L);
        long lost = begin(victim);
        victim.close(); // killed mid-transaction: its versions stay in HBase until a sweep
        awaitAborted(lost);
        for (WireSocket forger : new WireSocket[] {stranger, owner}) {
            forger.send(request(Wire.CLEANED_UP, 1, lost));
            Msg refused = reply(forger, 1);
            assertEquals(Wire.ERR_FORBIDDEN, refused.code(), refused.toString());
            assertTrue(refused.text().contains("admin"), refused.text());
        }
        forgetWhatWasReported();
        assertEquals(1, oracle.server().stats().abortedSet(), "the lost client's transaction is still aborted");
        assertEquals(Wire.STATUS_ABORTED, query(stranger, lost).value());
        stranger.send(request(Wire.RANGE_CLEANED_UP, 2, 0, lost));
        assertEquals(Wire.ERR_FORBIDDEN, reply(stranger, 2).code(), "ranges are the admin's too");
    }

    @Test
    void theAdminRoleReportsALostClientsCleanUpAndTheOracleForgetsTheTransaction() throws Exception {
        WireSocket victim = WireSocket.connect(oracle.port());
        victim.handshakeAs(0x7777L);
        long lost = begin(victim);
        victim.close();
        awaitAborted(lost);
        WireSocket admin = WireSocket.connect(oracle.port());
        admin.handshake(Wire.VERSION);
        ByteBuf wrong = Unpooled.buffer().writeByte(Wire.AUTHENTICATE).writeByte(1).writeByte(Wire.AUTH_ADMIN);
        wrong.writeBytes(SecretProof.compute("not-the-admin-secret-0123".getBytes(StandardCharsets.UTF_8),
                Wire.AUTH_ADMIN, admin.nonce()));
        admin.send(wrong);
        Msg refused = reply(admin, 1);
        assertEquals(Wire.ERR_FORBIDDEN, refused.code(), refused.toString());
        assertTrue(refused.text().contains("sibyl.client.admin.secret.file"), refused.text());
        ByteBuf replayed = Unpooled.buffer().writeByte(Wire.AUTHENTICATE).writeByte(2).writeByte(Wire.AUTH_ADMIN);
        replayed.writeBytes(SecretProof.compute(SECRET, Wire.AUTH_ADMIN, stranger.nonce())); // another connection's
        admin.send(replayed);
        assertEquals(Wire.ERR_FORBIDDEN, reply(admin, 2).code());
        ByteBuf proof = Unpooled.buffer().writeByte(Wire.AUTHENTICATE).writeByte(3).writeByte(Wire.AUTH_ADMIN);
        proof.writeBytes(SecretProof.compute(SECRET, Wire.AUTH_ADMIN, admin.nonce()));
        admin.send(proof);
        assertEquals(Wire.ACK, reply(admin, 3).type());
        admin.send(request(Wire.CLEANED_UP, 4, lost));
        assertEquals(Wire.ACK, reply(admin, 4).type());
        forgetWhatWasReported();
        assertEquals(0, oracle.server().stats().abortedSet(), "reported by the admin: forgotten");
        admin.close();
    }

    @Test
    void aClientReportsTheCleanUpOfItsOwnAbortedTransactionFromAnotherOfItsConnections() throws Exception {
        long start = begin(owner);
        owner.send(commit(1, start, MAX_WRITE_SET_ROWS + 1)); // too large: aborted
        assertEquals(Wire.ERR_TOO_LARGE, reply(owner, 1).code());
        stranger.send(request(Wire.CLEANED_UP, 2, start));
        assertEquals(Wire.ERR_FORBIDDEN, reply(stranger, 2).code());
        other.send(request(Wire.CLEANED_UP, 3, start));
        assertEquals(Wire.ACK, reply(other, 3).type());
        forgetWhatWasReported();
        assertEquals(0, oracle.server().stats().abortedSet());
    }

    @Test
    void withoutAnAdminSecretNoConnectionBecomesAdminAndTheRefusalSaysWhatToSet() throws Exception {
        try (OracleServer plain = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(1 << 12, 1 << 10, 1 << 8));
             WireSocket s = WireSocket.connect(plain.port())) {
            s.handshake(Wire.VERSION);
            ByteBuf proof = Unpooled.buffer().writeByte(Wire.AUTHENTICATE).writeByte(1).writeByte(Wire.AUTH_ADMIN);
            proof.writeBytes(SecretProof.compute(SECRET, Wire.AUTH_ADMIN, s.nonce()));
            s.send(proof);
            Msg refused = reply(s, 1);
            assertEquals(Wire.ERR_FORBIDDEN, refused.code(), refused.toString());
            assertTrue(refused.text().contains("admin.secret.file is empty"), refused.text());
        }
    }

    /** Waits until the oracle noticed the loss of the connection that began {@code ts}. */
    private void awaitAborted(long ts) {
        // In this thread: the stranger's socket is read by one thread at a time.
        await("the abort of transaction " + ts + " of a lost connection").atMost(Duration.ofSeconds(10))
                .pollInterval(Duration.ofMillis(10)).pollInSameThread()
                .until(() -> query(stranger, ts).value() == Wire.STATUS_ABORTED);
    }

    /**
     * Lets the oracle forget every report it accepted: the reader grace passes and committed work moves the low
     * watermark past the reports (their forgetting happens as blocks are sealed).
     */
    private void forgetWhatWasReported() throws Exception {
        Thread.sleep(300);
        for (int i = 0; i < 5; i++) {
            long start = begin(stranger);
            stranger.send(commit(200 + i, start, 1));
            reply(stranger, 200 + i);
            Thread.sleep(20);
        }
    }

    @Test
    void anotherConnectionsCommitIsRefusedWhateverItsWriteSetAndTheOwnerStillCommits() throws Exception {
        long start = begin(owner);
        for (int rows : new int[] {0, 2, MAX_WRITE_SET_ROWS + 1}) { // none: a FINISH in disguise; too many: an abort
            other.send(commit(1, start, rows));
            Msg reply = reply(other, 1);
            assertEquals(Wire.ERROR, reply.type(), "commit of another connection's transaction: " + reply);
            assertEquals(Wire.ERR_UNKNOWN_TRANSACTION, reply.code(), reply.toString());
            assertTrue(reply.text().contains("another connection"), reply.text());
        }
        assertEquals(Wire.STATUS_RUNNING, query(other, start).value());
        owner.send(commit(2, start, 1));
        Msg committed = reply(owner, 2);
        assertEquals(Wire.COMMITTED, committed.type(), committed.toString());
        assertTrue(committed.value() > start);
        // Once decided, any connection may ask again: a retried commit is answered with the decision.
        other.send(commit(3, start, 1));
        assertEquals(committed.value(), reply(other, 3).value());
    }

    @Test
    void anotherConnectionsFinishIsIgnoredSoTheTransactionStaysRunningAndHoldsTheWatermark() throws Exception {
        long start = begin(owner);
        other.send(request(Wire.FINISH, 0, start));
        assertEquals(Wire.STATUS_RUNNING, query(other, start).value());
        other.send(request(Wire.WATERMARK_QUERY, 5));
        assertEquals(start, reply(other, 5).value(), "the owner's snapshot is still protected");
        owner.send(commit(2, start, 1));
        assertEquals(Wire.COMMITTED, reply(owner, 2).type());
    }

    /**
     * The abort is decided at once, but the transaction keeps holding the low watermark until its owner is done with
     * it: the owner may still be reading its snapshot (before, the abort let the watermark pass it at once).
     */
    @Test
    void anotherConnectionOfTheClientMayAbortATransactionButItsOwnersSnapshotStaysProtectedUntilTheOwnerIsDone()
            throws Exception {
        long start = begin(owner);
        other.send(request(Wire.ABORT, 1, start));
        assertEquals(Wire.ACK, reply(other, 1).type());
        assertEquals(Wire.STATUS_ABORTED, query(other, start).value());
        other.send(request(Wire.FINISH, 0, start)); // ignored: not the owner
        other.send(request(Wire.ABORT, 2, start)); // again: no change
        assertEquals(Wire.ACK, reply(other, 2).type());
        other.send(request(Wire.WATERMARK_QUERY, 3));
        assertEquals(start, reply(other, 3).value(), "the owner's snapshot is still protected");
        owner.send(commit(4, start, 1));
        Msg reply = reply(owner, 4);
        assertEquals(Wire.ABORTED, reply.type(), reply.toString());
        assertEquals(Wire.ABORT_ALREADY_ABORTED, reply.value());
        other.send(request(Wire.WATERMARK_QUERY, 5));
        assertTrue(reply(other, 5).value() > start, "the owner is done: the watermark passes its transaction");
    }

    @Test
    void anotherConnectionOfTheClientsAbortIsHeldUntilTheOwnersConnectionCloses() throws Exception {
        long start = begin(owner);
        other.send(request(Wire.ABORT, 1, start));
        assertEquals(Wire.ACK, reply(other, 1).type());
        owner.close(); // its transactions end; the watermark is then held for reader.grace.ms like any lost reader's
        other.send(request(Wire.WATERMARK_QUERY, 2));
        assertEquals(start, reply(other, 2).value());
        other.send(request(Wire.QUERY, 3, start));
        assertEquals(Wire.STATUS_ABORTED, reply(other, 3).value());
    }

    private static long begin(WireSocket s) throws Exception {
        s.send(request(Wire.BEGIN, 100));
        return reply(s, 100).value();
    }

    private static Msg query(WireSocket s, long ts) throws Exception {
        s.send(request(Wire.QUERY, 101, ts));
        return reply(s, 101);
    }

    /** A request frame of {@code type}: its id, then {@code args} as unsigned varints. */
    static ByteBuf request(byte type, long id, long... args) {
        ByteBuf b = Unpooled.buffer();
        b.writeByte(type);
        Varints.writeUnsigned(b, id);
        for (long a : args) {
            Varints.writeUnsigned(b, a);
        }
        return b;
    }

    private static ByteBuf commit(long id, long start, int rows) {
        ByteBuf b = request(Wire.COMMIT, id, start, rows);
        for (int i = 0; i < rows; i++) {
            b.writeLong(1000 + i);
        }
        return b;
    }

    /** The reply to {@code id}, ERROR included (WireSocket.expectReply fails on one). */
    private static Msg reply(WireSocket s, long id) throws Exception {
        while (true) {
            List<Msg> msgs = s.readFrameForTest();
            for (Msg m : msgs) {
                if (m.id() == id && m.type() != Wire.DELTA && m.type() != Wire.HELLO) {
                    return m;
                }
            }
        }
    }
}
