package io.sibyl.oracle;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.sibyl.protocol.Wire;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** What one connection is sent, and in which order, driven step by step on an embedded channel. */
class ClientSessionTest {
    private final OracleConfig config = OracleConfig.defaults().withReplication(1, 64L << 20);

    @Test
    void aPushThatRunsBetweenPublishAndDeliverWaitsSoTheRepliesLeaveBeforeTheMetadataPublishedWithThem()
            throws Exception {
        EmbeddedChannel channel = new EmbeddedChannel();
        ReplicationLog log = new ReplicationLog();
        ClientSession session = handshaken(channel, log);

        // The sequencer seals a block holding STARTED(T_s) for this connection; the journal acknowledges it and the
        // block (with a later one: a commit above T_s, T_max past it) is published before the hop to the event loop.
        session.deliveryScheduled();
        ReplicationLog.Node startedBlock = log.publish(new byte[] {1, 2, 3});
        log.publish(new byte[] {4, 5, 6});
        Thread.sleep(5); // past push.interval.ms
        session.pushIfSilent(); // the push timer runs on the event loop before the hopped deliver
        session.deliver(Unpooled.wrappedBuffer(new byte[] {Wire.STARTED, 1, 1}), null, startedBlock);

        ByteBuf first = channel.readOutbound();
        assertNotNull(first);
        assertEquals(Wire.STARTED, firstMessageType(first), "the STARTED reply must reach the client before any"
                + " metadata published with or after its block");
        assertNull(channel.readOutbound(), "the delivery carries the delta itself; no separate push");
        channel.finishAndReleaseAll();
    }

    /**
     * Two blocks acknowledged in one journal entry: B1 holds an ACK for this connection, B2 its STARTED(T_s) and a
     * commit above T_s. Both are published before the event loop runs the first delivery, which must not carry B2
     * ahead of STARTED.
     */
    @Test
    void anEarlierDeliveryCarriesNoBlockPublishedAfterItsOwn() {
        EmbeddedChannel channel = new EmbeddedChannel();
        ReplicationLog log = new ReplicationLog();
        ClientSession session = handshaken(channel, log);

        session.deliveryScheduled(); // ACK sealed with B1
        session.deliveryScheduled(); // STARTED sealed with B2
        ReplicationLog.Node b1 = log.publish(new byte[] {1, 2, 3});
        ReplicationLog.Node b2 = log.publish(new byte[] {4, 5, 6});
        session.deliver(Unpooled.wrappedBuffer(new byte[] {Wire.ACK, 1}), null, b1);
        session.deliver(Unpooled.wrappedBuffer(new byte[] {Wire.STARTED, 2, 9}), null, b2);

        ByteBuf first = channel.readOutbound();
        ByteBuf second = channel.readOutbound();
        assertEquals(Wire.ACK, first.getByte(Wire.LENGTH_FIELD_BYTES));
        assertEquals(-1, indexOf(first, new byte[] {4, 5, 6}), "B2 left with the ACK, ahead of STARTED");
        assertTrue(indexOf(first, new byte[] {1, 2, 3}) > 0, "B1 left with its own reply");
        assertEquals(Wire.STARTED, second.getByte(Wire.LENGTH_FIELD_BYTES));
        assertTrue(indexOf(second, new byte[] {4, 5, 6}) > 0, "B2 left with STARTED");
        first.release();
        second.release();
        channel.finishAndReleaseAll();
    }

    /**
     * The sequencer seals STARTED(T_s)'s block and the journal publishes it (and a later block) as a push starts: the
     * push must not carry them ahead of STARTED. The interleaving is forced at the outbound-buffer look the push
     * makes first. (That the push reads the log's tail before the pending count, so a block sealed between the two
     * reads is seen as pending, follows from the order the sequencer writes them in; no test can place a thread
     * between two field reads.)
     */
    @Test
    void aBlockSealedAndPublishedAsAPushStartsIsNotPushedAheadOfItsReply() throws Exception {
        ReplicationLog log = new ReplicationLog();
        ClientSession[] session = new ClientSession[1];
        ReplicationLog.Node[] startedBlock = new ReplicationLog.Node[1];
        boolean[] armed = {false};
        EmbeddedChannel channel = new EmbeddedChannel() {
            @Override
            public Unsafe unsafe() {
                if (armed[0]) {
                    armed[0] = false;
                    session[0].deliveryScheduled();
                    startedBlock[0] = log.publish(new byte[] {1, 2, 3});
                    log.publish(new byte[] {4, 5, 6});
                }
                return super.unsafe();
            }
        };
        session[0] = handshaken(channel, log);

        Thread.sleep(5); // past push.interval.ms
        armed[0] = true;
        session[0].pushIfSilent();
        session[0].deliver(Unpooled.wrappedBuffer(new byte[] {Wire.STARTED, 1, 1}), null, startedBlock[0]);
        ByteBuf first = channel.readOutbound();
        while (first != null && first.readableBytes() == Wire.LENGTH_FIELD_BYTES) { // a heartbeat carries nothing
            first.release();
            first = channel.readOutbound();
        }
        assertNotNull(first);
        assertEquals(Wire.STARTED, firstMessageType(first), "the push left blocks published with STARTED first");
        channel.finishAndReleaseAll();
    }

    /** A session on {@code channel} whose HELLO has been delivered (and checked), so pushes may start. */
    private ClientSession handshaken(EmbeddedChannel channel, ReplicationLog log) {
        ClientSession session = new ClientSession(1, channel, log, config);
        session.deliveryScheduled();
        session.deliver(Unpooled.wrappedBuffer(new byte[] {Wire.HELLO}), log.tail(), log.tail());
        assertEquals(Wire.HELLO, firstMessageType(channel.readOutbound()));
        return session;
    }

    private static int indexOf(ByteBuf frame, byte[] bytes) {
        for (int i = frame.readerIndex(); i + bytes.length <= frame.writerIndex(); i++) {
            boolean match = true;
            for (int k = 0; k < bytes.length && match; k++) {
                match = frame.getByte(i + k) == bytes[k];
            }
            if (match) {
                return i;
            }
        }
        return -1;
    }

    @Test
    void aPushGoesOutAgainOnceEveryScheduledDeliveryIsSent() throws Exception {
        EmbeddedChannel channel = new EmbeddedChannel();
        ReplicationLog log = new ReplicationLog();
        ClientSession session = handshaken(channel, log);

        log.publish(new byte[] {7, 8, 9});
        Thread.sleep(5);
        session.pushIfSilent();
        assertEquals(Wire.DELTA, firstMessageType(channel.readOutbound()));
        channel.finishAndReleaseAll();
    }

    private static byte firstMessageType(ByteBuf frame) {
        try {
            assertEquals(frame.readableBytes() - Wire.LENGTH_FIELD_BYTES, frame.getInt(0), "length prefix");
            return frame.getByte(Wire.LENGTH_FIELD_BYTES);
        } finally {
            frame.release();
        }
    }
}
