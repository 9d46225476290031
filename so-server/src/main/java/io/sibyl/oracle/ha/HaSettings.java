package io.sibyl.oracle.ha;

import java.io.IOException;
import java.net.InetAddress;

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

    public static HaSettings defaults() {
        return new HaSettings(false, "", 5);
    }

    public HaSettings {
        if (advertisedHost == null || advertisedHost.trim().contains(" ") || advertisedHost.contains("/")) {
            throw new IllegalArgumentException("invalid value '" + advertisedHost + "' for advertised.host (a host"
                    + " name or address, no port); see docs/operations.md");
        }
        if (tailIntervalMs < 1 || tailIntervalMs > 10_000) {
            throw new IllegalArgumentException("invalid value " + tailIntervalMs + " for ha.tail.interval.ms (1 to"
                    + " 10000); see docs/operations.md");
        }
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
