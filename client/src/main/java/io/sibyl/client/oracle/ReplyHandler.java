package io.sibyl.client.oracle;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.ssl.NotSslRecordException;
import io.sibyl.protocol.ProtocolException;
import io.sibyl.protocol.Wire;

import javax.net.ssl.SSLException;

/**
 * The last handler of a connection's pipeline: notes when the oracle was heard, hands each frame to the decoder, and
 * turns a malformed frame, a lost connection or a TLS failure into the connection's loss. On the I/O thread of an
 * {@link EventLoopTransport}.
 */
final class ReplyHandler extends ChannelInboundHandlerAdapter {
    private final OracleClient client;
    private final String address;
    private final ReplyDecoder decoder;
    private final ReadWindow window;
    private final Handshake handshake;

    ReplyHandler(OracleClient client, ReplyDecoder decoder, ReadWindow window, Handshake handshake) {
        this.client = client;
        this.address = client.address();
        this.decoder = decoder;
        this.window = window;
        this.handshake = handshake;
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        String loss = apply((ByteBuf) msg, decoder, window, address);
        if (loss != null) {
            client.connectionLost(loss);
            ctx.close();
        }
    }

    /**
     * Applies one frame of the oracle's (and releases it), by whichever thread reads the connection: notes that the
     * oracle was heard and hands the frame to the decoder.
     *
     * @return null, or why the connection is lost (a malformed frame, or the oracle closed it with an error)
     */
    static String apply(ByteBuf frame, ReplyDecoder decoder, ReadWindow window, String address) {
        window.heard();
        try {
            return decoder.decode(frame) ? null : "the oracle at " + address + " closed the connection";
        } catch (ProtocolException | IndexOutOfBoundsException e) {
            return "malformed reply from the oracle at " + address + ": " + e.getMessage();
        } finally {
            frame.release();
        }
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        client.connectionLost("connection to the oracle at " + address + " was lost");
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        String tlsProblem = tlsProblem(cause);
        if (tlsProblem != null) {
            // A certificate or plaintext mismatch does not heal by retrying: fail the connect at once.
            handshake.fail(new OracleException(Wire.ERR_FORBIDDEN, tlsProblem));
        }
        client.connectionLost("connection to the oracle at " + address + " failed: "
                + (tlsProblem != null ? tlsProblem : cause));
        ctx.close();
    }

    /** What to fix when {@code cause} is a TLS failure, else null. */
    private String tlsProblem(Throwable cause) {
        for (Throwable t = cause; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof NotSslRecordException) {
                return "the oracle at " + address + " did not answer with TLS: set tls=true on the oracle, or"
                        + " sibyl.client.tls=false here";
            }
            if (t instanceof SSLException) {
                return "TLS with the oracle at " + address + " failed: " + t.getMessage() + "; check that "
                        + "sibyl.client.tls.trust.store trusts the oracle's certificate (which must name the host"
                        + " clients use), and, if the oracle sets tls.trust.store, that sibyl.client.tls.key.store"
                        + " holds a certificate it trusts";
            }
        }
        return null;
    }
}
