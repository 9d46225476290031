package io.sibyl.oracle.ha;

import io.sibyl.oracle.OracleSettings;

import java.io.IOException;
import java.net.InetAddress;
import java.util.Properties;

import static io.sibyl.oracle.OracleSettings.ADVERTISED_HOST;
import static io.sibyl.oracle.OracleSettings.HA;
import static io.sibyl.oracle.OracleSettings.HA_TAIL_INTERVAL_MS;

/**
 * High-availability settings of one oracle process ({@code ha}, {@code advertised.host}, {@code ha.tail.interval.ms};
 * the znodes are {@code journal.leader.znode} and {@code journal.election.znode}). Listed in docs/operations.md.
 *
 * @param enabled        join the leader election and stand by (tailing the journal) until elected
 * @param advertisedHost host name clients are told in the leader znode; empty means the bind host, or this machine's
 *                       name when binding every interface
 * @param tailIntervalMs how often a standby asks the bookies for new journal entries when it found none
 */
public record HaSettings(boolean enabled, String advertisedHost, long tailIntervalMs) {

    /** Not in the election ({@link OracleSettings}' defaults). */
    public static HaSettings defaults() {
        return fromProperties(new Properties());
    }

    /** The settings {@code p} gives, defaults for the keys it lacks. */
    public static HaSettings fromProperties(Properties p) {
        return new HaSettings(HA.read(p), ADVERTISED_HOST.read(p), HA_TAIL_INTERVAL_MS.read(p));
    }

    public HaSettings {
        if (advertisedHost == null || advertisedHost.trim().contains(" ") || advertisedHost.contains("/")) {
            throw new IllegalArgumentException("invalid value '" + advertisedHost + "' for advertised.host (a host"
                    + " name or address, no port); see docs/operations.md");
        }
        HA_TAIL_INTERVAL_MS.require(tailIntervalMs);
        advertisedHost = advertisedHost.trim();
    }

    /** The host to put in the leader znode for an oracle bound to {@code bindHost}. */
    public String hostToAdvertise(String bindHost) {
        if (!advertisedHost.isEmpty()) {
            return advertisedHost;
        }
        if (!bindHost.equals("0.0.0.0") && !bindHost.equals("::") && !bindHost.isBlank()) {
            return bindHost;
        }
        try {
            return InetAddress.getLocalHost().getCanonicalHostName();
        } catch (IOException e) {
            throw new IllegalStateException("cannot tell this machine's host name to advertise; set advertised.host",
                    e);
        }
    }
}
