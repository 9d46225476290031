package io.sibyl.client;

/**
 * A transaction, begun by {@link TransactionManager#begin()} (snapshot isolation, or serializable: {@link
 * IsolationLevel}). It reads the snapshot of its start
 * timestamp plus its own writes, and writes versions tagged with its start timestamp. A transaction is meant to be
 * used by one thread at a time; the manager may roll it back from another thread when it is closed. If threads share
 * it anyway, its write operations run one at a time, and a commit waits for the one under way and refuses later
 * ones, so no write is lost, half committed or dropped.
 *
 * <p>Only a {@link TransactionManager} makes transactions; {@link TTable} and the manager refuse any other
 * implementation of this interface.
 */
public interface Transaction {
    /** Lifecycle of a transaction. */
    enum Status {
        RUNNING,
        COMMITTED,
        ROLLED_BACK
    }

    /** The start timestamp T_s: the snapshot this transaction reads, and the version of every cell it writes. */
    long getStartTimestamp();

    /**
     * The commit timestamp T_c once {@link Status#COMMITTED}, else 0. A read-only transaction commits at its start
     * timestamp (it serializes at its snapshot). Also 0 for a commit that was in flight across a lost oracle
     * connection and that the oracle then reported committed without a timestamp (it had passed T_max).
     */
    long getCommitTimestamp();

    /** {@code RUNNING} until the transaction commits or is rolled back. */
    Status getStatus();

    /** True while the transaction has written nothing (puts and deletes, buffered or sent). */
    boolean isReadOnly();

    /** The isolation it was begun with ({@link TransactionManager#begin(IsolationLevel)}). */
    IsolationLevel getIsolationLevel();
}
