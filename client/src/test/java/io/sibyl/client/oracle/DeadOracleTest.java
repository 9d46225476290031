package io.sibyl.client.oracle;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleExtension;
import io.sibyl.oracle.OracleServer;
import io.sibyl.protocol.Frames;
import io.sibyl.protocol.Varints;
import io.sibyl.protocol.Wire;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.ServerSocket;
import java.net.Socket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;

import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A client whose oracle goes away, or was never there: requests in flight and requests made afterwards must fail
 * with {@link OracleUnavailableException} saying which oracle and why, promptly and without hanging; connecting to
 * nothing, or to something that is not an oracle, must fail fast the same way.
 */
class DeadOracleTest {
    @RegisterExtension
    static final OracleExtension oracle = OracleExtension.withSettings(c -> c
            .withCapacities(1 << 16, 1 << 14, 1 << 12));

    /** A client of the oracle at {@code port} whose frames travel as {@code transport} says. */
    private static OracleClient connect(int port, OracleTransport transport) throws InterruptedException {
        return OracleClient.connect("127.0.0.1", port, 10_000, OracleCredentials.newClient(), transport);
    }

    private static Throwable unwrap(Throwable t) {
        while ((t instanceof CompletionException || t instanceof ExecutionException) && t.getCause() != null) {
            t = t.getCause();
        }
        return t;
    }

    /** Waits for a future that must fail because the oracle is unavailable, and returns that exception. */
    private static OracleUnavailableException unavailable(CompletableFuture<?> f) throws Exception {
        ExecutionException e = assertThrows(ExecutionException.class, () -> f.get(5, TimeUnit.SECONDS));
        return assertInstanceOf(OracleUnavailableException.class, unwrap(e), "wrong failure: " + unwrap(e));
    }

    /**
     * Connect and handshake timeout of the fail-fast tests: far above {@link #FAST_MS}, so a client that waited for
     * its timeout instead of noticing the failure cannot pass, while a slow machine has plenty of room.
     */
    private static final long PATIENT_TIMEOUT_MS = 60_000;
    private static final long FAST_MS = 20_000;

