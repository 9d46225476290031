package io.sibyl.oracle;

import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.PooledByteBufAllocator;
import io.netty.channel.Channel;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.ChannelOption;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.ServerChannel;
import io.netty.channel.WriteBufferWaterMark;
import io.netty.channel.epoll.Epoll;
import io.netty.channel.epoll.EpollEventLoopGroup;
import io.netty.channel.epoll.EpollServerSocketChannel;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.util.concurrent.DefaultThreadFactory;

import java.util.concurrent.TimeUnit;

/**
 * The oracle's Netty threads and listening socket: an accept thread and {@code io.threads} I/O threads, on epoll where
 * the platform has it (else NIO), and the options every client connection gets.
 */
final class OracleTransport {
    final boolean epoll = Epoll.isAvailable();
    /** The accept thread; also runs the oracle's timers (idle connections, the stats line). */
    final EventLoopGroup boss;
    final EventLoopGroup workers;
    private final Class<? extends ServerChannel> channelClass;

    OracleTransport(int ioThreads) {
        if (epoll) {
            boss = new EpollEventLoopGroup(1, new DefaultThreadFactory("sibyl-accept", true));
            workers = new EpollEventLoopGroup(ioThreads, new DefaultThreadFactory("sibyl-io", true));
            channelClass = EpollServerSocketChannel.class;
        } else {
            boss = new NioEventLoopGroup(1, new DefaultThreadFactory("sibyl-accept", true));
            workers = new NioEventLoopGroup(ioThreads, new DefaultThreadFactory("sibyl-io", true));
            channelClass = NioServerSocketChannel.class;
        }
    }

    /**
     * Listens on {@code host}:{@code port}; each connection's pipeline is set up by {@code pipeline}, and it becomes
     * unwritable (a client not reading) once its outbound backlog passes {@code maxLagBytes}.
     */
    Channel bind(String host, int port, long maxLagBytes, ChannelInitializer<SocketChannel> pipeline)
            throws InterruptedException {
        int high = (int) Math.min(Integer.MAX_VALUE, maxLagBytes);
        ServerBootstrap b = new ServerBootstrap()
                .group(boss, workers)
                .channel(channelClass)
                .option(ChannelOption.SO_BACKLOG, 1024)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK, new WriteBufferWaterMark(high / 2, high))
                .childHandler(pipeline);
        return b.bind(host, port).sync().channel();
    }

    /** Stops the I/O threads, then the accept thread. */
    void shutdown() {
        workers.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
        boss.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
    }
}
