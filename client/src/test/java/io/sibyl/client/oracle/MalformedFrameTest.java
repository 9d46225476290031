package io.sibyl.client.oracle;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sibyl.client.oracle.RawOracleSocket.Message;
import io.sibyl.oracle.OracleExtension;
import io.sibyl.protocol.Varints;
import io.sibyl.protocol.Wire;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Speaks broken protocol to a real oracle over a plain socket. Every violation must be answered with an ERROR that
 * says what is wrong, connection-level violations must close only the offending connection, and a per-request
 * violation (an oversized write set) must leave the connection usable. After each case a well-behaved client, both a
 * long-lived one and a fresh one, must still begin and commit.
 */
class MalformedFrameTest {
    private static final int MAX_WRITE_SET_ROWS = 16;
    private static final int MAX_FRAME_BYTES = 4096;

    @RegisterExtension
    static final OracleExtension oracle = OracleExtension.withSettings(c -> c
            .withCapacities(1 << 16, 1 << 14, 1 << 12)
            .withLimits(MAX_WRITE_SET_ROWS, MAX_FRAME_BYTES));
    private static OracleClient bystander;
    private static int row;

    @BeforeAll
    static void connectBystander() throws Exception {
        bystander = OracleClient.connect("127.0.0.1", oracle.port());
    }

    @AfterAll
    static void closeBystander() {
        if (bystander != null) {
            bystander.close();
        }
    }

    /** (g) Other connections are never affected by a bad one. */
    @AfterEach
    void wellBehavedClientsStillBeginAndCommit() throws Exception {
        assertTrue(bystander.isOpen(), "a bad connection must not close another client's connection");
        commitOne(bystander);
        try (OracleClient fresh = OracleClient.connect("127.0.0.1", oracle.port())) {
            commitOne(fresh);
        }
    }

    private static void commitOne(OracleClient c) throws Exception {
        long start = c.begin().get(5, TimeUnit.SECONDS);
        long commit = c.commit(start, new long[] {RowIds.of("malformed", bytes(row++))}).get(5, TimeUnit.SECONDS);
        assertTrue(commit > start);
    }

    private static byte[] bytes(int i) {
        return Integer.toString(i).getBytes(StandardCharsets.UTF_8);
    }

    /** Reads until the oracle closes and returns the one connection-level ERROR it sent first. */
    private static Message connectionError(RawOracleSocket s) throws Exception {
        List<Message> seen = s.readUntilClosed();
        assertEquals(1, seen.size(), "expected exactly one ERROR before the oracle closes; got " + seen);
        Message m = seen.get(0);
        assertEquals(Wire.ERROR, m.type(), "got " + m);
        assertEquals(0, m.id(), "a connection-level error carries request id 0");
        assertNotNull(m.text());
        return m;
    }

    @Test
    void badMagicInHandshakeIsAnsweredWithExplainingErrorThenClosed() throws Exception {
        try (RawOracleSocket s = RawOracleSocket.connect(oracle.port())) {
            s.handshake(0x12345678, Wire.VERSION);
            Message err = connectionError(s);
            assertEquals(Wire.ERR_MALFORMED, err.code(), err.toString());
            assertTrue(err.text().contains("magic") && err.text().contains("0x12345678")
                    && err.text().contains("Sibyl"), "unhelpful text: " + err.text());
        }
    }

    @Test
    void handshakeTooShortIsAnsweredWithErrorThenClosed() throws Exception {
        try (RawOracleSocket s = RawOracleSocket.connect(oracle.port())) {
            ByteBuf b = Unpooled.buffer();
            b.writeShort(7);
            s.sendFrame(b);
            Message err = connectionError(s);
            assertEquals(Wire.ERR_MALFORMED, err.code(), err.toString());
            assertTrue(err.text().contains("handshake"), "unhelpful text: " + err.text());
        }
    }

