package io.sibyl.oracle;

/**
 * Counts the running transactions of each owner (connection) and of each identity (all connections of one client)
 * against their caps, {@code max.running.transactions.per.connection} and {@code .per.identity}, so that neither one
 * connection nor one client can take every place of {@code max.running.transactions}. A cap at or above that
 * shared limit is not counted at all (nothing to check on the BEGIN path). Owned by the sequencer thread.
 */
final class RunningQuotas {
    private final int perOwner;
    private final int perIdentity;
    /** Running transactions per owner (key: owner + 1, as 0 marks a free slot), or null without that cap. */
    private final LongLongHashMap byOwner;
    /** The identity key of each connected owner (key: owner + 1), or null without the identity cap. */
    private final LongLongHashMap identityOfOwner;
    /** Running transactions per identity key, or null without the identity cap. */
    private final LongLongHashMap byIdentity;

    RunningQuotas(int maxLive, int perOwner, int perIdentity) {
        if (perOwner < 1 || perIdentity < 1) {
            throw new IllegalArgumentException("per-owner limit " + perOwner + ", per-identity limit " + perIdentity);
        }
        this.perOwner = Math.min(perOwner, maxLive);
        this.perIdentity = Math.min(perIdentity, maxLive);
        byOwner = perOwner < maxLive ? new LongLongHashMap(64) : null;
        identityOfOwner = perIdentity < maxLive ? new LongLongHashMap(64) : null;
        byIdentity = perIdentity < maxLive ? new LongLongHashMap(64) : null;
    }

    int perOwner() {
        return perOwner;
    }

    int perIdentity() {
        return perIdentity;
    }

    /** {@code owner} is a connection of the identity {@code identityKey} (not 0) until {@link #forget}. */
    void identify(int owner, long identityKey) {
        if (identityOfOwner != null) {
            identityOfOwner.put(ownerKey(owner), identityKey);
        }
    }

    /** {@code owner} has gone, every transaction of it finished ({@link #finished}). */
    void forget(int owner) {
        if (identityOfOwner != null) {
            identityOfOwner.remove(ownerKey(owner));
        }
    }

    /** True if {@code owner} holds its cap of running transactions. */
    boolean ownerAtLimit(int owner) {
        return byOwner != null && byOwner.get(ownerKey(owner), 0) >= perOwner;
    }

    /** True if the identity of {@code owner} holds its cap of running transactions (false for an unknown owner). */
    boolean identityAtLimit(int owner) {
        long identity = identityOf(owner);
        return identity != 0 && byIdentity.get(identity, 0) >= perIdentity;
    }

    /** Running transactions of {@code owner}'s identity, or -1 when they are not counted. */
    long heldByIdentityOf(int owner) {
        long identity = identityOf(owner);
        return identity == 0 ? -1 : byIdentity.get(identity, 0);
    }

    /** Running transactions of {@code owner}, or -1 when they are not counted. */
    long heldBy(int owner) {
        return byOwner == null ? -1 : byOwner.get(ownerKey(owner), 0);
    }

    /**
     * {@code owner} began a transaction.
     *
     * @throws IllegalStateException if it or its identity holds its cap already (the caller checks first)
     */
    void added(int owner) {
        if (byOwner != null) {
            long held = byOwner.get(ownerKey(owner), 0);
            if (held >= perOwner) {
                throw new IllegalStateException("running transaction limit of " + perOwner + " for owner " + owner
                        + " reached");
            }
            byOwner.put(ownerKey(owner), held + 1);
        }
        long identity = identityOf(owner);
        if (identity != 0) {
            long held = byIdentity.get(identity, 0);
            if (held >= perIdentity) {
                throw new IllegalStateException("running transaction limit of " + perIdentity + " for the identity"
                        + " of owner " + owner + " reached");
            }
            byIdentity.put(identity, held + 1);
        }
    }

    /** {@code count} of {@code owner}'s transactions finished: their places are free again. */
    void finished(int owner, long count) {
        if (count == 0) {
            return;
        }
        if (byOwner != null) {
            decrement(byOwner, ownerKey(owner), count);
        }
        long identity = identityOf(owner);
        if (identity != 0) {
            decrement(byIdentity, identity, count);
        }
    }

    /** Lowers a count, removing it at zero: connections and clients come and go, keep only those holding some. */
    private static void decrement(LongLongHashMap counts, long key, long count) {
        long n = counts.get(key, 0) - count;
        if (n <= 0) {
            counts.remove(key);
        } else {
            counts.put(key, n);
        }
    }

    private long identityOf(int owner) {
        return identityOfOwner == null ? 0 : identityOfOwner.get(ownerKey(owner), 0);
    }

    private static long ownerKey(int owner) {
        return (owner & 0xFFFF_FFFFL) + 1;
    }
}
