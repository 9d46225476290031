package io.sibyl.oracle;

import io.micrometer.core.instrument.DistributionSummary;
import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Measurement;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.Tags;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.binder.jvm.JvmGcMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmMemoryMetrics;
import io.micrometer.core.instrument.binder.jvm.JvmThreadMetrics;
import io.micrometer.core.instrument.binder.system.ProcessorMetrics;
import io.micrometer.core.instrument.binder.system.UptimeMetrics;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import io.sibyl.protocol.Wire;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import java.util.function.Supplier;
import java.util.function.ToDoubleFunction;

/**
 * The status oracle's meters, in a Micrometer registry that {@link MetricsEndpoint} serves in Prometheus' text format
 * ({@code metrics.http.port}) and the JMX bean {@code io.sibyl:type=StatusOracle} reads. Each name below says its
 * unit and meaning; docs/operations.md (Metrics) lists them with the names Prometheus shows.
 *
 * <p>The sequencer decides a transaction in about two microseconds on one thread, so nothing here adds a lock, an
 * atomic or a clock read per request to it: the counts it keeps anyway (in {@link OracleState} and in plain fields of
 * the {@link Sequencer}) are copied on its own thread when a scrape asks, at most every {@link #FRESH_NANOS}, and
 * latencies and block sizes are recorded once per block, mostly on the journal's callback thread.
 */
public final class OracleMetrics implements AutoCloseable {
    private static final Logger LOG = LoggerFactory.getLogger(OracleMetrics.class);
    /** A scrape or a JMX console reading every figure asks the sequencer once, not once per figure. */
    static final long FRESH_NANOS = 250_000_000L;
    /** Sentinel for "no such request in this block" in the per-block timings. */
    static final long NONE = Long.MIN_VALUE;