    @Test
    void httpRequestOnOraclePortIsRejectedWithoutWaitingForAGigabyte() throws Exception {
        try (RawOracleSocket s = RawOracleSocket.connect(oracle.port())) {
            // "GET " read as a length prefix is about 1.2 GB: it must be refused at once, not buffered.
            s.sendRaw("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
            Message err = connectionError(s);
            assertEquals(Wire.ERR_TOO_LARGE, err.code(), err.toString());
            assertTrue(err.text().contains("max.frame.bytes"), "unhelpful text: " + err.text());
        }
    }

    /**
     * Wire.ERR_VERSION exists for exactly this case (and a client would use it to tell "upgrade" apart from "not an
     * oracle"), so a version mismatch should carry it.
     */
    @Test
    void wrongProtocolVersionIsAnsweredWithVersionErrorThenClosed() throws Exception {
        try (RawOracleSocket s = RawOracleSocket.connect(oracle.port())) {
            s.handshake(Wire.MAGIC, (short) (Wire.VERSION + 41));
            Message err = connectionError(s);
            assertTrue(err.text().contains("version") && err.text().contains(Integer.toString(Wire.VERSION + 41)),
                    "unhelpful text: " + err.text());
            assertEquals(Wire.ERR_VERSION, err.code(), "a version mismatch should carry Wire.ERR_VERSION; got " + err);
        }
    }

    @Test
    void emptyRangeInARangeCleanedUpReportIsMalformedAndCloses() throws Exception {
        try (RawOracleSocket s = RawOracleSocket.connect(oracle.port())) {
            s.handshake();
            ByteBuf b = Unpooled.buffer();
            b.writeByte(Wire.RANGE_CLEANED_UP);
            Varints.writeUnsigned(b, 1);
            Varints.writeUnsigned(b, 500); // from
            Varints.writeUnsigned(b, 500); // to: (500, 500] is empty
            s.sendFrame(b);
            Message err = connectionError(s);
            assertEquals(Wire.ERR_MALFORMED, err.code(), err.toString());
            assertTrue(err.text().contains("(500, 500]"), "unhelpful text: " + err.text());
        }
    }

    @Test
    void unknownMessageTypeAfterGoodHandshakeIsMalformedAndCloses() throws Exception {
        try (RawOracleSocket s = RawOracleSocket.connect(oracle.port())) {
            s.handshake();
            ByteBuf b = Unpooled.buffer();
            b.writeByte(99);
            Varints.writeUnsigned(b, 1);
            s.sendFrame(b);
            Message err = connectionError(s);
            assertEquals(Wire.ERR_MALFORMED, err.code(), err.toString());
            assertTrue(err.text().contains("unknown message type 99"), "unhelpful text: " + err.text());
        }
    }

    @Test
    void commitDeclaringTenRowsButCarryingThreeIsMalformedAndCloses() throws Exception {
        try (RawOracleSocket s = RawOracleSocket.connect(oracle.port())) {
            s.handshake();
            s.sendFrame(RawOracleSocket.begin(Unpooled.buffer(), 1));
            long start = s.expect(Wire.STARTED).value();
            ByteBuf b = Unpooled.buffer();
            b.writeByte(Wire.COMMIT);
            Varints.writeUnsigned(b, 2);
            Varints.writeUnsigned(b, start);
            Varints.writeUnsigned(b, 10);
            b.writeLong(1).writeLong(2).writeLong(3);
            s.sendFrame(b);
            Message err = connectionError(s);
            assertEquals(Wire.ERR_MALFORMED, err.code(), err.toString());
            assertTrue(err.text().contains("10 rows") && err.text().contains("24 bytes"),
                    "unhelpful text: " + err.text());
        }
    }

    @Test
    void goodBeginFollowedByGarbageInTheSameFrameIsRejectedAsAWhole() throws Exception {
        try (RawOracleSocket s = RawOracleSocket.connect(oracle.port())) {
            s.handshake();
            ByteBuf b = RawOracleSocket.begin(Unpooled.buffer(), 1);
            b.writeByte(Wire.QUERY);
            b.writeByte(0x80); // varint id cut off in the middle
            s.sendFrame(b);
            Message err = connectionError(s); // exactly one message: no STARTED for the BEGIN before the garbage
            assertEquals(Wire.ERR_MALFORMED, err.code(), err.toString());
            assertTrue(err.text().contains("byte 2"), "the error should name the offset: " + err.text());
        }
    }

    @Test
    void zeroTimestampAndEmptyFrameAreMalformed() throws Exception {
        try (RawOracleSocket s = RawOracleSocket.connect(oracle.port())) {
            s.handshake();
            s.sendFrame(RawOracleSocket.withTimestamp(Unpooled.buffer(), Wire.QUERY, 1, 0));
            Message err = connectionError(s);
            assertEquals(Wire.ERR_MALFORMED, err.code(), err.toString());
            assertTrue(err.text().contains("positive"), "unhelpful text: " + err.text());
        }
        try (RawOracleSocket s = RawOracleSocket.connect(oracle.port())) {
            s.handshake();
            s.sendFrame(Unpooled.buffer());
            Message err = connectionError(s);
            assertEquals(Wire.ERR_MALFORMED, err.code(), err.toString());
            assertTrue(err.text().contains("empty"), "unhelpful text: " + err.text());
        }
    }

    @Test
    void frameLongerThanMaxFrameBytesIsTooLargeAndCloses() throws Exception {
        try (RawOracleSocket s = RawOracleSocket.connect(oracle.port())) {
            s.handshake();
            ByteBuf b = Unpooled.buffer();
            b.writeInt(MAX_FRAME_BYTES + 1); // length prefix only, and a few bytes of the body
            b.writeByte(Wire.BEGIN).writeByte(1);
            byte[] raw = new byte[b.readableBytes()];
            b.readBytes(raw);
            s.sendRaw(raw);
            Message err = connectionError(s);
            assertEquals(Wire.ERR_TOO_LARGE, err.code(), err.toString());
            assertTrue(err.text().contains("max.frame.bytes=" + MAX_FRAME_BYTES), "unhelpful text: " + err.text());
        }
    }

    @Test
    void frameOfExactlyMaxFrameBytesIncludingPrefixIsAccepted() throws Exception {
        // The client sizes its frames against the advertised max.frame.bytes counting the 4-byte prefix.
        try (RawOracleSocket s = RawOracleSocket.connect(oracle.port())) {
            long[] hello = s.handshake();
            assertEquals(MAX_FRAME_BYTES, hello[3], "HELLO advertises max.frame.bytes");
            assertEquals(MAX_WRITE_SET_ROWS, hello[2], "HELLO advertises max.write.set.rows");
            ByteBuf b = Unpooled.buffer();
            while (b.readableBytes() + 4 < MAX_FRAME_BYTES) {
                RawOracleSocket.begin(b, 1); // 2 bytes each; request ids are the client's business
            }
            assertEquals(MAX_FRAME_BYTES, b.readableBytes() + 4);
            int begins = b.readableBytes() / 2;
            s.sendFrame(b);
            long previous = 0;
            for (int i = 0; i < begins; i++) {
                long ts = s.expect(Wire.STARTED).value();
                assertTrue(ts > previous, "start timestamps ascend within one frame");
                previous = ts;
            }
        }
    }

    @Test
    void writeSetAboveLimitGetsPerRequestErrorAndConnectionStaysUsable() throws Exception {
        try (RawOracleSocket s = RawOracleSocket.connect(oracle.port())) {
            s.handshake();
            s.sendFrame(RawOracleSocket.begin(Unpooled.buffer(), 1));
            long start = s.expect(Wire.STARTED).value();
            long[] rows = new long[MAX_WRITE_SET_ROWS + 1];
            for (int i = 0; i < rows.length; i++) {
                rows[i] = RowIds.of("too-many", bytes(i));
            }
            s.sendFrame(RawOracleSocket.commit(Unpooled.buffer(), 7, start, rows));
            Message err = s.expect(Wire.ERROR);
            assertEquals(7, err.id(), "the error answers the commit's request id");
            assertEquals(Wire.ERR_TOO_LARGE, err.code(), err.toString());
            assertTrue(err.text().contains("max.write.set.rows=" + MAX_WRITE_SET_ROWS),
                    "unhelpful text: " + err.text());

            // Same socket: still served.
            s.sendFrame(RawOracleSocket.begin(Unpooled.buffer(), 8));
            Message started = s.expect(Wire.STARTED);
            assertEquals(8, started.id());
            assertTrue(started.value() > start);
            // The oversized transaction was aborted, as the error says.
            s.sendFrame(RawOracleSocket.withTimestamp(Unpooled.buffer(), Wire.QUERY, 9, start));
            Message status = s.expect(Wire.STATUS);
            assertEquals(9, status.id());
            assertEquals(Wire.STATUS_ABORTED, status.code(), status.toString());
            // And a commit within the limit goes through.
            s.sendFrame(RawOracleSocket.commit(Unpooled.buffer(), 10, started.value(),
                    java.util.Arrays.copyOf(rows, MAX_WRITE_SET_ROWS)));
            Message committed = s.expect(Wire.COMMITTED);
            assertEquals(10, committed.id());
            assertTrue(committed.value() > started.value());
        }
    }

    @Test
    void commitOfUnknownTransactionGetsPerRequestErrorAndConnectionStaysUsable() throws Exception {
        try (RawOracleSocket s = RawOracleSocket.connect(oracle.port())) {
            s.handshake();
            s.sendFrame(RawOracleSocket.commit(Unpooled.buffer(), 3, 1L << 40, 42L));
            Message err = s.expect(Wire.ERROR);
            assertEquals(3, err.id());
            assertEquals(Wire.ERR_UNKNOWN_TRANSACTION, err.code(), err.toString());
            s.sendFrame(RawOracleSocket.begin(Unpooled.buffer(), 4));
            assertEquals(4, s.expect(Wire.STARTED).id());
        }
    }

    @Test
    void oversizedWriteSetThroughOracleClientFailsOnlyThatCommit() throws Exception {
        try (OracleClient c = OracleClient.connect("127.0.0.1", oracle.port())) {
            long start = c.begin().get(5, TimeUnit.SECONDS);
            long[] rows = new long[MAX_WRITE_SET_ROWS + 1];
            for (int i = 0; i < rows.length; i++) {
                rows[i] = RowIds.of("too-many-client", bytes(i));
            }
            Throwable t = org.junit.jupiter.api.Assertions.assertThrows(java.util.concurrent.ExecutionException.class,
                    () -> c.commit(start, rows).get(5, TimeUnit.SECONDS)).getCause();
            OracleException e = org.junit.jupiter.api.Assertions.assertInstanceOf(OracleException.class, t);
            assertEquals(Wire.ERR_TOO_LARGE, e.code());
            assertTrue(e.getMessage().contains("max.write.set.rows"), e.getMessage());
            assertTrue(c.isOpen());
            commitOne(c);
        }
    }
}
