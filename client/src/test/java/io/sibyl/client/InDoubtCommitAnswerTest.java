package io.sibyl.client;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sibyl.protocol.Varints;
import io.sibyl.protocol.Wire;
import org.apache.hadoop.hbase.TableName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

import static io.sibyl.client.TestSupport.put;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A commit whose reply is lost is resolved by asking the oracle. "Committed before T_max" is also what the oracle
 * answers for an aborted transaction whose versions were swept and which it then forgot, so that answer is trusted
 * only within a read window of sending the commit; later, the outcome is unknown. A scripted oracle (real sockets,
 * the wire protocol) gives the answer; HBase is the minicluster.
 */
@ExtendWith(MiniCluster.class)
class InDoubtCommitAnswerTest {

    @Test
    void committedBeforeTmaxSoonAfterTheCommitWasSentMeansCommitted() throws Exception {
        try (ScriptedOracle oracle = new ScriptedOracle(20_000, 0)) {
            Transaction tx = commitThroughLostConnection(oracle, "in_doubt_prompt");
            assertEquals(Transaction.Status.COMMITTED, tx.getStatus());
        }
    }

    @Test
    void committedBeforeTmaxLongAfterTheCommitWasSentIsAnUnknownOutcome() throws Exception {
        // Reader grace 2 s, so a read window of 1 s; the connection drops 2.5 s after the commit arrived.
        try (ScriptedOracle oracle = new ScriptedOracle(2_000, 2_500)) {
            Transaction tx = commitThroughLostConnection(oracle, "in_doubt_stalled");
            assertTrue(tx.getStatus() == Transaction.Status.RUNNING, "neither committed nor rolled back: "
                    + tx.getStatus());
            assertThrows(IllegalStateException.class, () -> oracle.manager.rollback(tx),
                    "an unknown outcome cannot be rolled back: it may have committed");
        }
    }

