package io.sibyl.oracle;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sibyl.oracle.OracleSurvivesRandomFramesTest.Msg;
import io.sibyl.oracle.OracleSurvivesRandomFramesTest.WireSocket;
import io.sibyl.protocol.Varints;
import io.sibyl.protocol.Wire;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Requests about a transaction from a connection that did not begin it (found by OracleSurvivesRandomFramesTest):
 * COMMIT is refused and FINISH ignored, so another connection cannot decide or drop it; ABORT is honoured (a client
 * aborts on a new connection a transaction it began on one it lost) but the transaction keeps holding the low
 * watermark for its owner until the owner is done with it.
 */
class ForeignTransactionRequestsTest {
    private static final int MAX_WRITE_SET_ROWS = 4;
    private OracleServer server;
    private WireSocket owner;
    private WireSocket other;

    @BeforeEach
    void start() throws Exception {
        server = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(1 << 12, 1 << 10, 1 << 8).withLimits(MAX_WRITE_SET_ROWS, 4096));
        owner = WireSocket.connect(server.port());
        owner.handshake(Wire.VERSION);
        other = WireSocket.connect(server.port());
        other.handshake(Wire.VERSION);
    }

    @AfterEach
    void stop() throws Exception {
        owner.close();
        other.close();
        server.close();
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
    void anotherConnectionMayAbortATransactionButItsOwnersSnapshotStaysProtectedUntilTheOwnerIsDone()
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
    void anotherConnectionsAbortIsHeldUntilTheOwnersConnectionCloses() throws Exception {
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
