package io.sibyl.oracle;

import io.sibyl.protocol.HostedRangeSweep;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * The background sweep of aborted ranges ({@code range.sweep.tables}). It runs in the oracle that serves, because that
 * one knows the moment a failover leaves a range, holds the admin role's authority and is where operators look (its
 * status and metrics); the sweep itself is the client's {@code AbortSweeper}, found on the class path (docs/gc.md,
 * "Aborted ranges swept by the leader").
 */
final class BackgroundRangeSweep {
    private static final Logger LOG = LoggerFactory.getLogger(BackgroundRangeSweep.class);

    /** What the sweep reports; its phase stays off when it does not run. */
    private final RangeSweepStatus status = new RangeSweepStatus();
    /** Stops the sweep, or null when none runs. */
    private volatile AutoCloseable task;

    /** Starts the sweep against the oracle on {@code port} when {@code config} asks for it. */
    void start(OracleConfig config, int port) {
        RangeSweepSettings s = config.rangeSweep();
        if (!s.enabled()) {
            return;
        }
        HostedRangeSweep sweep = HostedRangeSweep.find();
        if (sweep == null) {
            throw new IllegalStateException("range.sweep.tables is set, but the sweeper (the Sibyl client) is not on"
                    + " the oracle's class path: run the binary distribution's bin/so-server, whose lib/ holds it, or"
                    + " leave range.sweep.tables empty and run bin/sibyl-sweep after failovers");
        }
        try {
            task = sweep.start(new HostedRangeSweep.Settings(config.ha().hostToAdvertise(config.host()), port,
                    config.adminSecretFile(), s.tableSet(), s.excludedSet(), s.settleMillis(), s.intervalMillis(),
                    s.hbaseSite()), status);
        } catch (Exception e) {
            throw new IllegalStateException("the background sweep of aborted ranges could not start: "
                    + e.getMessage(), e);
        }
    }

    /** Stops the sweep if one runs. */
    void stop() {
        AutoCloseable running = task;
        task = null;
        if (running != null) {
            try {
                running.close();
            } catch (Exception e) {
                LOG.debug("stopping the range sweep: {}", e.toString());
            }
        }
    }

    /** What the sweep reported (its phase is off when it does not run). */
    RangeSweepStatus status() {
        return status;
    }
}