    /** Writes one row in a transaction and commits it through {@code oracle}, which drops the commit's connection. */
    private static Transaction commitThroughLostConnection(ScriptedOracle oracle, String table) throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable(table, "cf");
        oracle.manager = TransactionManager.create(c.connection(), "127.0.0.1", oracle.port());
        try (TransactionManager tm = oracle.manager; TTable t = new TTable(c.connection(), name)) {
            Transaction tx = tm.begin();
            put(t, tx, "r", "v");
            try {
                tm.commit(tx);
            } catch (CommitOutcomeUnknownException e) {
                assertTrue(e.getMessage() != null && !e.getMessage().isEmpty());
            }
            assertEquals(1, oracle.queries.get(), "the outcome was asked of the oracle once");
            return tx;
        }
    }

    /**
     * Speaks the oracle's side of the wire protocol: a HELLO with the given reader grace, heartbeats, STARTED for
     * BEGIN, and no reply to COMMIT: it drops the connection {@code dropAfterCommitMillis} after the commit arrived.
     * On the next connection it answers a QUERY with "committed before T_max".
     */
    private static final class ScriptedOracle implements AutoCloseable {
        final ServerSocket listener = new ServerSocket(0);
        final long graceMillis;
        final long dropAfterCommitMillis;
        final AtomicLong nextTimestamp = new AtomicLong(1000);
        final AtomicLong queries = new AtomicLong();
        final List<Socket> sockets = new ArrayList<>();
        volatile TransactionManager manager;
        volatile boolean closed;

        ScriptedOracle(long graceMillis, long dropAfterCommitMillis) throws IOException {
            this.graceMillis = graceMillis;
            this.dropAfterCommitMillis = dropAfterCommitMillis;
            Thread acceptor = new Thread(() -> {
                while (!closed) {
                    try {
                        Socket s = listener.accept();
                        synchronized (sockets) {
                            sockets.add(s);
                        }
                        Thread conn = new Thread(() -> serve(s), "scripted-oracle-connection");
                        conn.setDaemon(true);
                        conn.start();
                    } catch (IOException e) {
                        return;
                    }
                }
            }, "scripted-oracle");
            acceptor.setDaemon(true);
            acceptor.start();
        }

        int port() {
            return listener.getLocalPort();
        }

        private void serve(Socket s) {
            try (s) {
                DataInputStream in = new DataInputStream(s.getInputStream());
                in.readFully(new byte[in.readInt()]); // the handshake
                ByteBuf hello = Unpooled.buffer();
                hello.writeByte(Wire.HELLO);
                hello.writeShort(Wire.VERSION);
                hello.writeZero(Wire.NONCE_BYTES + 1); // nonce, no client secret asked for
                Varints.writeUnsigned(hello, nextTimestamp.get()); // T_init
                Varints.writeUnsigned(hello, 0); // T_max
                Varints.writeUnsigned(hello, 100_000); // max write set rows
                Varints.writeUnsigned(hello, 1 << 20); // max frame bytes
                Varints.writeUnsigned(hello, graceMillis);
                Varints.writeUnsigned(hello, 0); // no transaction max age
                Varints.writeUnsigned(hello, 0); // aborted set
                Varints.writeUnsigned(hello, 0); // none added since the snapshot
                Varints.writeUnsigned(hello, 0); // none removed since
                Varints.writeUnsigned(hello, 0); // aborted ranges
                send(s, hello);
                Thread heartbeat = new Thread(() -> {
                    try {
                        while (!s.isClosed()) {
                            send(s, Unpooled.buffer(0)); // an empty frame: the oracle is alive
                            Thread.sleep(20);
                        }
                    } catch (IOException | InterruptedException e) {
                        // the connection is gone
                    }
                }, "scripted-oracle-heartbeat");
                heartbeat.setDaemon(true);
                heartbeat.start();
                while (true) {
                    byte[] frame = new byte[in.readInt()];
                    in.readFully(frame);
                    ByteBuf req = Unpooled.wrappedBuffer(frame);
                    ByteBuf reply = Unpooled.buffer();
                    while (req.isReadable()) {
                        byte type = req.readByte();
                        long id = Varints.readUnsigned(req);
                        switch (type) {
                            case Wire.BEGIN -> {
                                reply.writeByte(Wire.STARTED);
                                Varints.writeUnsigned(reply, id);
                                Varints.writeUnsigned(reply, nextTimestamp.getAndIncrement());
                            }
                            case Wire.COMMIT, Wire.COMMIT_CERTIFIED -> {
                                Varints.readUnsigned(req);
                                for (int list = type == Wire.COMMIT ? 1 : 3; list > 0; list--) {
                                    req.skipBytes((int) Varints.readUnsigned(req) * 8); // written, read, ranges
                                }
                                Thread.sleep(dropAfterCommitMillis);
                                return; // dropped without an answer
                            }
                            case Wire.QUERY -> {
                                Varints.readUnsigned(req);
                                queries.incrementAndGet();
                                reply.writeByte(Wire.STATUS);
                                Varints.writeUnsigned(reply, id);
                                reply.writeByte(Wire.STATUS_COMMITTED_LONG_AGO);
                                Varints.writeUnsigned(reply, 0);
                            }
                            case Wire.ABORT, Wire.CLEANED_UP -> {
                                Varints.readUnsigned(req);
                                reply.writeByte(Wire.ACK);
                                Varints.writeUnsigned(reply, id);
                            }
                            case Wire.FINISH -> Varints.readUnsigned(req);
                            case Wire.WATERMARK_QUERY -> {
                                reply.writeByte(Wire.WATERMARK);
                                Varints.writeUnsigned(reply, id);
                                Varints.writeUnsigned(reply, 0);
                            }
                            default -> throw new IOException("unexpected request type " + type);
                        }
                    }
                    if (reply.isReadable()) {
                        send(s, reply);
                    }
                }
            } catch (IOException | InterruptedException e) {
                // the client or the test closed the connection
            }
        }

        private static void send(Socket s, ByteBuf body) throws IOException {
            byte[] frame = new byte[4 + body.readableBytes()];
            ByteBuf out = Unpooled.wrappedBuffer(frame);
            out.writerIndex(0);
            out.writeInt(body.readableBytes());
            out.writeBytes(body);
            synchronized (s) {
                OutputStream o = s.getOutputStream();
                o.write(frame);
                o.flush();
            }
        }

        @Override
        public void close() throws IOException {
            closed = true;
            listener.close();
            synchronized (sockets) {
                for (Socket s : sockets) {
                    s.close();
                }
            }
        }
    }
}
