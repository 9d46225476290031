package io.sibyl.oracle;

import io.sibyl.oracle.ha.LeaderAnnouncement;
import io.sibyl.oracle.ha.OracleCandidate;
import io.sibyl.oracle.journal.FatalErrorListener;
import io.sibyl.oracle.journal.JournalBootstrap;
import io.sibyl.oracle.journal.JournalClients;
import io.sibyl.oracle.journal.JournalSettings;
import io.sibyl.oracle.journal.RecoveredState;
import io.sibyl.oracle.journal.ZnodeAcl;
import io.sibyl.protocol.LeaderRecord;
import io.sibyl.protocol.SecretProof;
import org.apache.zookeeper.ZooKeeper;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;
import picocli.CommandLine.ParameterException;

import java.io.IOException;
import java.io.Reader;
import java.net.BindException;
import java.nio.channels.UnresolvedAddressException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;

/**
 * Runs the status oracle as a process: {@code so-server [--config FILE] [--key=value ...]}, read by
 * {@link OracleServerFlags}. Keys are those {@link OracleSettings} declares and the {@code journal.*} keys of
 * {@link io.sibyl.oracle.journal.JournalKeys}; flags override the file. With {@code journal=bookkeeper} it first takes
 * the journal over and recovers from it (fencing any earlier oracle), logging the recovered state. Prints {@code READY port=N} once it accepts clients. A fatal journal error
 * (fenced by a newer oracle, ZooKeeper session lost, bookies unwritable) stops serving at once and exits with status
 * 1; SIGTERM shuts down cleanly (the journal's ledgers are closed).
 */
public final class OracleServerMain {
    private static final Logger LOG = LoggerFactory.getLogger(OracleServerMain.class);
    /**
     * Logged at start with journal=memory, the default: a restarted in-memory oracle hands out its timestamps again,
     * and the damage shows only later, in the tables it served (docs/operations.md, the journal setting).
     */
    static final String IN_MEMORY_JOURNAL_WARNING = "journal=memory: this oracle keeps its commit and abort decisions"
            + " in memory only. Restarting it loses every decision it made and makes it hand out the same timestamps"
            + " again, which overwrites and deletes committed data in the tables it served. For tests and benchmarks"
            + " only; in production run --journal=bookkeeper (docs/operations.md, docs/journal.md)";

    private OracleServerMain() {
    }

    /** How long SIGTERM waits for the journal to hold the clean stop before stopping anyway. */
    static final long CLEAN_STOP_TIMEOUT_MS = 10_000;

