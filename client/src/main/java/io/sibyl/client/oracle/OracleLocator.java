package io.sibyl.client.oracle;

import io.sibyl.protocol.LeaderRecord;

import java.util.function.Consumer;

/**
 * Tells a client which status oracle to connect to: a fixed address ({@link FixedOracleAddress}) or the leader an HA
 * group of oracles publishes in ZooKeeper ({@link ZooKeeperOracleLocator}).
 */
public interface OracleLocator extends AutoCloseable {

    /**
     * The oracle to connect to now, waiting up to {@code waitMillis} for one to be known.
     *
     * @return the oracle, or null if none is known within the wait
     */
    LeaderRecord leader(long waitMillis) throws InterruptedException;

    /**
     * Registers a callback told when a different oracle takes the lead (a newer epoch); it runs on the locator's own
     * thread and must be short. Locators whose oracle never changes never call it.
     */
    void onLeaderChange(Consumer<LeaderRecord> listener);

    /** Where oracles are looked up, for messages (e.g. {@code zk 127.0.0.1:2181 /sibyl/oracle/leader}). */
    String describe();

    @Override
    void close();
}
