package io.sibyl.oracle.tls;

import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleExtension;
import io.sibyl.oracle.OracleServer;
import io.sibyl.protocol.TlsSettings;
import io.sibyl.protocol.SelfSignedTls;
import io.sibyl.protocol.Wire;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import javax.net.ssl.SSLException;
import javax.net.ssl.SSLSocket;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The oracle's port with TLS and client certificates (mutual TLS), on real sockets: a client with a certificate the
 * oracle trusts is served; one without a certificate, one with a certificate nobody trusts, and a plaintext client are
 * refused, the plaintext one with a message saying what to set.
 */
class TlsOracleTest {
    private static final SelfSignedTls certs = TestCertificates.get();
    @RegisterExtension
    static final OracleExtension oracle = OracleExtension.withSettings(c -> c
            .withCapacities(1 << 12, 1 << 10, 1 << 8)
            .withTls(certs.oracle()));

    @Test
    void aClientWithATrustedCertificateHandshakesBeginsAndCommitsOverTls() throws Exception {
        try (SSLSocket s = tlsSocket(certs.client("client.p12"))) {
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            DataInputStream in = new DataInputStream(s.getInputStream());
            handshake(out);
            byte[] hello = frame(in);
            assertEquals(Wire.HELLO, hello[0], "HELLO over TLS");
            assertTrue(s.getSession().getProtocol().equals("TLSv1.3"), s.getSession().getProtocol());
            out.writeInt(2);
            out.writeByte(Wire.BEGIN);
            out.writeByte(1); // request id
            out.flush();
            byte[] started;
            do {
                started = frame(in); // heartbeats are empty frames
            } while (started.length == 0);
            assertEquals(Wire.STARTED, started[0]);
        }
    }

    @Test
    void aClientWithoutACertificateOrWithAnUntrustedOneIsRefusedInTheTlsHandshake() throws Exception {
        for (String keyStore : new String[] {"", "stranger.p12"}) {
            IOException e = assertThrows(IOException.class, () -> {
                try (SSLSocket s = tlsSocket(certs.client(keyStore))) {
                    // TLS 1.3 reports the server's refusal of the client's certificate on the first read.
                    DataOutputStream out = new DataOutputStream(s.getOutputStream());
                    handshake(out);
                    frame(new DataInputStream(s.getInputStream()));
                }
            }, "key store '" + keyStore + "'");
            assertTrue(e instanceof SSLException || e.getMessage() != null, String.valueOf(e));
        }
        assertTrue(oracleStillServes(), "the refusals did not disturb the oracle");
    }

    @Test
    void aPlaintextClientIsToldThatTheOracleRequiresTls() throws Exception {
        try (Socket s = new Socket("127.0.0.1", oracle.port())) {
            s.setSoTimeout(10_000);
            DataOutputStream out = new DataOutputStream(s.getOutputStream());
            handshake(out);
            byte[] error = frame(new DataInputStream(s.getInputStream()));
            assertEquals(Wire.ERROR, error[0]);
            assertEquals(0, error[1], "for the whole connection");
            assertEquals(Wire.ERR_FORBIDDEN, error[2]);
            String text = new String(error, 4, error.length - 4, StandardCharsets.UTF_8);
            assertTrue(text.contains("requires TLS") && text.contains("sibyl.client.tls=true"), text);
            assertEquals(-1, s.getInputStream().read(), "then closed");
        }
    }

    @Test
    void aTlsClientOfAnOracleWithoutTlsIsToldThePortDoesNotSpeakTls() throws Exception {
        try (OracleServer plain = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(1 << 12, 1 << 10, 1 << 8));
             Socket s = new Socket("127.0.0.1", plain.port())) {
            s.setSoTimeout(10_000);
            // The first bytes of a TLS ClientHello record: once refused as a 368 MB frame ("raise max.frame.bytes").
            s.getOutputStream().write(new byte[] {0x16, 0x03, 0x01, 0x02, 0x00, 0x01, 0x00, 0x01, (byte) 0xfc, 0x03});
            byte[] error = frame(new DataInputStream(s.getInputStream()));
            assertEquals(Wire.ERROR, error[0]);
            assertEquals(Wire.ERR_FORBIDDEN, error[2]);
            String text = new String(error, 4, error.length - 4, StandardCharsets.UTF_8);
            assertTrue(text.contains("does not use TLS") && text.contains("sibyl.client.tls=false"), text);
        }
    }

    private static boolean oracleStillServes() throws Exception {
        try (SSLSocket s = tlsSocket(certs.client("client.p12"))) {
            handshake(new DataOutputStream(s.getOutputStream()));
            return frame(new DataInputStream(s.getInputStream()))[0] == Wire.HELLO;
        }
    }

    private static SSLSocket tlsSocket(TlsSettings client) throws IOException {
        SSLSocket s = (SSLSocket) client.jdkClientContext().getSocketFactory().createSocket("127.0.0.1", oracle.port());
        s.setSoTimeout(10_000);
        return s;
    }

    private static void handshake(DataOutputStream out) throws IOException {
        out.writeInt(6);
        out.writeInt(Wire.MAGIC);
        out.writeShort(Wire.VERSION);
        out.flush();
    }

    private static byte[] frame(DataInputStream in) throws IOException {
        byte[] f = new byte[in.readInt()];
        in.readFully(f);
        return f;
    }
}
