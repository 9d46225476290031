package io.sibyl.oracle;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sibyl.oracle.OracleSurvivesRandomFramesTest.Msg;
import io.sibyl.oracle.OracleSurvivesRandomFramesTest.WireSocket;
import io.sibyl.protocol.Frames;
import io.sibyl.protocol.Varints;
import io.sibyl.protocol.Wire;
import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.Socket;
import java.net.SocketTimeoutException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;

import static org.awaitility.Awaitility.await;
import static org.hamcrest.Matchers.equalTo;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The oracle's defences against connections that misbehave, on the real Netty server: a connection that never
 * completes its handshake is closed after handshake.timeout.ms, connections beyond max.connections are refused, and
 * one connection cannot take every place of max.running.transactions. Each comes with a readable ERROR, and the
 * other connections are unaffected.
 */
class ConnectionDefencesTest {
    private static final long HANDSHAKE_MS = 300;

    private static OracleConfig config(int maxConnections, int maxRunning) {
        return OracleConfig.defaults().withPort(0).withCapacities(1 << 12, 1 << 10, maxRunning)
                .withConnectionLimits(HANDSHAKE_MS, maxConnections, 0);
    }

    @Test
    void connectionThatNeverSaysHelloIsClosedAfterTheHandshakeTimeout() throws Exception {
        try (OracleServer server = OracleServer.startInMemory(config(4, 64));
             WireSocket silent = WireSocket.connect(server.port());
             WireSocket halfway = WireSocket.connect(server.port())) {
            halfway.sendRaw(new byte[] {0, 0, 0, 6, 0x53, 0x49}); // the length and part of the magic, then nothing
            for (WireSocket s : List.of(silent, halfway)) {
                List<Msg> got = s.readUntilClosed();
                assertTrue(s.closedByPeer());
                assertEquals(1, got.size(), got.toString());
                Msg error = got.get(0);
                assertEquals(Wire.ERROR, error.type());
                assertEquals(0, error.id(), "an error of the whole connection");
                assertEquals(Wire.ERR_MALFORMED, error.code());
                assertTrue(error.text().contains("no handshake within handshake.timeout.ms=" + HANDSHAKE_MS),
                        error.text());
            }
            awaitConnections(server, 0); // their places under max.connections are free again
        }
    }

    @Test
    void clientThatSaidHelloOutlivesTheHandshakeTimeout() throws Exception {
        try (OracleServer server = OracleServer.startInMemory(config(4, 64));
             WireSocket client = WireSocket.connect(server.port())) {
            client.handshake(Wire.VERSION);
            List<Msg> meanwhile = client.readFor((int) (4 * HANDSHAKE_MS));
            assertFalse(client.closedByPeer(), "closed after its handshake: " + meanwhile);
            assertTrue(begin(client, 1).type() == Wire.STARTED);
        }
    }

    /**
     * The hot standby's watch handshake (role 1) gets no HELLO and is not timed out; it gives a stranger nothing a
     * client handshake would not: it counts against max.connections and any frame after it closes it.
     */
    @Test
    void watchConnectionOutlivesTheHandshakeTimeoutAndMaySendNothingMore() throws Exception {
        try (OracleServer server = OracleServer.startInMemory(config(4, 64));
             Socket watch = new Socket("127.0.0.1", server.port())) {
            DataOutputStream out = new DataOutputStream(watch.getOutputStream());
            DataInputStream in = new DataInputStream(watch.getInputStream());
            out.writeInt(7);
            out.writeInt(Wire.MAGIC);
            out.writeShort(Wire.VERSION);
            out.writeByte(Wire.ROLE_WATCH);
            out.flush();
            // Longer than the handshake timeout and than the heartbeat interval a client connection gets (1 s).
            watch.setSoTimeout((int) Math.max(4 * HANDSHAKE_MS, 1500));
            assertThrows(SocketTimeoutException.class, in::read,
                    "a watch connection is sent nothing (no HELLO, no heartbeats) and not closed");
            assertEquals(1, server.connections());

            watch.setSoTimeout(10_000);
            out.writeInt(2);
            out.writeByte(Wire.BEGIN);
            out.writeByte(1);
            out.flush();
            byte[] frame = new byte[in.readInt()];
            in.readFully(frame);
            ByteBuf error = Unpooled.wrappedBuffer(frame);
            assertEquals(Wire.ERROR, error.readByte());
            assertEquals(0, Varints.readUnsigned(error), "an error of the whole connection");
            assertEquals(Wire.ERR_MALFORMED, error.readByte());
            String text = Frames.readString(error, Frames.MAX_ERROR_TEXT);
            assertTrue(text.contains("watch connection"), text);
            assertEquals(-1, in.read(), "closed after the error");
            awaitConnections(server, 0);
        }
    }

    @Test
    void handshakeWithAnUnknownRoleOrTrailingBytesIsRefused() throws Exception {
        try (OracleServer server = OracleServer.startInMemory(config(4, 64));
             WireSocket unknownRole = WireSocket.connect(server.port());
             WireSocket tooLong = WireSocket.connect(server.port())) {
            unknownRole.sendFrame(Unpooled.buffer().writeInt(Wire.MAGIC).writeShort(Wire.VERSION).writeByte(9));
            tooLong.sendFrame(Unpooled.buffer().writeInt(Wire.MAGIC).writeShort(Wire.VERSION).writeShort(0));
            for (var c : List.of(List.of(unknownRole, "unknown handshake role 9"),
                    List.of(tooLong, "handshake of 8 bytes"))) {
                List<Msg> got = ((WireSocket) c.get(0)).readUntilClosed();
                assertEquals(1, got.size(), got.toString());
                assertEquals(Wire.ERR_MALFORMED, got.get(0).code());
                assertTrue(got.get(0).text().contains((String) c.get(1)), got.get(0).text());
            }
        }
    }

