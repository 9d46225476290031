package io.sibyl.oracle;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelOutboundBuffer;
import io.sibyl.protocol.Varints;
import io.sibyl.protocol.Wire;
import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.lang.reflect.Field;
import java.net.Socket;
import java.util.Set;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** Over a real socket: what the oracle holds for a client that sends requests but does not read the replies. */
class UnreadRepliesTest {
    private static final long MAX_LAG_BYTES = 64 * 1024;

    @Test
    void aClientThatNeverReadsItsRepliesIsClosedBeforeTheOracleBuffersMoreThanMaxLagBytes() throws Exception {
        // Only 2 running transactions: every further BEGIN is refused with a ~150-byte ERROR reply, and nothing is
        // published, so the connection never lags behind the metadata log: only its unread replies grow.
        OracleConfig config = OracleConfig.defaults().withPort(0).withCapacities(1 << 12, 1 << 10, 2)
                .withReplication(1000, MAX_LAG_BYTES);
        try (OracleServer server = OracleServer.startInMemory(config);
             Socket socket = new Socket("127.0.0.1", server.port())) {
            socket.setReceiveBufferSize(64 * 1024);
            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            handshake(out, new DataInputStream(socket.getInputStream()));
            Channel channel = onlyChannel(server);
            long maxPending = 0;
            long id = 1;
            try {
                // Up to 10 frames of 100,000 BEGINs (about 3 MB, answered by about 150 MB of errors); the client
                // reads nothing. Writing fails once the oracle has closed the connection.
                for (int f = 0; f < 10 && channel.isActive(); f++) {
                    ByteBuf b = Unpooled.buffer();
                    for (int i = 0; i < 100_000; i++) {
                        b.writeByte(Wire.BEGIN);
                        Varints.writeUnsigned(b, id++);
                    }
                    byte[] bytes = new byte[b.readableBytes()];
                    b.readBytes(bytes);
                    out.writeInt(bytes.length);
                    out.write(bytes);
                    out.flush();
                    maxPending = Math.max(maxPending, pendingOutbound(channel));
                }
            } catch (java.io.IOException closedByTheOracle) {
                // expected once the connection is closed
            }
            long deadline = System.nanoTime() + 10_000_000_000L;
            while (channel.isActive() && System.nanoTime() < deadline) {
                maxPending = Math.max(maxPending, pendingOutbound(channel));
                Thread.sleep(10);
            }
            assertTrue(!channel.isActive(), "the connection of a client that reads nothing stays open, "
                    + pendingOutbound(channel) + " bytes of replies buffered for it");
            // One delivery (at most max.block.records replies) may land on top of max.lag.bytes before the check.
            assertTrue(maxPending < 16 * MAX_LAG_BYTES, "the oracle held " + maxPending + " bytes of replies");
            while (server.connections() > 0 && System.nanoTime() < deadline) {
                Thread.sleep(10);
            }
            assertEquals(0, server.connections());
        }
    }

    @Test
    void refusedBeginsOfOneFrameLeaveInBlocksOfAtMostMaxBlockRecordsReplies() throws Exception {
        // A refused BEGIN is answered (an ERROR of about 150 bytes) like any request, so its reply must count towards
        // the block: otherwise one frame of them is answered in a single write of megabytes, which the oracle holds
        // whole before it can notice that the client does not read.
        OracleConfig config = OracleConfig.defaults().withPort(0).withCapacities(1 << 12, 1 << 10, 2);
        int begins = 20_000;
        try (OracleServer server = OracleServer.startInMemory(config);
             Socket socket = new Socket("127.0.0.1", server.port())) {
            socket.setSoTimeout(30_000);
            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            DataInputStream in = new DataInputStream(socket.getInputStream());
            handshake(out, in);
            ByteBuf b = Unpooled.buffer();
            for (int id = 1; id <= begins; id++) {
                b.writeByte(Wire.BEGIN);
                Varints.writeUnsigned(b, id);
            }
            byte[] bytes = new byte[b.readableBytes()];
            b.readBytes(bytes);
            out.writeInt(bytes.length);
            out.write(bytes);
            out.flush();
            long received = 0;
            int largestFrame = 0;
            long expectedAtLeast = (begins - 2) * 100L; // every refusal's message is longer than 100 bytes
            while (received < expectedAtLeast) {
                int len = in.readInt();
                in.readFully(new byte[len]);
                received += len;
                largestFrame = Math.max(largestFrame, len);
            }
            long perBlockBound = config.maxBlockRecords() * 200L;
            assertTrue(largestFrame < perBlockBound, "one reply frame carried " + largestFrame + " bytes, more than "
                    + config.maxBlockRecords() + " replies (max.block.records) can take");
        }
    }

    private static void handshake(DataOutputStream out, DataInputStream in) throws Exception {
        out.writeInt(6);
        out.writeInt(Wire.MAGIC);
        out.writeShort(Wire.VERSION);
        out.flush();
        int len = in.readInt();
        in.readFully(new byte[len]); // HELLO: from now on the client reads nothing
    }

    private static long pendingOutbound(Channel channel) {
        ChannelOutboundBuffer outbound = channel.unsafe().outboundBuffer();
        return outbound == null ? 0 : outbound.totalPendingWriteBytes();
    }

    @SuppressWarnings("unchecked")
    private static Channel onlyChannel(OracleServer server) throws Exception {
        Field f = OracleServer.class.getDeclaredField("sessions");
        f.setAccessible(true);
        Set<ClientSession> sessions = (Set<ClientSession>) f.get(server);
        long deadline = System.nanoTime() + 5_000_000_000L;
        while (sessions.isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(5);
        }
        return sessions.iterator().next().channel;
    }
}
