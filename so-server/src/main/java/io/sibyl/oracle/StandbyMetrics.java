package io.sibyl.oracle;

import io.micrometer.core.instrument.FunctionCounter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.TimeGauge;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;

import javax.management.ObjectName;
import java.io.IOException;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import java.util.function.LongSupplier;

/**
 * What a hot standby shows while it stands by: its role, its replication lag and the journal entries it replayed, as
 * Prometheus metrics on {@code metrics.http.port} and as the MXBean {@link StandbyStatsMXBean}. Before, a standby
 * showed nothing, so its lag was invisible until a takeover read a long tail. Closed before the takeover, which
 * binds the same port for the leader's metrics.
 */
public final class StandbyMetrics implements StandbyStatsMXBean, AutoCloseable {
    /** Gauge, role: 1 on an oracle that serves (leader or single oracle), 0 on a hot standby. */
    public static final String ROLE = "sibyl.oracle.role";
    /** Time gauge, seconds: since the standby last held every entry the leader's journal had made durable. */
    public static final String LAG = "sibyl.standby.lag";
    /** Counter, entries: journal entries the standby replayed. */
    public static final String ENTRIES = "sibyl.standby.entries.replayed";
    /** Gauge, position: 0 for the first standby in line (the next leader), 1 for the one after it, ... */
    public static final String POSITION = "sibyl.standby.position";

    private final LongSupplier lagMillis;
    private final LongSupplier entries;
    private final IntSupplier position;
    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final MetricsEndpoint endpoint;
    private final ObjectName jmxName;

    private StandbyMetrics(OracleConfig config, LongSupplier lagMillis, LongSupplier entries, IntSupplier position)
            throws IOException {
        this.lagMillis = lagMillis;
        this.entries = entries;
        this.position = position;
        Gauge.builder(ROLE, () -> 0).description("1 serving, 0 hot standby").register(registry);
        // NaN until the standby first caught up: 0 would claim a standby that is still replaying is current.
        TimeGauge.builder(LAG, this, TimeUnit.MILLISECONDS,
                        m -> m.getLagMillis() < 0 ? Double.NaN : m.getLagMillis())
                .description("since the standby last held every durable journal entry").register(registry);
        FunctionCounter.builder(ENTRIES, this, StandbyMetrics::getEntriesReplayed)
                .description("journal entries replayed while standing by").register(registry);
        Gauge.builder(POSITION, this, StandbyMetrics::getPositionInLine)
                .description("place in line: 0 takes over next").register(registry);
        endpoint = MetricsEndpoint.ofSetting(config, registry::scrape);
        if (endpoint != null) {
            endpoint.start();
        }
        jmxName = OracleStatsMBean.register(this,
                OracleStatsMBean.objectName("io.sibyl:type=StatusOracleStandby,port=" + config.port()));
    }

    /**
     * Serves a standby's figures: {@code lagMillis} and {@code entries} as {@code JournalTailer} reports them,
     * {@code position} its place in line among the standbys (-1 unknown).
     *
     * @throws IOException naming {@code metrics.http.port} when that port cannot be bound
     */
    public static StandbyMetrics start(OracleConfig config, LongSupplier lagMillis, LongSupplier entries,
                                       IntSupplier position) throws IOException {
        return new StandbyMetrics(config, lagMillis, entries, position);
    }

    /** The port the metrics are served on, or {@link OracleConfig#METRICS_OFF}. */
    public int metricsPort() {
        return endpoint == null ? OracleConfig.METRICS_OFF : endpoint.port();
    }

    /** The registry, for tests. */
    public PrometheusMeterRegistry registry() {
        return registry;
    }

    @Override
    public String getRole() {
        return "standby";
    }

    @Override
    public long getLagMillis() {
        return lagMillis.getAsLong();
    }

    @Override
    public long getEntriesReplayed() {
        return entries.getAsLong();
    }

    @Override
    public int getPositionInLine() {
        return position.getAsInt();
    }

    @Override
    public void close() {
        if (endpoint != null) {
            endpoint.close();
        }
        OracleStatsMBean.unregister(jmxName);
        registry.close();
    }
}
