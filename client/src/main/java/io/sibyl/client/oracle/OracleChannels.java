package io.sibyl.client.oracle;

import io.netty.bootstrap.Bootstrap;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandler;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioSocketChannel;
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.handler.ssl.SslHandler;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.sibyl.protocol.Wire;

import javax.net.ssl.SSLParameters;
import java.util.function.Supplier;

/** Opens the TCP (or TLS) channel of an oracle client: its event loop, its pipeline, its socket options. */
final class OracleChannels {
    /** Largest frame accepted from the oracle (replies plus pushed metadata). */
    static final int MAX_INBOUND_FRAME = 512 << 20;

    private OracleChannels() {
    }

    /** A group of one daemon I/O thread, for a client that shares none: epoll where the platform has it. */
    static EventLoopGroup newOwnGroup() {
        return Epoll.isAvailable()
                ? new EpollEventLoopGroup(1, new DefaultThreadFactory("sibyl-oracle-client", true))
                : new NioEventLoopGroup(1, new DefaultThreadFactory("sibyl-oracle-client", true));
    }

    /**
     * Connects to {@code host:port} on an event loop of {@code group}, with TLS if {@code credentials} has it (the
     * oracle's certificate must name the host), frames cut by their length, and {@code replies} last.
     */
    static Channel connect(String host, int port, EventLoopGroup group, long connectTimeoutMillis,
                           OracleCredentials credentials, Supplier<ChannelHandler> replies)
            throws InterruptedException {
        Bootstrap b = new Bootstrap().group(group)
                .channel(group instanceof EpollEventLoopGroup ? EpollSocketChannel.class : NioSocketChannel.class)
                .option(ChannelOption.TCP_NODELAY, true)
                .option(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
                .option(ChannelOption.CONNECT_TIMEOUT_MILLIS, (int) connectTimeoutMillis)
                .handler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        if (credentials.tls() != null) {
                            SslHandler ssl = credentials.tls().newHandler(ch.alloc(), host, port);
                            SSLParameters params = ssl.engine().getSSLParameters();
                            params.setEndpointIdentificationAlgorithm("HTTPS"); // the certificate must name the host
                            ssl.engine().setSSLParameters(params);
                            ch.pipeline().addLast("tls", ssl);
                        }
                        ch.pipeline().addLast(new LengthFieldBasedFrameDecoder(MAX_INBOUND_FRAME, 0,
                                Wire.LENGTH_FIELD_BYTES, 0, Wire.LENGTH_FIELD_BYTES));
                        ch.pipeline().addLast(replies.get());
                    }
                });
        return b.connect(host, port).sync().channel();
    }
}
