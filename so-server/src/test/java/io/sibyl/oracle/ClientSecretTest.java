package io.sibyl.oracle;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sibyl.oracle.OracleSurvivesRandomFramesTest.Msg;
import io.sibyl.oracle.OracleSurvivesRandomFramesTest.WireSocket;
import io.sibyl.protocol.SecretProof;
import io.sibyl.protocol.Wire;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * An oracle with {@code client.secret.file} serves only connections that proved the secret: a client that sends a
 * request without it, or after a wrong proof, is refused whole and closed; one that proves it is served.
 */
class ClientSecretTest {
    private static final byte[] SECRET = "the-client-secret-of-this-test-42".getBytes(StandardCharsets.UTF_8);
    @TempDir
    static Path dir;
    @RegisterExtension
    static final OracleExtension oracle = OracleExtension.withSettings(c -> c
            .withCapacities(1 << 12, 1 << 10, 1 << 8)
            .withClientSecretFile(Files.write(dir.resolve("client.secret"), SECRET).toString()));

    @Test
    void aClientThatSendsARequestWithoutProvingTheSecretIsRefusedAndClosed() throws Exception {
        try (WireSocket s = WireSocket.connect(oracle.port())) {
            s.handshake(Wire.VERSION);
            s.send(ForeignTransactionRequestsTest.request(Wire.BEGIN, 1));
            assertRefusedWhole(s.readUntilClosed());
        }
    }

    @Test
    void aWrongSecretIsRefusedAndTheConnectionGetsNothingDecided() throws Exception {
        try (WireSocket s = WireSocket.connect(oracle.port())) {
            s.handshake(Wire.VERSION);
            s.send(authenticate(1, "not-the-client-secret-0123".getBytes(StandardCharsets.UTF_8), s.nonce()));
            Msg refused = reply(s, 1);
            assertEquals(Wire.ERR_FORBIDDEN, refused.code(), refused.toString());
            assertTrue(refused.text().contains("sibyl.client.secret.file"), refused.text());
            s.send(ForeignTransactionRequestsTest.request(Wire.BEGIN, 2));
            assertRefusedWhole(s.readUntilClosed());
        }
    }

    @Test
    void aClientThatProvesTheSecretIsServed() throws Exception {
        try (WireSocket s = WireSocket.connect(oracle.port())) {
            s.handshake(Wire.VERSION);
            s.send(authenticate(1, SECRET, s.nonce()));
            assertEquals(Wire.ACK, s.expectReply(1).type());
            s.send(ForeignTransactionRequestsTest.request(Wire.BEGIN, 2));
            assertEquals(Wire.STARTED, s.expectReply(2).type());
        }
    }

    private static ByteBuf authenticate(long id, byte[] secret, byte[] nonce) {
        ByteBuf b = Unpooled.buffer().writeByte(Wire.AUTHENTICATE).writeByte((int) id).writeByte(Wire.AUTH_CLIENT);
        return b.writeBytes(SecretProof.compute(secret, Wire.AUTH_CLIENT, nonce));
    }

    private static void assertRefusedWhole(List<Msg> untilClosed) {
        Msg error = untilClosed.stream().filter(m -> m.type() == Wire.ERROR).findFirst().orElseThrow();
        assertEquals(0, error.id(), "refused for the whole connection: " + error);
        assertEquals(Wire.ERR_FORBIDDEN, error.code());
        assertTrue(error.text().contains("sibyl.client.secret.file"), error.text());
        assertTrue(untilClosed.stream().noneMatch(m -> m.type() == Wire.STARTED), "nothing decided: " + untilClosed);
    }

    private static Msg reply(WireSocket s, long id) throws Exception {
        while (true) {
            for (Msg m : s.readFrameForTest()) {
                if (m.id() == id && m.type() != Wire.DELTA && m.type() != Wire.HELLO) {
                    return m;
                }
            }
        }
    }
}
