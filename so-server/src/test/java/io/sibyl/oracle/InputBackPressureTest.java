package io.sibyl.oracle;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sibyl.protocol.Varints;
import io.sibyl.protocol.Wire;
import org.junit.jupiter.api.Test;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.net.Socket;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/** Over a real socket, with the sequencer on its own thread: how much of one client's input the oracle queues. */
class InputBackPressureTest {
    private static final int FRAME_BYTES = 1 << 20;

    @Test
    void aClientSendingLargeFramesFasterThanTheSequencerTakesThemQueuesAFewMegabytesNotSixtyFourFrames()
            throws Exception {
        CountDownLatch journalStalled = new CountDownLatch(1);
        Journal stalledJournal = new Journal() {
            @Override
            public void append(byte[] block, Runnable onDurable) {
                try {
                    journalStalled.await(); // the sequencer stops at its first block: nothing queued is taken
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                }
                onDurable.run();
            }

            @Override
            public long appendedBlocks() {
                return 0;
            }

            @Override
            public void close() {
                journalStalled.countDown();
            }
        };
        OracleConfig config = OracleConfig.defaults().withPort(0).withThreads(1, false)
                .withLimits(1 << 20, 2 * FRAME_BYTES);
        long maxQueuedBytes = Math.max(ClientSession.MIN_MAX_QUEUED_BYTES, config.maxFrameBytes());
        try (OracleServer server = OracleServer.start(config, stalledJournal);
             Socket socket = new Socket("127.0.0.1", server.port())) {
            DataOutputStream out = new DataOutputStream(socket.getOutputStream());
            DataInputStream in = new DataInputStream(socket.getInputStream());
            out.writeInt(6);
            out.writeInt(Wire.MAGIC);
            out.writeShort(Wire.VERSION);
            out.flush();
            byte[] frame = queries(FRAME_BYTES);
            int frames = 40;
            CountDownLatch allSent = new CountDownLatch(1);
            Thread sender = new Thread(() -> {
                try {
                    for (int f = 0; f < frames; f++) {
                        out.writeInt(frame.length);
                        out.write(frame);
                    }
                    out.flush();
                    allSent.countDown();
                } catch (Exception e) {
                    // the socket is closed at the end of the test
                }
            }, "sender");
            sender.setDaemon(true);
            sender.start();
            Thread.sleep(2000);
            long queued = (long) server.sequencer().queued() * frame.length;
            assertTrue(queued <= maxQueuedBytes + 2L * frame.length, "one connection queued " + queued
                    + " bytes for the sequencer (bound " + maxQueuedBytes + ")");
            assertTrue(allSent.getCount() == 1, "the oracle took all " + frames + " MB while its sequencer was stalled");

            // Once the sequencer moves again, reading resumes and every frame is taken and answered.
            journalStalled.countDown();
            Thread reader = new Thread(() -> {
                try {
                    while (true) {
                        in.readFully(new byte[in.readInt()]);
                    }
                } catch (Exception e) {
                    // closed at the end of the test
                }
            }, "reader");
            reader.setDaemon(true);
            reader.start();
            assertTrue(allSent.await(30, TimeUnit.SECONDS), "reading did not resume after the sequencer caught up");
        }
    }

    /** A frame body of QUERY requests, {@code bytes} long. */
    private static byte[] queries(int bytes) {
        ByteBuf b = Unpooled.buffer(bytes);
        long id = 1;
        while (b.writableBytes() >= 20) {
            b.writeByte(Wire.QUERY);
            Varints.writeUnsigned(b, id++);
            Varints.writeUnsigned(b, 1);
        }
        byte[] body = new byte[b.readableBytes()];
        b.readBytes(body);
        return body;
    }
}
