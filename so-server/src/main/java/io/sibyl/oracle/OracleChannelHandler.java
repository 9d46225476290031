package io.sibyl.oracle;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInboundHandlerAdapter;
import io.netty.handler.codec.TooLongFrameException;
import io.netty.util.concurrent.ScheduledFuture;
import io.sibyl.protocol.Frames;
import io.sibyl.protocol.ProtocolException;
import io.sibyl.protocol.Wire;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.concurrent.TimeUnit;

/** Per-connection inbound handler: handshake, validation, back-pressure and hand-off to the sequencer. */
final class OracleChannelHandler extends ChannelInboundHandlerAdapter {
    private static final Logger LOG = LoggerFactory.getLogger(OracleChannelHandler.class);

    private final OracleServer server;
    private ClientSession session;
    private boolean handshaken;
    private boolean failed;
    private ScheduledFuture<?> pushTimer;

    OracleChannelHandler(OracleServer server) {
        this.server = server;
    }

    @Override
    public void channelActive(ChannelHandlerContext ctx) {
        session = server.newSession(ctx.channel());
        long period = Math.max(1, Math.min(server.config().pushIntervalMillis(), 100));
        pushTimer = ctx.executor().scheduleAtFixedRate(session::pushIfSilent, period, period, TimeUnit.MILLISECONDS);
        ctx.fireChannelActive();
    }

    @Override
    public void channelWritabilityChanged(ChannelHandlerContext ctx) {
        session.updateReading(); // a client that does not read its replies is not read either
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
        if (handshaken) {
            server.sequencer().enqueue(new Sequencer.Inbound(Sequencer.Inbound.DISCONNECT, session, null));
            server.sequencer().inputDrained();
        }
        server.sessionClosed(session);
        ctx.fireChannelInactive();
    }

    @Override
    public void channelRead(ChannelHandlerContext ctx, Object msg) {
        ByteBuf frame = (ByteBuf) msg;
        if (failed) {
            frame.release();
            return;
        }
        try {
            if (!handshaken) {
                handshake(frame);
                frame.release();
                handshaken = true;
                server.sequencer().enqueue(new Sequencer.Inbound(Sequencer.Inbound.HANDSHAKE, session, null));
                return;
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

    private static void handshake(ByteBuf frame) {
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
        if (cause instanceof TooLongFrameException) {
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

    private void fail(ChannelHandlerContext ctx, byte code, String reason) {
        if (failed) {
            return;
        }
        failed = true;
        LOG.warn("closing connection from {}: {}", ctx.channel().remoteAddress(), reason);
        if (session != null) {
            session.refuseInput();
        } else {
            ctx.channel().config().setAutoRead(false);
        }
        ctx.writeAndFlush(Frames.errorFrame(ctx.alloc(), code, reason)).addListener(ChannelFutureListener.CLOSE);
    }
}
