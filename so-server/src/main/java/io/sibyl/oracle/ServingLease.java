package io.sibyl.oracle;

/**
 * How long an oracle may still answer requests that need no journal write (begins, queries, handshakes): until a
 * deadline set from the last confirmation that it still leads. A leader in an election is replaced only after its
 * ZooKeeper session expires, which the server counts from the last time it heard from the leader; a confirmation
 * sent at {@code t} and answered therefore proves that no standby can serve before {@code t} plus the session
 * timeout, and a lease shorter than that, counted from {@code t}, ends before any standby can.
 *
 * <p>Times are {@link System#nanoTime()} (CLOCK_MONOTONIC on Linux), which keeps counting while the process is stopped
 * (SIGSTOP, a long pause): a leader resumed after a takeover finds its lease over. {@link #isValid()} is the hot path,
 * one volatile read; renewals and revocations are rare and take a lock.
 */
public final class ServingLease {
    /** The lease of an oracle nobody can depose by an election (no HA): always valid. */
    public static final ServingLease UNLIMITED = new ServingLease(true);

    private final boolean unlimited;
    /** Until when (System.nanoTime) the lease holds; in the past while it does not. */
    private volatile long validUntilNanos;
    /** Raised at each revocation: confirmations sent before it renew nothing. Guarded by this. */
    private long generation;
    private volatile Runnable onRenewal = () -> { };

    private ServingLease(boolean unlimited) {
        this.unlimited = unlimited;
        this.validUntilNanos = System.nanoTime() - 1;
    }

    /** A lease that is not valid until its first {@link #confirmed}. */
    public ServingLease() {
        this(false);
    }

    /** Whether the oracle may answer without the journal now. */
    public boolean isValid() {
        return unlimited || System.nanoTime() - validUntilNanos < 0;
    }

    /** The generation a confirmation about to be sent belongs to: pass it back to {@link #confirmed}. */
    public synchronized long generation() {
        return generation;
    }

    /**
     * A confirmation of {@code generation}, sent at {@code sentNanos}, was answered: the lease holds until
     * {@code sentNanos + lengthNanos} (never shortened by a confirmation answered out of order). Ignored if the lease
     * was revoked since the confirmation was sent.
     */
    public void confirmed(long generation, long sentNanos, long lengthNanos) {
        synchronized (this) {
            if (generation != this.generation) {
                return;
            }
            long until = sentNanos + lengthNanos;
            if (until - validUntilNanos > 0) {
                validUntilNanos = until;
            }
        }
        onRenewal.run();
    }

    /** Ends the lease now (the connection to ZooKeeper is lost): only a confirmation sent after this renews it. */
    public void revoke() {
        synchronized (this) {
            generation++;
            validUntilNanos = System.nanoTime() - 1;
        }
    }

    /** Milliseconds the lease still holds (negative: since it ended); for log lines. */
    public long remainingMillis() {
        return unlimited ? Long.MAX_VALUE : (validUntilNanos - System.nanoTime()) / 1_000_000L;
    }

    /**
     * Sets what runs (on the confirming thread) after each renewal: the release of replies held meanwhile. The
     * unlimited lease is never renewed and is shared by every oracle outside an election: it keeps no action, which
     * would keep the last such oracle (its sequencer and state) reachable after it stopped.
     */
    void onRenewal(Runnable action) {
        if (!unlimited) {
            onRenewal = action;
        }
    }
}
