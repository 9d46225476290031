package io.sibyl.oracle;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.channel.socket.DuplexChannel;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.util.concurrent.ScheduledFuture;
import io.sibyl.protocol.Frames;
import io.sibyl.protocol.ProtocolException;
import io.sibyl.protocol.Wire;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

/**
 * Per-connection inbound handler: admission (max.connections), handshake (within handshake.timeout.ms), validation,
 * back-pressure and hand-off to the sequencer.
 */
final class OracleChannelHandler extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(OracleChannelHandler.class);
    /**
     * How long a connection refused at the limit stays open after its error, reading and dropping its input: a client
     * sends its handshake as soon as it connects, and closing with those bytes unread would reset the connection,
     * which may destroy the error frame before the client reads it.
     */
    static final long REFUSAL_LINGER_MILLIS = 2000;

    private final OracleServer server;
    private ClientSession session;
    private boolean handshaken;
    /** The hot standby's watch of this oracle: nothing is sent or accepted after its handshake. */
    private boolean watch;
    private boolean failed;
    /** Refused at max.connections: never admitted, its input is dropped until it closes. */
    private boolean refused;
    /** Holds a place under max.connections.per.identity, given back when it closes. */
    private boolean admittedForIdentity;
    /** Its handshake went to the sequencer, which then must hear of its end (refused ones' never went). */
    private boolean connectedToSequencer;
    private ScheduledFuture<?> pushTimer;
    private ScheduledFuture<?> handshakeTimer;

    OracleChannelHandler(OracleServer server) {
        this.server = server;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        if (!server.admission().admit()) {
            refuse(ctx);
            ctx.fireChannelActive();
            return;
        }
        session = server.newSession(ctx.channel());
        long period = Math.max(1, Math.min(server.config().pushIntervalMillis(), 100));
        pushTimer = ctx.executor().scheduleAtFixedRate(session::pushIfSilent, period, period, TimeUnit.MILLISECONDS);
        long timeout = server.config().handshakeTimeoutMillis();
        // Without it a peer that connects and says nothing holds a connection (and a place under max.connections)
        // for as long as it likes.
        handshakeTimer = ctx.executor().schedule(() -> {
            if (!handshaken) {
                fail(ctx, Wire.ERR_MALFORMED, "no handshake within handshake.timeout.ms=" + timeout + " ms of"
                        + " connecting: the first frame must be the handshake (magic 0x53494259 \"SIBY\", version "
                        + Wire.VERSION + "); is this a Sibyl client?");
            }
        }, timeout, TimeUnit.MILLISECONDS);
        ctx.fireChannelActive();
    }

    /**
     * Tells a connection beyond max.connections why it is refused, then half-closes it; it is closed when the peer
     * closes or after {@link #REFUSAL_LINGER_MILLIS}. Existing connections are not touched.
     */
    private void refuse(ChannelHandlerContext ctx) {
        refused = true;
        int limit = server.config().maxConnections();
        String reason = "the oracle has as many connections open as its limit allows (max.connections=" + limit
                + "): this connection is refused; close idle connections (one per client process is enough: its"
                + " threads share it) or raise the limit on the oracle";
        server.admission().refused(ctx.channel(), reason);
        ctx.writeAndFlush(Frames.errorFrame(ctx.alloc(), Wire.ERR_OVERLOADED, reason)).addListener(f -> {
            if (f.isSuccess() && ctx.channel() instanceof DuplexChannel duplex) {
                duplex.shutdownOutput();
            } else {
                ctx.close();
            }
        });
        ctx.executor().schedule(() -> ctx.close(), REFUSAL_LINGER_MILLIS, TimeUnit.MILLISECONDS);
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        if (session != null) {
            session.updateReading(); // a client that does not read its replies is not read either
        }
        ctx.fireChannelWritabilityChanged();
    }

    @Override
    public void channelReadComplete(ChannelHandlerContext ctx) {
        server.sequencer().inputDrained();
        ctx.fireChannelReadComplete();
    }

    @Override
    public void channelInactive(ChannelHandlerContext ctx) {
        if (pushTimer != null) {
            pushTimer.cancel(false);
        }
        if (handshakeTimer != null) {
            handshakeTimer.cancel(false);
        }
        if (connectedToSequencer) {
            server.sequencer().enqueue(new Sequencer.Inbound(Sequencer.Inbound.DISCONNECT, session, null));
            server.sequencer().inputDrained();
        }
        if (admittedForIdentity) {
            server.identityConnections().release(session.identity);
        }
        if (session != null) {
            server.sessionClosed(session);
        }
        ctx.fireChannelInactive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf frame = (ByteBuf) msg;
        if (failed || refused) {
            frame.release();
            return;
        }
        try {
            if (!handshaken) {
                Handshake hs = handshake(frame);
                byte role = hs.role();
                frame.release();
                handshaken = true;
                handshakeTimer.cancel(false);
                if (role == Wire.ROLE_WATCH) {
                    // No HELLO, no replica, no sequencer work: the standby only waits for this connection to end.
                    // Nor an identity: another oracle's certificate need not have the field tls.identity reads.
                    watch = true;
                    session.watch = true;
                    LOG.info("{} watches this oracle (a hot standby)", ctx.channel().remoteAddress());
                    return;
                }
                ClientIdentity identity = identify(ctx, hs.identity());
                if (identity == null) {
                    return; // refused: its certificate names nobody
                }
                session.identity = identity;
                if (!server.identityConnections().admit(identity)) {
                    closeWithError(ctx, Wire.ERR_OVERLOADED, server.identityRefusals().refuseConnection(identity,
                            ctx.channel().remoteAddress(), server.identityConnections().limit()));
                    return;
                }
                admittedForIdentity = true;
                if (identity.certified() && server.config().identities().adminIdentities().contains(identity.name())) {
                    session.admin = true; // read by the sequencer after the handshake below is queued
                    LOG.info("{} has the admin role: its certificate names it {} (admin.identities)",
                            ctx.channel().remoteAddress(), identity.name());
                }
                connectedToSequencer = true;
                server.sequencer().enqueue(new Sequencer.Inbound(Sequencer.Inbound.HANDSHAKE, session, null));
                return;
            }
            if (watch) {
                throw new ProtocolException("a watch connection (handshake role " + Wire.ROLE_WATCH + ") sends nothing"
                        + " after its handshake; clients handshake without a role");
            }
            FrameValidator.validate(frame);
        } catch (VersionMismatch e) {
            frame.release();
            fail(ctx, Wire.ERR_VERSION, e.getMessage());
            return;
        } catch (ProtocolException e) {
            frame.release();
            fail(ctx, Wire.ERR_MALFORMED, e.getMessage());
            return;
        } catch (RuntimeException e) {
            // A validator bug must not leak the frame (pooled direct memory) nor leave the peer guessing.
            frame.release();
            LOG.warn("closing {} after an unexpected error checking its frame", ctx.channel().remoteAddress(), e);
            fail(ctx, Wire.ERR_MALFORMED, "frame could not be checked: " + e);
            return;
        }
        session.frameQueued(frame.readableBytes()); // back-pressure: may stop reading
        server.sequencer().enqueue(new Sequencer.Inbound(Sequencer.Inbound.FRAME, session, frame));
    }

    /**
     * Who is behind the connection: the identity its verified client certificate gives it, with {@code token} (0 or
     * the reserved Long.MIN_VALUE: none sent, so a random one), or the token alone without a certificate. Null when
     * the certificate names nobody in the field {@code tls.identity} reads: the connection is refused.
     */
    private ClientIdentity identify(ChannelHandlerContext ctx, long token) {
        long client = token != 0 && token != Long.MIN_VALUE ? token : ClientSession.randomIdentity();
        String certificate;
        try {
            certificate = server.certificateIdentity().of(ctx.pipeline());
        } catch (IllegalArgumentException e) {
            fail(ctx, Wire.ERR_FORBIDDEN, e.getMessage());
            return null;
        }
        return certificate == null ? ClientIdentity.ofToken(client) : ClientIdentity.ofCertificate(certificate, client);
    }

    /** A handshake's role and the client's identity token (0: none sent). */
    private record Handshake(byte role, long identity) {
    }

    /** Checks the handshake: its role ({@link Wire#ROLE_CLIENT} when the frame has none) and token. */
    private static Handshake handshake(ByteBuf frame) {
        if (frame.readableBytes() < 6) {
            throw new ProtocolException("handshake of " + frame.readableBytes() + " bytes; expected magic and version"
                    + " (is this a Sibyl client?)");
        }
        int magic = frame.readInt();
        if (magic != Wire.MAGIC) {
            throw new ProtocolException(String.format("bad handshake magic 0x%08x; this port speaks the Sibyl oracle"
                    + " protocol", magic));
        }
        short version = frame.readShort();
        if (version != Wire.VERSION) {
            throw new VersionMismatch("client speaks protocol version " + version + " but this oracle speaks "
                    + Wire.VERSION + "; upgrade the older side");
        }
        if (!frame.isReadable()) {
            return new Handshake(Wire.ROLE_CLIENT, 0);
        }
        int rest = frame.readableBytes();
        if (rest != 1 && rest != 1 + Wire.HANDSHAKE_TOKEN_BYTES) {
            throw new ProtocolException("handshake of " + (6 + rest) + " bytes; expected 6 (magic, version), 7 (and a"
                    + " role) or " + (7 + Wire.HANDSHAKE_TOKEN_BYTES) + " (and a client's identity token)");
        }
        byte role = frame.readByte();
        if (role != Wire.ROLE_CLIENT && role != Wire.ROLE_WATCH) {
            throw new ProtocolException("unknown handshake role " + role + "; expected " + Wire.ROLE_CLIENT
                    + " (client) or " + Wire.ROLE_WATCH + " (a standby's watch)");
        }
        if (!frame.isReadable()) {
            return new Handshake(role, 0);
        }
        if (role != Wire.ROLE_CLIENT) {
            throw new ProtocolException("only a client (role " + Wire.ROLE_CLIENT + ") sends an identity token");
        }
        return new Handshake(role, frame.readLong());
    }

    /** The peer is a Sibyl client of another protocol version. */
    private static final class VersionMismatch extends ProtocolException {
        private static final long serialVersionUID = 1L;

        VersionMismatch(String message) {
            super(message);
        }
    }

    @Override
    public void exceptionCaught(ChannelHandlerContext ctx, Throwable cause) {
        if (refused) {
            ctx.close(); // it has its error already
        } else if (server.tls() != null && isTlsFailure(cause)) {
            // Nothing can be said in the protocol: the peer gets the TLS alert; the log gets one line a minute.
            server.tls().handshakeRefused(ctx.channel().remoteAddress(), cause);
            ctx.close();
        } else if (cause instanceof TooLongFrameException) {
            fail(ctx, Wire.ERR_TOO_LARGE, "frame exceeds max.frame.bytes=" + server.config().maxFrameBytes()
                    + " (" + cause.getMessage() + "); send smaller batches or raise the limit on the oracle");
        } else if (cause instanceof IOException) {
            LOG.debug("connection {} failed: {}", ctx.channel().remoteAddress(), cause.toString());
            ctx.close();
        } else {
            LOG.warn("closing {} after an unexpected error", ctx.channel().remoteAddress(), cause);
            fail(ctx, Wire.ERR_MALFORMED, "internal error: " + cause);
        }
    }

    private static boolean isTlsFailure(Throwable cause) {
        for (Throwable t = cause; t != null; t = t.getCause() == t ? null : t.getCause()) {
            if (t instanceof javax.net.ssl.SSLException) {
                return true;
            }
        }
        return false;
    }

    private void fail(ChannelHandlerContext ctx, byte code, String reason) {
        if (failed) {
            return;
        }
        LOG.warn("closing connection from {}: {}", ctx.channel().remoteAddress(), reason);
        closeWithError(ctx, code, reason);
    }

    /** Sends {@code reason} as the connection's error and closes it, reading nothing more; logs nothing. */
    private void closeWithError(ChannelHandlerContext ctx, byte code, String reason) {
        if (failed) {
            return;
        }
        failed = true;
        if (session != null) {
            session.refuseInput();
        } else {
            ctx.channel().config().setAutoRead(false);
        }
        ctx.writeAndFlush(Frames.errorFrame(ctx.alloc(), code, reason)).addListener(ChannelFutureListener.CLOSE);
    }
}