    /** Connects with {@link #PATIENT_TIMEOUT_MS}, expecting {@code failure}, and checks it came well before that. */
    private static <E extends Throwable> E failsFast(Class<E> failure, int port, OracleTransport transport) {
        long t0 = System.nanoTime();
        E e = assertThrows(failure, () -> OracleClient.connect("127.0.0.1", port, PATIENT_TIMEOUT_MS,
                OracleCredentials.newClient(), transport));
        long took = TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - t0);
        assertTrue(took < FAST_MS, "failed after " + took + " ms: it waited for the " + PATIENT_TIMEOUT_MS
                + " ms timeout instead of noticing at once; " + e);
        assertFalse(e.getMessage().contains("within " + PATIENT_TIMEOUT_MS + " ms"), "timed out: " + e);
        return e;
    }

    /** A port on which nothing listens (it was free a moment ago). */
    private static int deadPort() throws IOException {
        try (ServerSocket s = new ServerSocket(0)) {
            return s.getLocalPort();
        }
    }

    /**
     * A fake oracle on a plain server socket: answers the handshake with a HELLO, reads (and never answers) requests,
     * and closes the connection or sends an arbitrary last frame when told to.
     */
    private static final class StubOracle implements AutoCloseable {
        final ServerSocket listener = new ServerSocket(0);
        final AtomicLong requestBytes = new AtomicLong();
        final CountDownLatch accepted = new CountDownLatch(1);
        volatile Socket socket;
        final Thread thread;

        StubOracle(boolean answerHandshake) throws IOException {
            thread = new Thread(() -> {
                try {
                    Socket s = listener.accept();
                    socket = s;
                    accepted.countDown();
                    DataInputStream in = new DataInputStream(s.getInputStream());
                    byte[] hs = new byte[in.readInt()];
                    in.readFully(hs);
                    if (answerHandshake) {
                        ByteBuf hello = Unpooled.buffer();
                        hello.writeByte(Wire.HELLO);
                        hello.writeShort(Wire.VERSION);
                        hello.writeZero(Wire.NONCE_BYTES + 1); // nonce, no client secret asked for
                        Varints.writeUnsigned(hello, 1); // T_init
                        Varints.writeUnsigned(hello, 0); // T_max
                        Varints.writeUnsigned(hello, 1000);
                        Varints.writeUnsigned(hello, 1 << 20);
                        Varints.writeUnsigned(hello, 60_000); // reader grace
                        Varints.writeUnsigned(hello, 0); // no transaction max age
                        Varints.writeUnsigned(hello, 0); // no aborted transactions
                        Varints.writeUnsigned(hello, 0); // none added since the snapshot
                        Varints.writeUnsigned(hello, 0); // none removed since
                        Varints.writeUnsigned(hello, 0); // no aborted ranges (protocol version 2)
                        send(hello);
                    }
                    byte[] buf = new byte[4096];
                    int n;
                    InputStream raw = s.getInputStream();
                    while ((n = raw.read(buf)) > 0) {
                        requestBytes.addAndGet(n);
                    }
                } catch (IOException ignored) {
                    // closed by the test
                }
            }, "stub-oracle");
            thread.setDaemon(true);
            thread.start();
        }

        int port() {
            return listener.getLocalPort();
        }

        synchronized void send(ByteBuf body) throws IOException {
            OutputStream out = socket.getOutputStream();
            byte[] bytes = new byte[body.readableBytes()];
            body.readBytes(bytes);
            ByteBuf frame = Unpooled.buffer();
            frame.writeInt(bytes.length);
            frame.writeBytes(bytes);
            out.write(frame.array(), frame.arrayOffset(), frame.readableBytes());
            out.flush();
        }

        void awaitRequestBytes(long atLeast) {
            await("the client's requests reaching the stub oracle").atMost(Duration.ofSeconds(20))
                    .pollInterval(Duration.ofMillis(5)).until(() -> requestBytes.get() >= atLeast);
        }

        void dropConnection() throws IOException {
            socket.close();
        }

        @Override
        public void close() throws IOException {
            listener.close();
            if (socket != null) {
                socket.close();
            }
            try {
                thread.join(2000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }

    @ParameterizedTest
    @EnumSource(OracleTransport.class)
    void requestsInFlightFailWithUnavailableWhenTheOracleDropsTheConnection(OracleTransport transport)
            throws Exception {
        try (StubOracle stub = new StubOracle(true);
             OracleClient client = connect(stub.port(), transport)) {
            List<CompletableFuture<?>> inFlight = new ArrayList<>();
            for (int i = 0; i < 100; i++) {
                inFlight.add(client.begin());
            }
            inFlight.add(client.commit(5, new long[] {1, 2, 3}));
            inFlight.add(client.abort(6));
            inFlight.add(client.cleanedUp(6));
            inFlight.add(client.query(7));
            stub.awaitRequestBytes(100 * 2 + 4 * 2);
            Thread.sleep(50);
            for (CompletableFuture<?> f : inFlight) {
                assertFalse(f.isDone(), "the stub never answers, so nothing can be complete yet");
            }

            long dropped = System.nanoTime();
            stub.dropConnection();
            for (CompletableFuture<?> f : inFlight) {
                OracleUnavailableException e = unavailable(f);
                assertTrue(e.getMessage().contains("127.0.0.1:" + stub.port()), "which oracle? " + e.getMessage());
                assertTrue(e.getMessage().contains("unknown outcome"),
                        "the caller must learn the outcome is unknown: " + e.getMessage());
            }
            // Nothing but the drop completes them (the client has no request timeout): each failing within the
            // 5 s get above is the promptness; this bounds the whole batch with room for a slow machine.
            assertTrue(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - dropped) < FAST_MS,
                    "in-flight requests must fail promptly when the connection drops");
            assertFalse(client.isOpen());

            // Later requests fail at once, without touching the network.
            for (CompletableFuture<?> f : List.of(client.begin(), client.commit(8, new long[] {1}), client.abort(8),
                    client.query(8))) {
                assertTrue(f.isDone(), "a request on a dead connection must fail immediately");
                OracleUnavailableException e = unavailable(f);
                assertTrue(e.getMessage().contains("127.0.0.1:" + stub.port()), e.getMessage());
            }
            client.finish(9); // no reply expected; must not throw
        }
    }

    @ParameterizedTest
    @EnumSource(OracleTransport.class)
    void connectionLevelErrorFromTheOracleFailsInFlightRequestsWithItsText(OracleTransport transport) throws Exception {
        try (StubOracle stub = new StubOracle(true);
             OracleClient client = connect(stub.port(), transport)) {
            CompletableFuture<Long> begin = client.begin();
            stub.awaitRequestBytes(2);
            ByteBuf err = Unpooled.buffer();
            Frames.writeError(err, 0, Wire.ERR_SHUTTING_DOWN, "oracle is shutting down for maintenance");
            stub.send(err);
            OracleUnavailableException e = unavailable(begin);
            assertTrue(e.getMessage().contains("oracle is shutting down for maintenance"), e.getMessage());
            OracleUnavailableException later = unavailable(client.begin());
            assertTrue(later.getMessage().contains("oracle is shutting down for maintenance"), later.getMessage());
        }
    }

    @ParameterizedTest
    @EnumSource(OracleTransport.class)
    void requestsFailWithUnavailableWhenTheRealOracleIsClosedUnderLoad(OracleTransport transport) throws Exception {
        // An oracle of this test's own: the class's shared one must outlive it.
        OracleServer own = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(1 << 16, 1 << 14, 1 << 12));
        int port = own.port();
        try (own; OracleClient client = connect(port, transport)) {
            long s = client.begin().get(5, TimeUnit.SECONDS);
            assertTrue(client.commit(s, new long[] {RowIds.of("dead", new byte[] {1})}).get(5, TimeUnit.SECONDS) > s);

            List<CompletableFuture<Long>> issued = new ArrayList<>();
            CountDownLatch someIssued = new CountDownLatch(1);
            Thread load = new Thread(() -> {
                for (int i = 0; i < 200_000 && client.isOpen(); i++) {
                    synchronized (issued) {
                        issued.add(client.begin());
                    }
                    if (i == 1000) {
                        someIssued.countDown();
                    }
                }
                someIssued.countDown();
            });
            load.start();
            assertTrue(someIssued.await(30, TimeUnit.SECONDS));
            own.close();
            load.join(30_000);
            assertFalse(load.isAlive());

            int failed = 0;
            List<CompletableFuture<Long>> all;
            synchronized (issued) {
                all = new ArrayList<>(issued);
            }
            for (CompletableFuture<Long> f : all) {
                try {
                    f.get(5, TimeUnit.SECONDS); // answered before the oracle went away: fine
                } catch (ExecutionException e) {
                    Throwable cause = unwrap(e);
                    if (cause instanceof OracleException oe && !(oe instanceof OracleUnavailableException)
                            && oe.code() == Wire.ERR_OVERLOADED) {
                        continue; // answered before the close: the running-transaction limit was reached first
                    }
                    assertInstanceOf(OracleUnavailableException.class, cause, "wrong failure: " + cause);
                    failed++;
                }
            }
            assertFalse(client.isOpen(), "the client must notice its oracle is gone");
            OracleUnavailableException later = unavailable(client.begin());
            assertTrue(later.getMessage().contains("127.0.0.1:" + port), later.getMessage());
            assertTrue(later.getMessage().contains("lost") || later.getMessage().contains("closed")
                    || later.getMessage().contains("failed"),
                    "the message should say the connection was lost: " + later.getMessage());
            assertTrue(failed > 0 || all.size() < 200_000, "some requests must have been cut off by the close");

            OracleUnavailableException reconnect = failsFast(OracleUnavailableException.class, port, transport);
            assertTrue(reconnect.getMessage().contains("127.0.0.1:" + port), reconnect.getMessage());
        }
    }

    @ParameterizedTest
    @EnumSource(OracleTransport.class)
    void connectingToAPortWithNothingListeningFailsFastWithUnavailable(OracleTransport transport) throws Exception {
        int port = deadPort();
        // Connection refused must not wait for the connect timeout.
        OracleUnavailableException e = failsFast(OracleUnavailableException.class, port, transport);
        assertTrue(e.getMessage().contains("127.0.0.1:" + port), "which address? " + e.getMessage());
        assertTrue(e.getMessage().contains("cannot connect"), e.getMessage());
        assertEquals(0, e.code());
    }

    @ParameterizedTest
    @EnumSource(OracleTransport.class)
    void connectingToSomethingThatHangsUpFailsFastWithUnavailable(OracleTransport transport) throws Exception {
        try (ServerSocket listener = new ServerSocket(0)) {
            Thread hangUp = new Thread(() -> {
                try (Socket s = listener.accept()) {
                    s.getInputStream().read(); // wait for the handshake, then hang up
                } catch (IOException ignored) {
                    // test over
                }
            });
            hangUp.setDaemon(true);
            hangUp.start();
            OracleUnavailableException e = failsFast(OracleUnavailableException.class, listener.getLocalPort(),
                    transport);
            assertTrue(e.getMessage().contains("127.0.0.1:" + listener.getLocalPort()), e.getMessage());
        }
    }

    @ParameterizedTest
    @EnumSource(OracleTransport.class)
    void connectingToSomethingThatIsNotAnOracleFailsFastWithUnavailable(OracleTransport transport) throws Exception {
        try (ServerSocket listener = new ServerSocket(0)) {
            Thread http = new Thread(() -> {
                try (Socket s = listener.accept()) {
                    s.getInputStream().read();
                    s.getOutputStream().write("HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n".getBytes());
                    s.getOutputStream().flush();
                    Thread.sleep(PATIENT_TIMEOUT_MS);
                } catch (IOException | InterruptedException ignored) {
                    // test over
                }
            });
            http.setDaemon(true);
            http.start();
            // A reply that cannot be an oracle frame must fail the handshake at once.
            OracleUnavailableException e = failsFast(OracleUnavailableException.class, listener.getLocalPort(),
                    transport);
            assertTrue(e.getMessage().contains("127.0.0.1:" + listener.getLocalPort()), e.getMessage());
            http.interrupt();
        }
    }

    @ParameterizedTest
    @EnumSource(OracleTransport.class)
    void oracleRefusingTheHandshakeFailsConnectWithItsReason(OracleTransport transport) throws Exception {
        try (ServerSocket listener = new ServerSocket(0)) {
            Thread refuse = new Thread(() -> {
                try (Socket s = listener.accept()) {
                    DataInputStream in = new DataInputStream(s.getInputStream());
                    in.readFully(new byte[in.readInt()]);
                    ByteBuf err = Frames.errorFrame(Unpooled.buffer().alloc(), Wire.ERR_VERSION,
                            "client speaks protocol version 1 but this oracle speaks 2; upgrade the older side");
                    byte[] bytes = new byte[err.readableBytes()];
                    err.readBytes(bytes);
                    s.getOutputStream().write(bytes);
                    s.getOutputStream().flush();
                    in.read(); // until the client hangs up
                } catch (IOException ignored) {
                    // test over
                }
            });
            refuse.setDaemon(true);
            refuse.start();
            OracleException e = failsFast(OracleException.class, listener.getLocalPort(), transport);
            assertTrue(e.getMessage().contains("upgrade the older side"), "the oracle's reason is lost: " + e);
        }
    }
}
