package io.sibyl.client;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.MeterBinder;
import io.micrometer.core.instrument.composite.CompositeMeterRegistry;
import io.sibyl.client.oracle.CommitReplica;
import io.sibyl.client.oracle.OracleClient;

import java.time.Duration;
import java.util.EnumMap;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The meters of one {@link TransactionManager}, recorded into the application's own Micrometer registries once
 * bound with {@link #bindTo} ({@code tm.metrics().bindTo(registry)}); until then nothing is recorded (Micrometer's
 * composite registry without members records nothing). docs/operations.md (Metrics) lists them with their units.
 */
public final class ClientMetrics implements MeterBinder {
    /** Timer, seconds: from asking the oracle for a start timestamp to having it (begin, and each attempt of run). */
    public static final String BEGIN = "sibyl.client.begin";
    /**
     * Timer, seconds: {@link TransactionManager#commit}, writes flushed to HBase and the oracle's decision included,
     * by {@code outcome}: {@code committed}, {@code rolled_back} or {@code unknown} (connection lost in flight).
     */
    public static final String COMMIT = "sibyl.client.commit";
    /** Counter, transactions: commits that ended in a rollback, by {@code reason} ({@link RollbackException.Reason}). */
    public static final String ROLLBACKS = "sibyl.client.rollbacks";
    /** Gauge, transactions: commits held by the client's replica of the oracle's metadata. */
    public static final String REPLICA_COMMITS = "sibyl.client.replica.commits";
    /** Gauge, transactions: aborted transactions held by the client's replica. */
    public static final String REPLICA_ABORTED = "sibyl.client.replica.aborted";

    /** Buckets for a Prometheus histogram: from a fast local round trip to a failover's wait. */
    private static final Duration[] LATENCY_BUCKETS = {Duration.ofNanos(50_000), Duration.ofNanos(100_000),
            Duration.ofNanos(250_000), Duration.ofNanos(500_000), Duration.ofMillis(1), Duration.ofMillis(2),
            Duration.ofMillis(5), Duration.ofMillis(10), Duration.ofMillis(25), Duration.ofMillis(50),
            Duration.ofMillis(100), Duration.ofMillis(250), Duration.ofMillis(500), Duration.ofSeconds(1),
            Duration.ofSeconds(5), Duration.ofSeconds(30)};

    /** A commit, as {@link CommitProtocol} runs it: throws the rollback it ended in. */
    interface CommitCall {
        /** Runs the commit. */
        void run() throws RollbackException;
    }

    /** The user's registries; meters registered here reach each one added later. */
    private final CompositeMeterRegistry registries = new CompositeMeterRegistry();
    private final Supplier<OracleClient> oracle;
    private final Timer begin;
    private final Timer committed;
    private final Timer rolledBack;
    private final Timer unknown;
    private final Map<RollbackException.Reason, Counter> rollbacks = new EnumMap<>(RollbackException.Reason.class);

    /** {@code oracle} gives the manager's latest oracle client (open or not), whose replica the gauges read. */
    ClientMetrics(Supplier<OracleClient> oracle) {
        this.oracle = oracle;
        begin = timer(BEGIN, "time to get a start timestamp").register(registries);
        committed = timer(COMMIT, "commit, by outcome").tag("outcome", "committed").register(registries);
        rolledBack = timer(COMMIT, "commit, by outcome").tag("outcome", "rolled_back").register(registries);
        unknown = timer(COMMIT, "commit, by outcome").tag("outcome", "unknown").register(registries);
        for (RollbackException.Reason reason : RollbackException.Reason.values()) {
            rollbacks.put(reason, Counter.builder(ROLLBACKS).description("commits rolled back, by reason")
                    .tag("reason", reason.name().toLowerCase(Locale.ROOT)).register(registries));
        }
        Gauge.builder(REPLICA_COMMITS, this, m -> m.replicaSize(false))
                .description("commits in the client's replica").register(registries);
        Gauge.builder(REPLICA_ABORTED, this, m -> m.replicaSize(true))
                .description("aborted transactions in the client's replica").register(registries);
    }

    private static Timer.Builder timer(String name, String description) {
        return Timer.builder(name).description(description).serviceLevelObjectives(LATENCY_BUCKETS);
    }

    /** Records this manager's meters into {@code registry} too (any number of registries may be bound). */
    @Override
    public void bindTo(MeterRegistry registry) {
        registries.add(registry);
    }

    private double replicaSize(boolean aborted) {
        OracleClient client = oracle.get();
        CommitReplica replica = client == null ? null : client.replica();
        if (replica == null) {
            return Double.NaN; // not connected yet: unknown, not empty
        }
        return aborted ? replica.abortedCount() : replica.commitCount();
    }

    /** A begin that started at {@code startedNanos} has its timestamp. */
    void begun(long startedNanos) {
        begin.record(System.nanoTime() - startedNanos, TimeUnit.NANOSECONDS);
    }

    /** Runs {@code commit}, timing it by outcome and counting the rollback it may end in. */
    void timeCommit(CommitCall commit) throws RollbackException {
        long started = System.nanoTime();
        try {
            commit.run();
            committed.record(System.nanoTime() - started, TimeUnit.NANOSECONDS);
        } catch (RollbackException e) {
            rolledBack.record(System.nanoTime() - started, TimeUnit.NANOSECONDS);
            rollbacks.get(e.getReason()).increment();
            throw e;
        } catch (CommitOutcomeUnknownException e) {
            unknown.record(System.nanoTime() - started, TimeUnit.NANOSECONDS);
            throw e;
        }
    }
}