    /** Counter, requests: requests decided, by {@code type} (the wire message, or {@code handshake}). */
    public static final String REQUESTS = "sibyl.oracle.requests";
    /** Counter, transactions: start timestamps handed out (BEGINs not refused). */
    public static final String BEGINS = "sibyl.oracle.begins";
    /** Counter, requests: BEGINs refused (max.running.transactions, the per-connection quota, the aborted set). */
    public static final String BEGINS_REFUSED = "sibyl.oracle.begins.refused";
    /** Counter, transactions: transactions with writes committed (read-only ones commit at their clients). */
    public static final String COMMITS = "sibyl.oracle.commits";
    /**
     * Counter, transactions: transactions aborted, by {@code reason}: {@code conflict} (write-write, or a read
     * conflict of a serializable transaction), {@code too_old} (T_max passed its start, or a clean stop),
     * {@code disconnect} (its connection was lost), {@code expired} (transaction.max.age.ms) and {@code requested}
     * (its client's or the admin's ABORT, a write set over max.write.set.rows).
     */
    public static final String ABORTS = "sibyl.oracle.aborts";
    /**
     * Timer, seconds: from the sequencer deciding the first BEGIN of a block to the release of that block's replies
     * (the longest any BEGIN of the block waited inside the oracle); one sample per block holding a BEGIN.
     */
    public static final String BEGIN_LATENCY = "sibyl.oracle.begin.latency";
    /** Timer, seconds: as {@link #BEGIN_LATENCY}, for the first COMMIT or COMMIT_CERTIFIED of a block. */
    public static final String COMMIT_LATENCY = "sibyl.oracle.commit.latency";
    /** Timer, seconds: from sealing a block of decisions to the journal holding it durably; one sample per block. */
    public static final String JOURNAL_APPEND = "sibyl.oracle.journal.append";
    /**
     * Timer, seconds: from a block being durable (or sealed, when it needed no write) to its replies leaving; above
     * zero only while the leader's lease was in doubt and replies were held (docs/operations.md, high availability).
     */
    public static final String REPLY_HOLD = "sibyl.oracle.reply.hold";
    /** Distribution, requests: requests decided per sealed block (at most max.block.records). */
    public static final String BLOCK_REQUESTS = "sibyl.oracle.block.requests";
    /** Distribution, bytes: size of each block of decisions written to the journal. */
    public static final String BLOCK_BYTES = "sibyl.oracle.block.bytes";
    /** Counter, blocks: blocks of decisions the journal accepted. */
    public static final String JOURNAL_BLOCKS = "sibyl.oracle.journal.blocks";
    /** Gauge, timestamp: the last timestamp handed out. */
    public static final String TIMESTAMP_LAST = "sibyl.oracle.timestamp.last";
    /** Gauge, timestamp: T_max; below it a writer that is not aborted counts as committed. */
    public static final String TMAX = "sibyl.oracle.tmax";
    /** Gauge, timestamps: the last timestamp less T_max (how much of the history still needs the commit window). */
    public static final String TMAX_LAG = "sibyl.oracle.tmax.lag";
    /** Gauge, timestamp: the low watermark, the oldest snapshot still readable (the garbage collector keeps it). */
    public static final String LOW_WATERMARK = "sibyl.oracle.low.watermark";
    /** Gauge, timestamps: the last timestamp less the low watermark (how far back garbage collection is held). */
    public static final String LOW_WATERMARK_LAG = "sibyl.oracle.low.watermark.lag";
    /** Gauge, transactions: transactions begun and not yet finished. */
    public static final String RUNNING = "sibyl.oracle.transactions.running";
    /** Gauge, transactions: aborted transactions remembered until their clean-up (sent in every HELLO). */
    public static final String ABORTED = "sibyl.oracle.transactions.aborted";
    /** Gauge, ranges: ranges of transactions in doubt at earlier oracles' crashes, kept as aborted until swept. */
    public static final String ABORTED_RANGES = "sibyl.oracle.aborted.ranges";
    /** Gauge, transactions: commits remembered above T_max (recent.commits.capacity bounds it). */
    public static final String RECENT_COMMITS = "sibyl.oracle.commits.recent";
    /** Gauge, connections: open connections (clients, garbage collectors, sweepers, standbys' watches). */
    public static final String CONNECTIONS = "sibyl.oracle.connections";
    /** Counter, connections: connections accepted since this oracle started. */
    public static final String CONNECTIONS_ACCEPTED = "sibyl.oracle.connections.accepted";
    /** Counter, connections: connections refused because max.connections were open. */
    public static final String CONNECTIONS_REFUSED = "sibyl.oracle.connections.refused";
    /**
     * Counter, bytes: replicated commit metadata (DELTA) sent to clients, by {@code via}: {@code reply}
     * (piggybacked on replies) or {@code push} (sent to a connection silent for push.interval.ms).
     */
    public static final String DELTA_BYTES = "sibyl.oracle.delta.bytes";

    /**
     * Gauge, phase: what the leader's background sweep of aborted ranges is doing: -1 off (range.sweep.tables
     * empty), 0 idle, 1 waiting for the low watermark to pass a range, 2 settling, 3 scanning, 4 the last attempt
     * failed ({@code HostedRangeSweep.Phase}).
     */
    public static final String RANGE_SWEEP_PHASE = "sibyl.oracle.range.sweep.phase";
    /** Counter, ranges: aborted ranges the background sweep reported cleaned up. */
    public static final String RANGE_SWEEP_RANGES = "sibyl.oracle.range.sweep.ranges";
    /** Counter, versions: versions of in-doubt transactions the background sweep deleted. */
    public static final String RANGE_SWEEP_VERSIONS = "sibyl.oracle.range.sweep.versions.deleted";
    /** Counter, attempts: background sweeps that failed (logged; tried again after range.sweep.interval.ms). */
    public static final String RANGE_SWEEP_FAILURES = "sibyl.oracle.range.sweep.failures";

    /** Wire request types by their code, as the {@code type} tag of {@link #REQUESTS} names them. */
    /** Slots of the per-type request counts: one past the highest request type the oracle accepts. */
    static final int REQUEST_TYPE_SLOTS = Wire.HISTORY_QUERY + 1;
    private static final String[] REQUEST_TYPES = new String[REQUEST_TYPE_SLOTS];