    public static void main(String[] args) throws Exception {
        OracleConfig config;
        try {
            OracleServerFlags.Parsed flags = OracleServerFlags.parse(args);
            if (flags.help()) {
                System.out.println(OracleServerFlags.usage());
                return;
            }
            config = configOf(flags);
        } catch (ParameterException | IllegalArgumentException | IOException e) {
            // The error alone, with a pointer to the list: printed above a hundred lines of usage it scrolls away.
            System.err.println("so-server: " + e.getMessage());
            System.err.println("so-server: " + OracleServerFlags.SEE_HELP);
            System.exit(2);
            return;
        }
        String heapProblem = heapProblem(config, Runtime.getRuntime().maxMemory());
        if (heapProblem != null) {
            // Before joining an election: a standby that cannot hold the state would win, fence the leader and die.
            System.err.println("so-server: " + heapProblem);
            System.exit(2);
            return;
        }
        System.out.println("so-server settings:");
        for (Map.Entry<String, String> e : config.describe().entrySet()) {
            System.out.println("  " + e.getKey() + " = " + e.getValue());
        }
        // Closed before the server: whatever would take the server's own shutdown for a fatal error (ZooKeeper watches).
        List<AutoCloseable> closeBeforeServer = new CopyOnWriteArrayList<>();
        List<AutoCloseable> closeAfterServer = new CopyOnWriteArrayList<>();
        OracleServer server;
        try {
            if (config.ha().enabled()) {
                server = standByThenLead(config, closeBeforeServer);
            } else if (config.journal() == OracleConfig.JournalKind.BOOKKEEPER) {
                String owner = JournalClients.ownerName();
                Serving serving = recoverAndServe(config, owner);
                server = serving.server();
                announce(config, server, serving.recovered().epoch(), owner, closeBeforeServer, closeAfterServer);
            } else {
                LOG.warn(IN_MEMORY_JOURNAL_WARNING);
                server = OracleServer.startInMemory(config);
            }
        } catch (Exception e) {
            LOG.error("so-server could not start", e);
            System.err.println("so-server: could not start: " + e + startFailureHint(config, e));
            System.exit(1);
            return;
        }
        server.onFatalError((reason, cause) -> {
            System.err.println("so-server: fatal: " + reason + "; exiting");
            System.exit(1);
        });
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            try {
                // Before leaving the election: a standby that fences the journal first would see a crash.
                server.stopCleanly(CLEAN_STOP_TIMEOUT_MS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            closeAll(closeBeforeServer);
            server.close();
            closeAll(closeAfterServer);
            stopped.countDown();
        }, "so-server-shutdown"));
        System.out.println("READY port=" + server.port());
        System.out.flush();
        stopped.await();
    }

    /**
     * What to do about the start failures a first run meets, which Netty reports without the address: the port is
     * taken, or the host does not resolve. Empty for the others, whose messages say it themselves.
     */
    static String startFailureHint(OracleConfig config, Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            String m = String.valueOf(t.getMessage());
            if (t instanceof BindException || m.contains("Address already in use")) {
                return "; another process listens on port " + config.port() + " of " + config.host()
                        + ": stop it, or give another --port (0 picks a free one)";
            }
            if (t instanceof UnresolvedAddressException) {
                return "; host '" + config.host() + "' does not resolve: give --host an address of this machine"
                        + " (0.0.0.0 listens on all of them)";
            }
            if (m.contains("Cannot assign requested address")) {
                return "; " + config.host() + " is not an address of this machine: fix --host (0.0.0.0 listens on"
                        + " all of them)";
            }
        }
        return "";
    }

    /**
     * Null if the oracle's tables fit in a heap of {@code maxHeapBytes} with room to spare (half of it, at least
     * 128 MB: Netty buffers, and the replayed journal during a recovery or a takeover), else what to change.
     */
    static String heapProblem(OracleConfig config, long maxHeapBytes) {
        long tables = OracleState.footprintBytes(config);
        long spare = Math.max(128L << 20, tables);
        if (tables + spare <= maxHeapBytes) {
            return null;
        }
        return String.format("the oracle's tables need %d MB of heap (conflict.table.rows=%d, recent.commits.capacity=%d,"
                        + " max.running.transactions=%d) plus %d MB to spare, but the JVM's heap is %d MB: raise -Xmx"
                        + " (SO_SERVER_JAVA_OPTS for bin/so-server) to at least %d MB, or lower those settings",
                tables >> 20, config.conflictTableRows(), config.recentCommitsCapacity(),
                config.maxRunningTransactions(), spare >> 20, maxHeapBytes >> 20, (tables + spare + (1 << 20) - 1) >> 20);
    }

    /**
     * {@code ha=true}: joins the election and stands by (tailing the journal) until first in line, then takes over.
     * Prints {@code STANDBY owner=...} once in the election. SIGTERM while standing by leaves the election.
     */
    private static OracleServer standByThenLead(OracleConfig config, List<AutoCloseable> closeBeforeServer)
            throws IOException, InterruptedException {
        OracleCandidate candidate = OracleCandidate.join(config, JournalClients.ownerName());
        closeBeforeServer.add(candidate);
        Thread leaveOnExit = new Thread(candidate::close, "so-server-leave-election");
        Runtime.getRuntime().addShutdownHook(leaveOnExit);
        System.out.println("STANDBY owner=" + candidate.owner());
        int metricsPort = candidate.showStandbyState();
        if (metricsPort != OracleConfig.METRICS_OFF) {
            System.out.println("STANDBY metrics.port=" + metricsPort);
        }
        System.out.flush();
        OracleServer server = candidate.lead();
        Runtime.getRuntime().removeShutdownHook(leaveOnExit);
        System.out.println(candidate.summary());
        return server;
    }

    /**
     * Announces a non-HA oracle in the leader znode with a ZooKeeper session of its own, closed after the server
     * (the znode goes with it; on a fatal error at once).
     */
    private static void announce(OracleConfig config, OracleServer server, long epoch, String owner,
                                 List<AutoCloseable> closeBeforeServer, List<AutoCloseable> closeAfterServer)
            throws Exception {
        JournalSettings js = config.journalSettings();
        ZooKeeper zk = JournalClients.connectZooKeeper(js);
        try {
            LeaderRecord record = new LeaderRecord(epoch, config.ha().hostToAdvertise(config.host()),
                    server.port(), owner);
            closeBeforeServer.add(LeaderAnnouncement.publish(zk, js.leaderZnode(), record, server,
                    ZnodeAcl.of(js)));
            closeAfterServer.add(zk::close);
        } catch (Exception e) {
            zk.close();
            server.close();
            throw e;
        }
    }

    private static void closeAll(List<AutoCloseable> resources) {
        for (AutoCloseable c : resources) {
            try {
                c.close();
            } catch (Exception e) {
                LOG.debug("closing {}: {}", c, e.toString());
            }
        }
    }

    /**
     * Recovers from the BookKeeper journal and starts an oracle that continues it. A fatal journal error before the
     * server exists ends the process at once; afterwards it goes through {@link OracleServer#fatalError}.
     */
    static OracleServer startOnBookKeeper(OracleConfig config) throws Exception {
        return recoverAndServe(config, JournalClients.ownerName()).server();
    }

    /** A started oracle and the journal state it continues. */
    record Serving(OracleServer server, RecoveredState recovered) {
    }

    /** As {@link #startOnBookKeeper(OracleConfig)}, naming this process {@code owner} in the registry. */
    static Serving recoverAndServe(OracleConfig config, String owner) throws Exception {
        FatalRelay relay = new FatalRelay();
        JournalBootstrap.Started started = JournalBootstrap.recoverAndOpen(config.journalSettings(), owner, relay,
                config.readerGraceMillis());
        RecoveredState r = started.recovered();
        String summary = describeRecovery(r);
        LOG.info("{}", summary);
        System.out.println(summary);
        OracleServer server;
        try {
            server = OracleServer.start(config, started.journal(), r.newOracleState(config));
        } catch (Exception | Error e) {
            started.journal().close();
            throw e;
        }
        relay.server = server;
        if (started.journal().isFailed()) {
            server.fatalError(started.journal().failure(), null); // failed while the server was starting
        }
        return new Serving(server, r);
    }

    static String describeRecovery(RecoveredState r) {
        RecoveredState.Stats s = r.stats();
        return "recovered journal: epoch " + r.epoch() + ", ledgers " + r.registry().ledgers() + ", last timestamp "
                + r.lastTimestamp() + ", T_max " + r.tMax() + ", " + r.commitCount() + " commits above T_max, "
                + r.aborted().length + " aborted, " + r.abortedRanges().size() + " aborted ranges of earlier"
                + " recoveries, in doubt now " + (r.inDoubtRange() == null ? "none" : r.inDoubtRange()) + "; read "
                + s.entries() + " entries (" + s.records() + " records, " + s.bytes() + " bytes) in " + s.millis()
                + " ms";
    }

    /** The journal's fatal-error listener: the server's fatal path once it exists, exit before that. */
    private static final class FatalRelay implements FatalErrorListener {
        volatile OracleServer server;

        @Override
        public void onFatalError(String reason, Throwable cause) {
            OracleServer s = server;
            if (s != null) {
                s.fatalError(reason, cause);
                return;
            }
            LOG.error("journal failed while the oracle was starting: {}", reason, cause);
            System.err.println("so-server: fatal: " + reason + "; exiting");
            System.exit(1);
        }
    }

    /** The settings {@code args} give (see {@link OracleServerFlags}); for the usage, {@link OracleServerFlags}. */
    static OracleConfig parse(String... args) throws IOException {
        return configOf(OracleServerFlags.parse(args));
    }

    /**
     * The oracle's settings from the flags and the {@code --config} files (the flags win, then the first file), with
     * the files they name read now: a mistake is refused at start, naming its setting, not later.
     */
    private static OracleConfig configOf(OracleServerFlags.Parsed flags) throws IOException {
        Properties p = new Properties();
        p.putAll(flags.flags());
        for (Path file : flags.configFiles()) {
            Properties fromFile = new Properties();
            try (Reader r = Files.newBufferedReader(file)) {
                fromFile.load(r);
            } catch (IOException e) {
                // The bare exception message is only the path (NoSuchFileException): say what failed.
                throw new IOException("cannot read the --config file " + file + ": " + e, e);
            }
            fromFile.forEach(p::putIfAbsent);
        }
        OracleConfig config = OracleConfig.fromProperties(p);
        if (!config.adminSecretFile().isEmpty()) {
            SecretProof.readSecret(Path.of(config.adminSecretFile()), "admin.secret.file"); // refused now, not later
        }
        if (!config.clientSecretFile().isEmpty()) {
            SecretProof.readSecret(Path.of(config.clientSecretFile()), "client.secret.file");
        }
        if (config.tls().enabled()) {
            config.tls().serverContext(); // an unreadable store is refused now, naming its setting
        }
        return config;
    }
}
