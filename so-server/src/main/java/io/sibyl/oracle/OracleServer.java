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
import io.netty.handler.codec.LengthFieldBasedFrameDecoder;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.sibyl.protocol.Wire;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.InetSocketAddress;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/** A running status oracle: Netty I/O threads, the sequencer thread and a journal. */
public final class OracleServer implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(OracleServer.class);

    private final OracleConfig config;
    private final OracleState state;
    private final Journal journal;
    private final ReplicationLog log = new ReplicationLog();
    private final Sequencer sequencer;
    private final Thread sequencerThread;
    private final EventLoopGroup boss;
    private final EventLoopGroup workers;
    private final Channel serverChannel;
    private final AtomicInteger sessionIds = new AtomicInteger();
    private final Set<ClientSession> sessions = ConcurrentHashMap.newKeySet();

    private OracleServer(OracleConfig config, Journal journal) throws InterruptedException {
        this.config = config;
        this.journal = journal;
        this.state = new OracleState(config);
        boolean inline = config.inlineSequencer() && config.ioThreads() == 1;
        this.sequencer = new Sequencer(state, journal, log, config, PooledByteBufAllocator.DEFAULT, inline);
        if (inline) {
            sequencerThread = null;
        } else {
            sequencerThread = new Thread(sequencer, "sibyl-sequencer");
            sequencerThread.setDaemon(true);
            sequencerThread.start();
        }
        boolean epoll = Epoll.isAvailable();
        Class<? extends ServerChannel> channelClass;
        if (epoll) {
            boss = new EpollEventLoopGroup(1, new DefaultThreadFactory("sibyl-accept", true));
            workers = new EpollEventLoopGroup(config.ioThreads(), new DefaultThreadFactory("sibyl-io", true));
            channelClass = EpollServerSocketChannel.class;
        } else {
            boss = new NioEventLoopGroup(1, new DefaultThreadFactory("sibyl-accept", true));
            workers = new NioEventLoopGroup(config.ioThreads(), new DefaultThreadFactory("sibyl-io", true));
            channelClass = NioServerSocketChannel.class;
        }
        ServerBootstrap b = new ServerBootstrap()
                .group(boss, workers)
                .channel(channelClass)
                .option(ChannelOption.SO_BACKLOG, 1024)
                .childOption(ChannelOption.TCP_NODELAY, true)
                .childOption(ChannelOption.ALLOCATOR, PooledByteBufAllocator.DEFAULT)
                .childOption(ChannelOption.WRITE_BUFFER_WATER_MARK,
                        writeBufferWaterMark(config))
                .childHandler(new ChannelInitializer<SocketChannel>() {
                    @Override
                    protected void initChannel(SocketChannel ch) {
                        ch.pipeline().addLast("frames", new LengthFieldBasedFrameDecoder(config.maxFrameBytes(), 0,
                                Wire.LENGTH_FIELD_BYTES, 0, Wire.LENGTH_FIELD_BYTES));
                        ch.pipeline().addLast("oracle", new OracleChannelHandler(OracleServer.this));
                    }
                });
        serverChannel = b.bind(config.host(), config.port()).sync().channel();
        LOG.info("status oracle listening on {} ({} transport, {} I/O threads, sequencer {}, conflict table {} rows,"
                + " journal {})", serverChannel.localAddress(), epoll ? "epoll" : "nio", config.ioThreads(),
                inline ? "inline on the I/O thread" : "on its own thread", config.conflictTableRows(),
                journal.getClass().getSimpleName());
    }

    /** Unwritable (a client not reading) once a connection's outbound backlog passes the metadata lag bound. */
    private static WriteBufferWaterMark writeBufferWaterMark(OracleConfig config) {
        int high = (int) Math.min(Integer.MAX_VALUE, config.maxLagBytes());
        return new WriteBufferWaterMark(high / 2, high);
    }

    /** Starts an oracle with the given journal and returns once it accepts connections. */
    public static OracleServer start(OracleConfig config, Journal journal) throws InterruptedException {
        return new OracleServer(config, journal);
    }

    /** Starts an oracle that keeps its decisions in memory only. */
    public static OracleServer startInMemory(OracleConfig config) throws InterruptedException {
        return start(config, new InMemoryJournal());
    }

    public int port() {
        return ((InetSocketAddress) serverChannel.localAddress()).getPort();
    }

    public OracleConfig config() {
        return config;
    }

    Sequencer sequencer() {
        return sequencer;
    }

    ClientSession newSession(Channel channel) {
        ClientSession s = new ClientSession(sessionIds.incrementAndGet(), channel, log, config);
        sessions.add(s);
        return s;
    }

    void sessionClosed(ClientSession s) {
        sessions.remove(s);
    }

    /** Open client connections. */
    public int connections() {
        return sessions.size();
    }

    /** Transactions committed so far (approximate while running: read without synchronization). */
    public long commits() {
        return state.commits();
    }

    /** Transactions aborted so far (approximate while running). */
    public long aborts() {
        return state.aborts();
    }

    /** Current T_max (approximate while running). */
    public long tMax() {
        return state.tMax();
    }

    @Override
    public void close() {
        serverChannel.close().awaitUninterruptibly();
        workers.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
        boss.shutdownGracefully(0, 2, TimeUnit.SECONDS).awaitUninterruptibly();
        sequencer.stop();
        if (sequencerThread != null) {
            try {
                sequencerThread.join(5000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
        journal.close();
        LOG.info("status oracle stopped after {} commits and {} aborts", state.commits(), state.aborts());
    }
}
