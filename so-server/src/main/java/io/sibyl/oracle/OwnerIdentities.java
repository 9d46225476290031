package io.sibyl.oracle;

/**
 * The client behind each owner (connection) of transactions: the identity token its connections share, so that a
 * client may abort, and report the clean-up of, the transactions it began on a connection it lost, and nobody else's.
 * Owned by the sequencer thread.
 */
final class OwnerIdentities {
    /** Identity (client token) of each connected owner, keyed by owner + 1 (0 marks a free slot). */
    private final LongLongHashMap identities = new LongLongHashMap(64);
    private final RunningTransactions running;
    private final AbortedTransactions aborted;

    OwnerIdentities(RunningTransactions running, AbortedTransactions aborted) {
        this.running = running;
        this.aborted = aborted;
    }

    /**
     * {@code owner} connected for the client {@code identity}; its running transactions are also counted with those
     * of the other owners of {@code limitKey} (positive; 0: not counted) under
     * {@code max.running.transactions.per.identity}.
     */
    void connect(int owner, long identity, long limitKey) {
        if (identity == AbortedTransactions.NOBODY || identity == Long.MIN_VALUE) {
            throw new IllegalArgumentException("reserved identity " + identity);
        }
        identities.put(owner + 1L, identity);
        if (limitKey > 0) {
            running.identify(owner, limitKey);
        }
    }

    /** {@code owner}'s connection is gone. */
    void disconnect(int owner) {
        identities.remove(owner + 1L);
    }

    /** The identity of {@code owner}, or {@link AbortedTransactions#NOBODY} (no owner, or one that disconnected). */
    long identityOf(int owner) {
        return owner < 0 ? AbortedTransactions.NOBODY : identities.get(owner + 1L, AbortedTransactions.NOBODY);
    }

    /** True if the running transaction {@code startTs} was begun by a connection of the client {@code identity}. */
    boolean isClientOf(long startTs, long identity) {
        long owner = identityOf(running.ownerOf(startTs));
        return owner != AbortedTransactions.NOBODY && owner == identity;
    }

    /**
     * True if the client {@code identity} may report {@code startTs} cleaned up: it began it, or it is not aborted
     * (the report changes nothing). The transactions of lost clients, and those recovered from the journal, need the
     * admin role: a report of a transaction whose versions are still in the data store would make them read as
     * committed once T_max passes it.
     */
    boolean mayReportCleanedUp(long startTs, long identity) {
        if (!aborted.contains(startTs)) {
            return true;
        }
        long owner = aborted.identityOf(startTs);
        return owner != AbortedTransactions.NOBODY && owner == identity;
    }
}