    static {
        REQUEST_TYPES[Wire.BEGIN] = "begin";
        REQUEST_TYPES[Wire.COMMIT] = "commit";
        REQUEST_TYPES[Wire.ABORT] = "abort";
        REQUEST_TYPES[Wire.CLEANED_UP] = "cleaned_up";
        REQUEST_TYPES[Wire.QUERY] = "query";
        REQUEST_TYPES[Wire.FINISH] = "finish";
        REQUEST_TYPES[Wire.WATERMARK_QUERY] = "watermark_query";
        REQUEST_TYPES[Wire.RANGE_CLEANED_UP] = "range_cleaned_up";
        REQUEST_TYPES[Wire.AUTHENTICATE] = "authenticate";
        REQUEST_TYPES[Wire.COMMIT_CERTIFIED] = "commit_certified";
        REQUEST_TYPES[Wire.ORACLE_STATUS_QUERY] = "oracle_status_query";
        REQUEST_TYPES[Wire.RUNNING_QUERY] = "running_query";
        REQUEST_TYPES[Wire.TICKET] = "ticket";
        REQUEST_TYPES[Wire.HISTORY_QUERY] = "history_query";
    }

    /** Latency buckets: from the microseconds of an in-memory journal to the seconds of a held lease. */
    private static final Duration[] LATENCY_BUCKETS = durations(TimeUnit.MICROSECONDS, 10, 25, 50, 100, 250, 500,
            1_000, 2_500, 5_000, 10_000, 25_000, 50_000, 100_000, 250_000, 500_000, 1_000_000, 2_500_000, 10_000_000);

    /**
     * What the sequencer's thread copies for a scrape: the state's counters and sizes with the server's connections
     * ({@code stats}), requests decided by wire type ({@code requests}, indexed by type code) and handshakes.
     */
    record Snapshot(OracleStats stats, long[] requests, long handshakes) {
    }

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final Supplier<Snapshot> source;
    private final JvmGcMetrics gcMetrics = new JvmGcMetrics();
    /** Metadata bytes piggybacked on replies; added by the connections' event loops. */
    final LongAdder deltaBytesWithReplies = new LongAdder();
    /** Metadata bytes pushed to silent connections; added by the connections' event loops. */
    final LongAdder deltaBytesPushed = new LongAdder();
    private final Timer beginLatency;
    private final Timer commitLatency;
    private final Timer journalAppend;
    private final Timer replyHold;
    private final DistributionSummary blockRequests;
    private final DistributionSummary blockBytes;
    private Snapshot cached; // guarded by this
    private long cachedAtNanos;

