package io.sibyl.client.oracle;

import io.sibyl.protocol.LeaderRecord;

import java.util.function.Consumer;

/**
 * An oracle at one configured address. After a connection loss the client reconnects to the same address, which
 * suits a single oracle restarted in place (by a supervisor) on the BookKeeper journal.
 */
public final class FixedOracleAddress implements OracleLocator {
    private final LeaderRecord oracle;

    public FixedOracleAddress(String host, int port) {
        if (host == null || host.isBlank() || port < 1 || port > 65535) {
            throw new IllegalArgumentException("the status oracle's address needs a host and a port from 1 to 65535,"
                    + " got " + host + ":" + port);
        }
        this.oracle = new LeaderRecord(0, host, port, "configured");
    }

    @Override
    public LeaderRecord leader(long waitMillis) {
        return oracle;
    }

    @Override
    public void onLeaderChange(Consumer<LeaderRecord> listener) {
        // the address never changes
    }

    @Override
    public String describe() {
        return "address " + oracle.address();
    }

    @Override
    public void close() {
    }
}
