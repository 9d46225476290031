package io.sibyl.oracle;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.netty.channel.embedded.EmbeddedChannel;
import io.sibyl.protocol.Wire;
import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

/** What one connection is sent, and in which order, driven step by step on an embedded channel. */
class ClientSessionTest {
    private final OracleConfig config = OracleConfig.defaults().withReplication(1, 64L << 20);

    @Test
    void aPushThatRunsBetweenPublishAndDeliverWaitsSoTheRepliesLeaveBeforeTheMetadataPublishedWithThem()
            throws Exception {
        EmbeddedChannel channel = new EmbeddedChannel();
        ReplicationLog log = new ReplicationLog();
        ClientSession session = new ClientSession(1, channel, log, config);
        session.deliveryScheduled();
        session.deliver(Unpooled.wrappedBuffer(new byte[] {Wire.HELLO}), log.tail());
        assertEquals(Wire.HELLO, firstMessageType(channel.readOutbound()));

        // The sequencer seals a block holding STARTED(T_s) for this connection; the journal acknowledges it and the
        // block (with a later one: a commit above T_s, T_max past it) is published before the hop to the event loop.
        session.deliveryScheduled();
        log.publish(new byte[] {1, 2, 3});
        log.publish(new byte[] {4, 5, 6});
        Thread.sleep(5); // past push.interval.ms
        session.pushIfSilent(); // the push timer runs on the event loop before the hopped deliver
        session.deliver(Unpooled.wrappedBuffer(new byte[] {Wire.STARTED, 1, 1}), null);

        ByteBuf first = channel.readOutbound();
        assertNotNull(first);
        assertEquals(Wire.STARTED, firstMessageType(first), "the STARTED reply must reach the client before any"
                + " metadata published with or after its block");
        assertNull(channel.readOutbound(), "the delivery carries the delta itself; no separate push");
        channel.finishAndReleaseAll();
    }

    @Test
    void aPushGoesOutAgainOnceEveryScheduledDeliveryIsSent() throws Exception {
        EmbeddedChannel channel = new EmbeddedChannel();
        ReplicationLog log = new ReplicationLog();
        ClientSession session = new ClientSession(1, channel, log, config);
        session.deliveryScheduled();
        session.deliver(Unpooled.wrappedBuffer(new byte[] {Wire.HELLO}), log.tail());
        ((ByteBuf) channel.readOutbound()).release();

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