    /**
     * {@code source} reads a {@link Snapshot} on the thread that owns the state; {@code server} gives the figures
     * that any thread may read (connections).
     */
    OracleMetrics(Supplier<Snapshot> source, OracleServer server) {
        this.source = source;
        for (int type = 0; type < REQUEST_TYPES.length; type++) {
            if (REQUEST_TYPES[type] != null) {
                int code = type;
                counter(REQUESTS, "requests decided, by wire message", m -> m.current().requests()[code],
                        "type", REQUEST_TYPES[type]);
            }
        }
        counter(REQUESTS, "requests decided, by wire message", m -> m.current().handshakes(), "type", "handshake");
        counter(BEGINS, "start timestamps handed out", m -> m.stats().begins());
        counter(BEGINS_REFUSED, "BEGINs refused at a limit", m -> m.stats().refusedBegins());
        counter(COMMITS, "transactions with writes committed", m -> m.stats().commits());
        counter(ABORTS, "transactions aborted, by reason", m -> m.stats().conflictAborts(), "reason", "conflict");
        counter(ABORTS, "transactions aborted, by reason", m -> m.stats().tooOldAborts(), "reason", "too_old");
        counter(ABORTS, "transactions aborted, by reason", m -> m.stats().disconnectAborts(), "reason", "disconnect");
        counter(ABORTS, "transactions aborted, by reason", m -> m.stats().expiredAborts(), "reason", "expired");
        counter(ABORTS, "transactions aborted, by reason", m -> requestedAborts(m.stats()), "reason", "requested");
        counter(JOURNAL_BLOCKS, "blocks of decisions the journal accepted", m -> m.stats().journalBlocks());
        gauge(TIMESTAMP_LAST, "last timestamp handed out", m -> m.stats().lastTimestamp());
        gauge(TMAX, "T_max", m -> m.stats().tMax());
        gauge(TMAX_LAG, "last timestamp less T_max", m -> m.stats().lastTimestamp() - m.stats().tMax());
        gauge(LOW_WATERMARK, "oldest snapshot still readable", m -> m.stats().lowWatermark());
        gauge(LOW_WATERMARK_LAG, "last timestamp less the low watermark",
                m -> Math.max(0, m.stats().lastTimestamp() - m.stats().lowWatermark()));
        gauge(RUNNING, "transactions begun and not finished", m -> m.stats().running());
        gauge(ABORTED, "aborted transactions awaiting clean-up", m -> m.stats().abortedSet());
        gauge(ABORTED_RANGES, "in-doubt ranges kept as aborted", m -> m.stats().abortedRanges());
        gauge(RECENT_COMMITS, "commits remembered above T_max", m -> m.stats().recentCommits());
        Gauge.builder(CONNECTIONS, server, OracleServer::connections).description("open connections")
                .register(registry);
        FunctionCounter.builder(CONNECTIONS_ACCEPTED, server, OracleServer::acceptedConnections)
                .description("connections accepted").register(registry);
        FunctionCounter.builder(CONNECTIONS_REFUSED, server, OracleServer::refusedConnections)
                .description("connections refused at max.connections").register(registry);
        Gauge.builder(StandbyMetrics.ROLE, () -> 1).description("1 serving, 0 hot standby").register(registry);
        RangeSweepStatus sweep = server.rangeSweep();
        Gauge.builder(RANGE_SWEEP_PHASE, sweep, RangeSweepStatus::phase)
                .description("background range sweep: -1 off, 0 idle, 1 waiting, 2 settling, 3 scanning, 4 failed")
                .register(registry);
        FunctionCounter.builder(RANGE_SWEEP_RANGES, sweep, RangeSweepStatus::rangesSwept)
                .description("aborted ranges swept in the background").baseUnit("ranges").register(registry);
        FunctionCounter.builder(RANGE_SWEEP_VERSIONS, sweep, RangeSweepStatus::versionsDeleted)
                .description("in-doubt versions the background sweep deleted").register(registry);
        FunctionCounter.builder(RANGE_SWEEP_FAILURES, sweep, RangeSweepStatus::failures)
                .description("background range sweeps that failed").register(registry);
        FunctionCounter.builder(DELTA_BYTES, deltaBytesWithReplies, LongAdder::sum).tag("via", "reply")
                .description("commit metadata sent to clients").baseUnit("bytes").register(registry);
        FunctionCounter.builder(DELTA_BYTES, deltaBytesPushed, LongAdder::sum).tag("via", "push")
                .description("commit metadata sent to clients").baseUnit("bytes").register(registry);
        beginLatency = timer(BEGIN_LATENCY, "wait of a block's first BEGIN inside the oracle");
        commitLatency = timer(COMMIT_LATENCY, "wait of a block's first COMMIT inside the oracle");
        journalAppend = timer(JOURNAL_APPEND, "from sealing a block to the journal holding it");
        replyHold = timer(REPLY_HOLD, "from a block being durable to its replies leaving");
        blockRequests = DistributionSummary.builder(BLOCK_REQUESTS).description("requests per block")
                .baseUnit("requests").serviceLevelObjectives(1, 4, 16, 64, 256, 1024, 4096, 16384)
                .register(registry);
        blockBytes = DistributionSummary.builder(BLOCK_BYTES).description("bytes per journaled block")
                .baseUnit("bytes").serviceLevelObjectives(64, 256, 1024, 4096, 16384, 65536, 262144, 1048576)
                .register(registry);
        new JvmMemoryMetrics().bindTo(registry);
        new JvmThreadMetrics().bindTo(registry);
        gcMetrics.bindTo(registry);
        new ProcessorMetrics().bindTo(registry);
        new UptimeMetrics().bindTo(registry);
    }

