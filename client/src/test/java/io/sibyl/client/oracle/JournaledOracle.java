package io.sibyl.client.oracle;

import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import io.sibyl.oracle.journal.JournalBootstrap;
import io.sibyl.oracle.journal.JournalSettings;
import io.sibyl.oracle.journal.RecoveredState;

import java.util.concurrent.atomic.AtomicReference;

/**
 * An in-process oracle started the way so-server starts it: recover from the BookKeeper journal (fencing the one
 * before), then serve with a journal that continues it. Its fatal-error path is the server's.
 */
public record JournaledOracle(OracleServer server, RecoveredState recovered) implements AutoCloseable {
    public static JournaledOracle start(JournalSettings js, String owner, OracleConfig config) throws Exception {
        AtomicReference<OracleServer> ref = new AtomicReference<>();
        AtomicReference<String> early = new AtomicReference<>();
        JournalBootstrap.Started started = JournalBootstrap.recoverAndOpen(js, owner, (reason, cause) -> {
            OracleServer s = ref.get();
            if (s != null) {
                s.fatalError(reason, cause);
            } else {
                early.set(reason);
            }
        });
        OracleServer server = OracleServer.start(config, started.journal(), started.recovered().newOracleState(config));
        ref.set(server);
        if (early.get() != null) {
            server.fatalError(early.get(), null);
        }
        return new JournaledOracle(server, started.recovered());
    }

    public int port() {
        return server.port();
    }

    @Override
    public void close() {
        server.close();
    }
}
