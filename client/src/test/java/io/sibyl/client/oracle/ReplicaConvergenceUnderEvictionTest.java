package io.sibyl.client.oracle;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The scenario of {@link ReplicaConvergenceTest} against an oracle whose conflict table and commit window are tiny,
 * so T_max keeps rising during the run: writers are aborted as too old, replicas forget old commit timestamps, and
 * late connections must ask the oracle about writers that predate them. Every replica must still agree with the
 * history on every snapshot question.
 */
class ReplicaConvergenceUnderEvictionTest {
    private static OracleServer server;
    private static EventLoopGroup group;

    @BeforeAll
    static void startOracle() throws Exception {
        server = OracleServer.startInMemory(OracleConfig.defaults().withPort(0).withCapacities(64, 32, 1 << 12));
        group = new NioEventLoopGroup(2, new DefaultThreadFactory("replica-eviction-test-client", true));
    }

    @AfterAll
    static void stopOracle() {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
        server.close();
    }

    @Test
    void hundredConnectionsAgreeOnEveryWritersVisibilityWhileTmaxRises() throws Exception {
        ReplicaConvergenceTest.runScenario(server.port(), group, false);
        assertTrue(server.tMax() > 0, "the capacities are meant to force evictions, so T_max must have moved");
    }
}