    /** Aborts no other reason accounts for: the clients' and the admin's ABORTs, oversized write sets. */
    private static long requestedAborts(OracleStats s) {
        return Math.max(0, s.aborts() - s.conflictAborts() - s.tooOldAborts() - s.disconnectAborts()
                - s.expiredAborts());
    }

    private static Duration[] durations(TimeUnit unit, long... amounts) {
        Duration[] d = new Duration[amounts.length];
        for (int i = 0; i < amounts.length; i++) {
            d[i] = Duration.ofNanos(unit.toNanos(amounts[i]));
        }
        return d;
    }

    private void counter(String name, String description, ToDoubleFunction<OracleMetrics> count, String... tags) {
        FunctionCounter.builder(name, this, count).description(description).tags(tags).register(registry);
    }

    private void gauge(String name, String description, ToDoubleFunction<OracleMetrics> value) {
        Gauge.builder(name, this, value).description(description).register(registry);
    }

    private Timer timer(String name, String description) {
        return Timer.builder(name).description(description).serviceLevelObjectives(LATENCY_BUCKETS)
                .register(registry);
    }

    /** The registry, for embedding applications and tests; {@link MetricsEndpoint} serves its scrape. */
    public PrometheusMeterRegistry registry() {
        return registry;
    }

    /** The figures in Prometheus' text format (version 0.0.4). */
    String scrape() {
        return registry.scrape();
    }

    private OracleStats stats() {
        return current().stats();
    }

    /**
     * The latest snapshot, read again from the sequencer when older than {@link #FRESH_NANOS}. If the sequencer does
     * not answer (a stopped or stuck oracle) the previous one stays, so a scrape still shows where it stopped.
     */
    synchronized Snapshot current() {
        long now = System.nanoTime();
        if (cached == null || now - cachedAtNanos > FRESH_NANOS) {
            try {
                cached = source.get();
            } catch (IllegalStateException e) {
                if (cached == null) {
                    throw e;
                }
                LOG.debug("metrics keep the previous figures: {}", e.getMessage());
            }
            cachedAtNanos = now;
        }
        return cached;
    }

    /**
     * The value of the meter {@code name} with {@code tags} (a counter's count, a gauge's value), as a scrape would
     * show it; for the JMX bean, whose figures are these meters'.
     */
    double value(String name, String... tags) {
        Meter meter = registry.get(name).tags(Tags.of(tags)).meter();
        for (Measurement m : meter.measure()) {
            return m.getValue();
        }
        return Double.NaN;
    }

    /** The sum of every meter named {@code name} (a counter's series over all its tags), as the JMX bean shows it. */
    double sum(String name) {
        double total = 0;
        for (Meter meter : registry.get(name).meters()) {
            for (Measurement m : meter.measure()) {
                total += m.getValue();
                break;
            }
        }
        return total;
    }

    /**
     * Journal callback of a sealed block: {@code requests} decided in it, {@code bytes} journaled (0 for a block
     * with no record, which is not written), sealed at {@code sealedNanos} and durable at {@code durableNanos}.
     */
    void blockDurable(int requests, int bytes, long sealedNanos, long durableNanos) {
        if (requests > 0) {
            blockRequests.record(requests);
        }
        if (bytes > 0) {
            blockBytes.record(bytes);
            journalAppend.record(durableNanos - sealedNanos, TimeUnit.NANOSECONDS);
        }
    }

    /**
     * A block's replies leave at {@code releasedNanos}; it was durable at {@code durableNanos}, and its first BEGIN
     * and COMMIT were decided at {@code firstBeginNanos} and {@code firstCommitNanos} ({@link #NONE}: none).
     */
    void repliesReleased(long durableNanos, long releasedNanos, long firstBeginNanos, long firstCommitNanos) {
        replyHold.record(releasedNanos - durableNanos, TimeUnit.NANOSECONDS);
        if (firstBeginNanos != NONE) {
            beginLatency.record(releasedNanos - firstBeginNanos, TimeUnit.NANOSECONDS);
        }
        if (firstCommitNanos != NONE) {
            commitLatency.record(releasedNanos - firstCommitNanos, TimeUnit.NANOSECONDS);
        }
    }

    @Override
    public void close() {
        gcMetrics.close();
        registry.close();
    }
}
