package io.sibyl.oracle.journal;

/**
 * Decides when the journal asks for a checkpoint. Once the oracle promises checkpoints, ledger size limits count
 * entries as they are sealed, in append order (not as they are sent): when the entries since the last checkpoint
 * would fill a ledger, the next checkpoint is wanted, and it will open the next ledger. Counts are guarded by the
 * journal lock; the flags are read without it.
 */
final class CheckpointTrigger {
    private final JournalSettings settings;
    private volatile boolean follow;
    private volatile boolean wanted;
    private long entriesSince;
    private long bytesSince;

    CheckpointTrigger(JournalSettings settings) {
        this.settings = settings;
    }

    /** The caller promised checkpoints: ledgers roll over at checkpoints, not at their size limits. */
    void follow() {
        follow = true;
    }

    boolean follows() {
        return follow;
    }

    boolean wanted() {
        return wanted;
    }

    /** An entry of {@code bytes} was sealed. */
    void sealed(int bytes) {
        entriesSince++;
        bytesSince += bytes;
        if (follow && (entriesSince >= settings.ledgerMaxEntries() || bytesSince >= settings.ledgerMaxBytes())) {
            wanted = true;
        }
    }

    /** A checkpoint arrived: no longer wanted, even if the journal stopped and drops it. */
    void answered() {
        wanted = false;
    }

    /** The checkpoint was queued: the next ledger starts counting from it. */
    void queued() {
        entriesSince = 0;
        bytesSince = 0;
    }
}
