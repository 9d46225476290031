package io.sibyl.oracle;

import io.netty.buffer.ByteBuf;
import io.netty.channel.ChannelFutureListener;
import io.netty.channel.ChannelHandlerContext;
import io.netty.handler.codec.ByteToMessageDecoder;
import io.netty.handler.ssl.SslContext;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.concurrent.EventExecutor;
import io.sibyl.protocol.Frames;
import io.sibyl.protocol.TlsSettings;
import io.sibyl.protocol.Wire;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.net.SocketAddress;
import java.util.List;
import java.util.concurrent.ScheduledFuture;
import java.util.concurrent.TimeUnit;

/**
 * The oracle's side of TLS: the server context, rebuilt when its key or trust store changes on disk (new connections
 * get the new certificates, open ones keep theirs), and the gate at the head of each connection that hands TLS on to
 * an {@link SslHandler} and answers a plaintext peer, in plaintext, that it must use TLS.
 */
final class ServerTls implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(ServerTls.class);
    /** How often the stores' modification times are checked. */
    static final long RELOAD_CHECK_MILLIS = 30_000;
    /** Bytes of a TLS record header, enough to tell TLS from a plaintext handshake. */
    private static final int RECORD_HEADER_BYTES = 5;

    private final TlsSettings settings;
    private final RefusalLog refusals = new RefusalLog(60_000);
    private volatile SslContext context;
    private volatile long loadedModifiedMillis;
    private final ScheduledFuture<?> reloads;

    ServerTls(TlsSettings settings, EventExecutor timer) {
        this.settings = settings;
        this.loadedModifiedMillis = settings.filesModifiedMillis();
        this.context = settings.serverContext(); // refused at start, naming the setting, when a store is unusable
        this.reloads = timer.scheduleWithFixedDelay(this::reloadIfChanged, RELOAD_CHECK_MILLIS, RELOAD_CHECK_MILLIS,
                TimeUnit.MILLISECONDS);
    }

    /** A new connection's first handler. */
    ByteToMessageDecoder gate() {
        return new Gate();
    }

    /** Logs a peer refused in its TLS handshake (bad or missing certificate), once per address per minute. */
    void handshakeRefused(SocketAddress peer, Throwable cause) {
        String host = peer instanceof InetSocketAddress a ? a.getAddress().getHostAddress() : String.valueOf(peer);
        long suppressed = refusals.admit(host);
        if (suppressed >= 0) {
            LOG.warn("refused the TLS handshake of {}: {} ({} more refusals of this address in the last minute were"
                    + " not logged); a client needs a certificate tls.trust.store trusts, and must trust the oracle's",
                    peer, rootMessage(cause), suppressed);
        }
    }

    void reloadIfChanged() {
        long modified = settings.filesModifiedMillis();
        if (modified == loadedModifiedMillis) {
            return;
        }
        try {
            context = settings.serverContext();
            loadedModifiedMillis = modified;
            LOG.info("TLS key and trust stores reloaded: new connections use them");
        } catch (RuntimeException e) {
            LOG.error("TLS stores changed but cannot be loaded; new connections keep the previous ones: {}",
                    e.getMessage());
        }
    }

    @Override
    public void close() {
        reloads.cancel(false);
    }

    private static String rootMessage(Throwable t) {
        Throwable root = t;
        while (root.getCause() != null && root.getCause() != root) {
            root = root.getCause();
        }
        return root.getClass().getSimpleName() + ": " + root.getMessage();
    }

    /** Replaces itself by an SslHandler on a TLS record, or refuses a plaintext peer. */
    private final class Gate extends ByteToMessageDecoder {
        @Override
        protected void decode(ChannelHandlerContext ctx, ByteBuf in, List<Object> out) {
            if (in.readableBytes() < RECORD_HEADER_BYTES) {
                return;
            }
            if (SslHandler.isEncrypted(in)) {
                ctx.pipeline().replace(this, "tls", context.newHandler(ctx.alloc()));
                return;
            }
            in.skipBytes(in.readableBytes());
            String host = ctx.channel().remoteAddress() instanceof InetSocketAddress a
                    ? a.getAddress().getHostAddress() : String.valueOf(ctx.channel().remoteAddress());
            long suppressed = refusals.admit(host);
            if (suppressed >= 0) {
                LOG.warn("refused a plaintext connection from {}: this oracle requires TLS ({} more from this"
                        + " address in the last minute were not logged)", ctx.channel().remoteAddress(), suppressed);
            }
            ctx.channel().config().setAutoRead(false);
            ctx.writeAndFlush(Frames.errorFrame(ctx.alloc(), Wire.ERR_FORBIDDEN, "this oracle requires TLS"
                    + " (tls=true): set sibyl.client.tls=true on the client, with sibyl.client.tls.trust.store"
                    + " trusting the oracle's certificate (docs/operations.md, Security)"))
                    .addListener(ChannelFutureListener.CLOSE);
        }
    }
}
