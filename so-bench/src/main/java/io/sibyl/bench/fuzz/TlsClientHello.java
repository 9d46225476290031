package io.sibyl.bench.fuzz;

import javax.net.ssl.SSLContext;
import javax.net.ssl.SSLEngine;
import java.nio.ByteBuffer;
import java.security.GeneralSecurityException;
import java.util.ArrayList;
import java.util.List;

/**
 * Real TLS ClientHello records, made by the JDK's own TLS engine (no network): what a TLS client sends first when it
 * is pointed at an oracle that speaks plaintext.
 */
final class TlsClientHello {
    private TlsClientHello() {
    }

    /** One ClientHello per protocol choice a client may make: the JDK's default, TLS 1.3 only, TLS 1.2 only. */
    static List<byte[]> samples(String host, int port) {
        List<byte[]> hellos = new ArrayList<>();
        for (String[] protocols : new String[][] {null, {"TLSv1.3"}, {"TLSv1.2"}}) {
            try {
                hellos.add(clientHello(host, port, protocols));
            } catch (GeneralSecurityException | javax.net.ssl.SSLException e) {
                throw new IllegalStateException("the JDK could not produce a TLS ClientHello: " + e, e);
            }
        }
        return hellos;
    }

    private static byte[] clientHello(String host, int port, String[] protocols)
            throws GeneralSecurityException, javax.net.ssl.SSLException {
        SSLContext context = SSLContext.getInstance("TLS");
        context.init(null, null, null);
        SSLEngine engine = context.createSSLEngine(host, port);
        engine.setUseClientMode(true);
        if (protocols != null) {
            engine.setEnabledProtocols(protocols);
        }
        engine.beginHandshake();
        ByteBuffer out = ByteBuffer.allocate(engine.getSession().getPacketBufferSize());
        engine.wrap(ByteBuffer.allocate(0), out);
        out.flip();
        byte[] record = new byte[out.remaining()];
        out.get(record);
        if (record.length < 6 || record[0] != 0x16) {
            throw new IllegalStateException("the JDK's first TLS record is not a handshake record");
        }
        return record;
    }
}
