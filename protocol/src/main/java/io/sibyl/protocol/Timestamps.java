package io.sibyl.protocol;

/**
 * The shape of timestamps: the oracle hands out multiples of {@link #STEP} only, so that the numbers between them are
 * free for versions a region server commits on its own (the fast path of single-row transactions, {@link Wire#TICKET}):
 * a version at a timestamp that is not a multiple of {@code STEP} is committed, at that timestamp, by whoever wrote
 * it. Readers, the collector and the sweepers judge such a version without the replica and never delete it.
 */
public final class Timestamps {
    /** Distance between two timestamps of the oracle; a power of two. */
    public static final long STEP = 2;

    private Timestamps() {
    }

    /** True for a version committed by its region server at its own timestamp (not a multiple of {@link #STEP}). */
    public static boolean isSelfCommitted(long version) {
        return (version & (STEP - 1)) != 0;
    }

    /** The version a fast-path write takes under {@code ticket}, a timestamp the oracle handed out for it. */
    public static long selfCommittedVersion(long ticket) {
        return ticket + 1;
    }

    /** The smallest timestamp the oracle may hand out that is above {@code ts}. */
    public static long nextAbove(long ts) {
        return (ts / STEP + 1) * STEP;
    }
}