    @Test
    void connectionsBeyondMaxConnectionsAreRefusedWithAClearErrorAndExistingOnesAreUnaffected() throws Exception {
        try (OracleServer server = OracleServer.startInMemory(config(2, 64));
             WireSocket a = WireSocket.connect(server.port());
             WireSocket b = WireSocket.connect(server.port())) {
            a.handshake(Wire.VERSION);
            b.handshake(Wire.VERSION);
            try (WireSocket refused = WireSocket.connect(server.port())) {
                // Like a real client, it sends its handshake at once, before it reads the refusal.
                refused.sendFrame(Unpooled.buffer().writeInt(Wire.MAGIC).writeShort(Wire.VERSION));
                List<Msg> got = refused.readUntilClosed();
                assertEquals(1, got.size(), got.toString());
                Msg error = got.get(0);
                assertEquals(0, error.id());
                assertEquals(Wire.ERR_OVERLOADED, error.code());
                assertTrue(error.text().contains("max.connections=2"), error.text());
            }
            assertEquals(1, server.refusedConnections());
            assertEquals(1, server.stats().refusedConnections(), "in the log line and over JMX too");
            assertEquals(2, server.connections());
            for (WireSocket s : List.of(a, b)) {
                Msg started = begin(s, 7);
                assertEquals(Wire.STARTED, started.type(), started.toString());
                s.send(commit(8, started.value()));
                assertEquals(Wire.COMMITTED, reply(s, 8).type());
            }

            a.close();
            awaitConnections(server, 1);
            try (WireSocket next = WireSocket.connect(server.port())) {
                next.handshake(Wire.VERSION); // a closed connection's place is taken again
                assertEquals(Wire.STARTED, begin(next, 1).type());
            }
        }
    }

    @Test
    void silentConnectionHoldsItsPlaceUnderMaxConnectionsOnlyUntilTheHandshakeTimeout() throws Exception {
        try (OracleServer server = OracleServer.startInMemory(config(1, 64));
             WireSocket silent = WireSocket.connect(server.port())) {
            awaitConnections(server, 1);
            try (WireSocket refused = WireSocket.connect(server.port())) {
                List<Msg> got = refused.readUntilClosed();
                assertEquals(Wire.ERR_OVERLOADED, got.get(0).code(), got.toString());
            }
            silent.readUntilClosed(); // the handshake timeout
            awaitConnections(server, 0);
            try (WireSocket client = WireSocket.connect(server.port())) {
                client.handshake(Wire.VERSION);
                assertEquals(Wire.STARTED, begin(client, 1).type());
            }
        }
    }

    @Test
    void oneConnectionCannotTakeEveryRunningSlot() throws Exception {
        // max.running.transactions=8; max.running.transactions.per.connection defaults to half of it.
        try (OracleServer server = OracleServer.startInMemory(config(8, 8));
             WireSocket hog = WireSocket.connect(server.port());
             WireSocket other = WireSocket.connect(server.port());
             WireSocket third = WireSocket.connect(server.port())) {
            for (WireSocket s : List.of(hog, other, third)) {
                s.handshake(Wire.VERSION);
            }
            long[] held = new long[4];
            for (int i = 0; i < 4; i++) {
                Msg m = begin(hog, 10 + i);
                assertEquals(Wire.STARTED, m.type(), m.toString());
                held[i] = m.value();
            }
            Msg refused = begin(hog, 20);
            assertEquals(Wire.ERROR, refused.type(), refused.toString());
            assertEquals(Wire.ERR_OVERLOADED, refused.code());
            assertTrue(refused.text().contains("this connection has 4 transactions running")
                    && refused.text().contains("max.running.transactions.per.connection=4"), refused.text());

            for (int i = 0; i < 4; i++) {
                Msg m = begin(other, 30 + i);
                assertEquals(Wire.STARTED, m.type(), "another connection begins while the hog is at its quota: " + m);
            }
            Msg full = begin(third, 40);
            assertEquals(Wire.ERR_OVERLOADED, full.code(), full.toString());
            assertTrue(full.text().contains("max.running.transactions=8"), "the shared limit: " + full.text());

            hog.send(commit(21, held[0]));
            assertEquals(Wire.COMMITTED, reply(hog, 21).type(), "the refused connection is still served");
            hog.close(); // its transactions are aborted: their places are free for the others
            AtomicInteger id = new AtomicInteger(50);
            // In this thread: the socket is read by one thread at a time.
            await("the hog's places given back").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(20))
                    .pollInSameThread().until(() -> begin(third, id.getAndIncrement()).type() == Wire.STARTED);
        }
    }

    static void awaitConnections(OracleServer server, int expected) {
        await("connections open").atMost(Duration.ofSeconds(10)).pollInterval(Duration.ofMillis(10))
                .until(server::connections, equalTo(expected));
    }

    static Msg begin(WireSocket s, long id) throws Exception {
        s.send(ForeignTransactionRequestsTest.request(Wire.BEGIN, id));
        return reply(s, id);
    }

    static ByteBuf commit(long id, long start) {
        ByteBuf b = ForeignTransactionRequestsTest.request(Wire.COMMIT, id, start, 1);
        b.writeLong(start); // a row of its own: no conflicts between these transactions
        return b;
    }

    /** The reply to {@code id}, ERROR included. */
    static Msg reply(WireSocket s, long id) throws Exception {
        while (true) {
            for (Msg m : s.readFrameForTest()) {
                if (m.id() == id && m.type() != Wire.DELTA && m.type() != Wire.HELLO) {
                    return m;
                }
            }
        }
    }
}
