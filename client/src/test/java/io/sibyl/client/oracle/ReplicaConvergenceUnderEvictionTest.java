package io.sibyl.client.oracle;

import io.netty.channel.EventLoopGroup;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.util.concurrent.DefaultThreadFactory;
import io.sibyl.oracle.OracleExtension;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The scenario of {@link ReplicaConvergenceTest} against an oracle whose conflict table and commit window are tiny,
 * so T_max keeps rising during the run: writers are aborted as too old, replicas forget old commit timestamps, and
 * late connections must ask the oracle about writers that predate them. Every replica must still agree with the
 * history on every snapshot question.
 */
class ReplicaConvergenceUnderEvictionTest {
    @RegisterExtension
    static final OracleExtension oracle = OracleExtension.withSettings(c -> c.withCapacities(64, 32, 1 << 12));
    private static EventLoopGroup group;

    @BeforeAll
    static void startClientThreads() {
        group = new NioEventLoopGroup(2, new DefaultThreadFactory("replica-eviction-test-client", true));
    }

    @AfterAll
    static void stopClientThreads() {
        group.shutdownGracefully(0, 1, TimeUnit.SECONDS).awaitUninterruptibly();
    }

    @Test
    void hundredConnectionsAgreeOnEveryWritersVisibilityWhileTmaxRises() throws Exception {
        ReplicaConvergenceTest.runScenario(oracle.port(), group, false);
        assertTrue(oracle.server().tMax() > 0,
                "the capacities are meant to force evictions, so T_max must have moved");
    }
}
