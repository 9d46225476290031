package io.sibyl.oracle;

/**
 * The running transactions as status, metrics and refused BEGINs see them: counts against their limits, and the list.
 * Read-only, so that reporting cannot change what the oracle decides; {@link RunningTransactions} is the one behind it.
 */
public interface RunningView {
    /** Transactions started and not yet finished (including those T_max or another connection aborted). */
    int live();

    /** Maximum number of running transactions ({@code max.running.transactions}). */
    int capacity();

    /** Transactions {@code owner} started and has not finished (including those T_max or others aborted). */
    int liveOf(int owner);

    /** Maximum number of running transactions one owner may hold. */
    int capacityPerOwner();

    /** Running transactions of {@code owner}'s identity (all its owners), or -1 when they are not counted. */
    long liveOfIdentityOf(int owner);

    /** Maximum number of running transactions the owners of one identity may hold together. */
    int capacityPerIdentity();

    /**
     * Calls {@code sink} with each transaction not finished, oldest first, until it returns false (the admin's list of
     * running transactions; O(ring), so not for the request path).
     */
    void forEachLive(LiveSink sink);

    /**
     * Receives a transaction not finished: its start timestamp, owner and state ({@link RunningTransactions#RUNNING},
     * ...).
     */
    @FunctionalInterface
    interface LiveSink {
        /** Returns false to stop. */
        boolean live(long ts, int owner, int state);
    }
}
