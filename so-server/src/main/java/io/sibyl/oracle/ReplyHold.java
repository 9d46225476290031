package io.sibyl.oracle;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.ArrayDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;

/**
 * Lets the replies of a sealed block leave only when the oracle may be sure it still leads. A block the journal wrote
 * is proof enough: its write was sent after its requests were decided and a deposed leader's writes fail (fenced),
 * so its replies, and every reply held before them, leave when the journal acknowledges it. A block with no record
 * (begins, queries, handshakes: answered without a write) leaves only while the {@link ServingLease} holds; otherwise
 * it is held, in order, until a renewal of the lease or a later journal write releases it. An oracle that stops
 * instead never sends what it held: its connections are closed.
 *
 * <p>Its methods run as journal callbacks, which the journal runs one at a time and in order, so the held blocks need
 * no lock; a renewal reaches them as a barrier appended to the journal from the thread that owns the state.
 */
final class ReplyHold {
    private static final Logger LOG = LoggerFactory.getLogger(ReplyHold.class);

    private final ServingLease lease;
    private final Journal journal;
    private final Executor owner;
    private final ArrayDeque<Runnable> held = new ArrayDeque<>();
    /** Set before blocks are held (then the lease is read again), so that a renewal meanwhile sees it. */
    private volatile boolean holding;
    private long heldSinceNanos;

    /** {@code owner} runs tasks on the thread that owns the state (the one that appends to the journal). */
    ReplyHold(ServingLease lease, Journal journal, Executor owner) {
        this.lease = lease;
        this.journal = journal;
        this.owner = owner;
        lease.onRenewal(this::renewed);
    }

    /**
     * Journal callback of a sealed block: runs {@code release} (sends its replies) now if the block was written
     * ({@code journaled}) or the lease holds, after every block held before it; else holds it.
     */
    void release(Runnable release, boolean journaled) {
        if (held.isEmpty() && (journaled || lease.isValid())) {
            release.run(); // the hot path: one volatile read for a block without records, none for one with
            return;
        }
        holding = true;
        if (journaled || lease.isValid()) {
            releaseHeld(journaled ? "a later block was written to the journal" : "the lease holds again");
            release.run();
            return;
        }
        if (held.isEmpty()) {
            heldSinceNanos = System.nanoTime();
            LOG.warn("holding replies that need no journal write (begins, queries, new connections' handshakes):"
                    + " this oracle's lease on its leadership ended {} ms ago (ZooKeeper disconnected, or the process"
                    + " was paused); they leave once ZooKeeper confirms its session, never if a newer leader took"
                    + " over", -lease.remainingMillis());
        }
        held.add(release);
    }

    /** Confirming thread: the lease was renewed; held blocks leave through a barrier, in journal order. */
    private void renewed() {
        if (!holding) {
            return;
        }
        try {
            owner.execute(() -> journal.append(null, () -> {
                if (!held.isEmpty() && lease.isValid()) {
                    releaseHeld("ZooKeeper confirmed the session");
                }
            }));
        } catch (RejectedExecutionException e) {
            // the oracle is shutting down: nothing more leaves
        }
    }

    private void releaseHeld(String why) {
        int n = held.size();
        for (Runnable r = held.poll(); r != null; r = held.poll()) {
            r.run();
        }
        holding = false;
        if (n == 0) {
            return;
        }
        LOG.info("released {} held reply blocks after {} ms: {}", n, (System.nanoTime() - heldSinceNanos) / 1_000_000L,
                why);
    }
}
