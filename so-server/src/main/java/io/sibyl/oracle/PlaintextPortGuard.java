package io.sibyl.oracle;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.sibyl.protocol.Frames;
import io.sibyl.protocol.Wire;

import java.util.List;

/**
 * First handler of a connection to an oracle without TLS: a peer that opens with a TLS record (a client set up for
 * TLS) is told, in plaintext, that this port does not speak TLS, rather than that its first "frame" is too large;
 * anything else goes on to the frame decoder and the guard removes itself.
 */
final class PlaintextPortGuard extends ByteToMessageDecoder {
    /** A TLS record starts with content type 22 (handshake) and major version 3. */
    private static final int TLS_HANDSHAKE = 0x16;
    private static final int TLS_MAJOR_VERSION = 0x03;

    @Override
    protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
        if (in.readableBytes() < 2) {
            return;
        }
        int i = in.readerIndex();
        if (in.getUnsignedByte(i) == TLS_HANDSHAKE && in.getUnsignedByte(i + 1) == TLS_MAJOR_VERSION) {
            in.skipBytes(in.readableBytes());
            ctx.channel().config().setAutoRead(false);
            ctx.writeAndFlush(Frames.errorFrame(ctx.alloc(), Wire.ERR_FORBIDDEN, "this oracle does not use TLS"
                    + " (tls=false): set sibyl.client.tls=false on the client, or tls=true and a key store on the"
                    + " oracle (docs/operations.md, Security)")).addListener(ChannelFutureListener.CLOSE);
            return;
        }
        ctx.pipeline().remove(this); // hands what it holds to the frame decoder
    }
}
