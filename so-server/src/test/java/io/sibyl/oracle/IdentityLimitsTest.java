package io.sibyl.oracle;

import io.sibyl.oracle.OracleSurvivesRandomFramesTest.Msg;
import io.sibyl.oracle.OracleSurvivesRandomFramesTest.WireSocket;
import io.sibyl.oracle.tls.TestCertificates;
import io.sibyl.protocol.SelfSignedTls;
import io.sibyl.protocol.Wire;
import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static io.sibyl.oracle.ConnectionDefencesTest.awaitConnections;
import static io.sibyl.oracle.ConnectionDefencesTest.begin;
import static io.sibyl.oracle.ConnectionDefencesTest.commit;
import static io.sibyl.oracle.ConnectionDefencesTest.reply;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The limits per identity on real sockets with mutual TLS: one client certificate (all its connections together)
 * cannot hold more than max.running.transactions.per.identity running transactions nor more than
 * max.connections.per.identity connections; what is beyond is refused with an error naming the limit and the setting,
 * while a client of another certificate keeps committing. Without certificates a client's token is its identity, so
 * two connections of one client share its cap too (the attack: 2 x half of max.running.transactions).
 */
class IdentityLimitsTest {
    private static final String CLIENT = "client.p12"; // CN=sibyl-client
    private static final String OTHER = "other-client.p12"; // CN=sibyl-other-client

    private static OracleConfig config(int runningPerIdentity, int connectionsPerIdentity, boolean tls) {
        OracleConfig c = OracleConfig.defaults().withPort(0).withCapacities(1 << 12, 1 << 10, 32)
                .withIdentities(IdentitySettings.defaults().withLimits(runningPerIdentity, connectionsPerIdentity));
        return tls ? c.withTls(TestCertificates.get().oracle()) : c;
    }

    @Test
    void anIdentityFloodingBeginsIsRefusedAtItsCapWhileAnotherIdentityKeepsCommitting() throws Exception {
        try (OracleServer server = OracleServer.startInMemory(config(6, 0, true));
             WireSocket a1 = tls(server, CLIENT);
             WireSocket a2 = tls(server, CLIENT);
             WireSocket b = tls(server, OTHER)) {
            List<Long> held = new ArrayList<>();
            long id = 1;
            for (int i = 0; i < 3; i++) {
                held.add(started(begin(a1, id++)));
                held.add(started(begin(a2, id++)));
            }
            for (WireSocket flooder : List.of(a1, a2, a1)) {
                Msg refused = begin(flooder, id++);
                assertEquals(Wire.ERROR, refused.type(), refused.toString());
                assertEquals(Wire.ERR_OVERLOADED, refused.code());
                assertTrue(refused.text().contains("sibyl-client hold 6 running transactions")
                        && refused.text().contains("max.running.transactions.per.identity=6"), refused.text());
            }
            for (int i = 0; i < 10; i++) {
                long start = started(begin(b, 100 + i));
                b.send(commit(200 + i, start));
                assertEquals(Wire.COMMITTED, reply(b, 200 + i).type(), "the other identity keeps committing");
            }
            a1.send(commit(300, held.get(0)));
            assertEquals(Wire.COMMITTED, reply(a1, 300).type(), "the refused identity is still served");
            started(begin(a2, 301)); // its commit gave a place back, on any of its connections
        }
    }

    @Test
    void anIdentityBeyondItsConnectionCapIsRefusedWhileAnotherIdentityConnects() throws Exception {
        try (OracleServer server = OracleServer.startInMemory(config(0, 2, true))) {
            WireSocket a1 = tls(server, CLIENT);
            try (WireSocket a2 = tls(server, CLIENT);
                 WireSocket refused = tlsSocket(server, CLIENT)) {
                refused.sendHandshake(Wire.VERSION); // as a real client, before it reads the refusal
                List<Msg> got = refused.readUntilClosed();
                assertEquals(1, got.size(), got.toString());
                Msg error = got.get(0);
                assertEquals(0, error.id(), "an error of the whole connection");
                assertEquals(Wire.ERR_OVERLOADED, error.code());
                assertTrue(error.text().contains("sibyl-client has 2 connections open")
                        && error.text().contains("max.connections.per.identity=2"), error.text());
                try (WireSocket b = tls(server, OTHER)) {
                    long start = started(begin(b, 1));
                    b.send(commit(2, start));
                    assertEquals(Wire.COMMITTED, reply(b, 2).type(), "another identity connects and commits");
                }
                assertEquals(Wire.STARTED, begin(a2, 3).type(), "the identity's open connections are served");
            }
            a1.close();
            awaitConnections(server, 0);
            try (WireSocket again = tls(server, CLIENT);
                 WireSocket andAgain = tls(server, CLIENT)) {
                assertEquals(Wire.STARTED, begin(again, 4).type(), "closed connections give their places back");
                assertEquals(Wire.STARTED, begin(andAgain, 5).type());
            }
        }
    }

    @Test
    void withoutCertificatesTheConnectionsOfOneClientTokenShareItsCap() throws Exception {
        // max.running.transactions=32: by default an identity holds half, 16, as a connection does.
        try (OracleServer server = OracleServer.startInMemory(config(0, 0, false));
             WireSocket a1 = WireSocket.connect(server.port());
             WireSocket a2 = WireSocket.connect(server.port());
             WireSocket b = WireSocket.connect(server.port())) {
            a1.handshakeAs(0x5eed_0001L);
            a2.handshakeAs(0x5eed_0001L);
            b.handshakeAs(0x5eed_0002L);
            long id = 1;
            for (int i = 0; i < 8; i++) {
                started(begin(a1, id++));
                started(begin(a2, id++));
            }
            Msg refused = begin(a2, id++);
            assertEquals(Wire.ERR_OVERLOADED, refused.code(), refused.toString());
            assertTrue(refused.text().contains("max.running.transactions.per.identity=16")
                    && refused.text().contains("token-"), refused.text());
            for (int i = 0; i < 16; i++) {
                started(begin(b, id++)); // the other half is left to everyone else
            }
        }
    }

    /** A handshaken connection with the certificate in {@code keyStore}: one client process per certificate. */
    private static WireSocket tls(OracleServer server, String keyStore) throws Exception {
        WireSocket s = tlsSocket(server, keyStore);
        s.handshakeAs(0x5151_0000L + keyStore.length());
        return s;
    }

    static WireSocket tlsSocket(OracleServer server, String keyStore) throws Exception {
        SelfSignedTls certs = TestCertificates.get();
        return WireSocket.over(certs.client(keyStore).jdkClientContext().getSocketFactory()
                .createSocket("127.0.0.1", server.port()));
    }

    private static long started(Msg m) {
        assertEquals(Wire.STARTED, m.type(), m.toString());
        return m.value();
    }
}
