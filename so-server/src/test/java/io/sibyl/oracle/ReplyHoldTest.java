package io.sibyl.oracle;

import org.junit.jupiter.api.Test;

import java.lang.ref.WeakReference;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.Executor;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The release of replies under a {@link ServingLease}, on the in-memory journal (callbacks run at once). */
class ReplyHoldTest {
    private static final long HOUR_NANOS = TimeUnit.HOURS.toNanos(1);

    private final ServingLease lease = new ServingLease();
    private final ReplyHold hold = new ReplyHold(lease, new InMemoryJournal(), Runnable::run);
    private final List<String> sent = new ArrayList<>();

    private Runnable reply(String name) {
        return () -> sent.add(name);
    }

    @Test
    void repliesWithoutAJournalWriteWaitForTheLeaseAndLeaveInOrderWhenItIsRenewed() {
        hold.release(reply("begin-1"), false);
        hold.release(reply("query-2"), false);
        assertEquals(List.of(), sent, "nothing leaves before the session is confirmed");

        lease.confirmed(lease.generation(), System.nanoTime(), HOUR_NANOS);
        assertEquals(List.of("begin-1", "query-2"), sent);
        hold.release(reply("begin-3"), false);
        assertEquals(List.of("begin-1", "query-2", "begin-3"), sent, "with the lease, at once");
    }

    @Test
    void aJournaledBlockReleasesTheHeldRepliesBeforeItsOwnWithoutTheLease() {
        hold.release(reply("begin-1"), false);
        hold.release(reply("commit-2"), true);
        assertEquals(List.of("begin-1", "commit-2"), sent, "its write proves the leadership the begin was decided in");
    }

    @Test
    void aConfirmationSentBeforeARevocationRenewsNothing() {
        long before = lease.generation();
        long sentAt = System.nanoTime();
        lease.revoke();
        lease.confirmed(before, sentAt, HOUR_NANOS);
        assertFalse(lease.isValid(), "answered from before the disconnection");
        hold.release(reply("begin-1"), false);
        assertEquals(List.of(), sent);

        lease.confirmed(lease.generation(), System.nanoTime(), HOUR_NANOS);
        assertTrue(lease.isValid());
        assertEquals(List.of("begin-1"), sent);
    }

    @Test
    void aLeaseCountedFromWhenItsConfirmationWasSentEndsAlthoughAnsweredLater() {
        lease.confirmed(lease.generation(), System.nanoTime() - 2 * HOUR_NANOS, HOUR_NANOS);
        assertFalse(lease.isValid(), "a confirmation sent two hours ago does not make a one-hour lease hold now");
        assertTrue(ServingLease.UNLIMITED.isValid(), "an oracle outside an election is never held");
    }

    @Test
    void anOracleOutsideAnElectionIsNotKeptReachableByTheSharedUnlimitedLease() throws InterruptedException {
        // Every oracle without HA shares UNLIMITED: had it kept each one's renewal action, the newest stopped oracle
        // (its sequencer, state and tables) would stay reachable from a static field for the rest of the JVM.
        WeakReference<Object> sequencer = holdOnTheUnlimitedLease();
        for (int i = 0; i < 50 && sequencer.get() != null; i++) {
            System.gc();
            Thread.sleep(20);
        }
        assertTrue(sequencer.get() == null, "the unlimited lease keeps a stopped oracle's sequencer reachable");
    }

    /** Makes the hold a non-HA oracle makes and drops it; returns a weak reference to the state its owner keeps. */
    private static WeakReference<Object> holdOnTheUnlimitedLease() {
        Object state = new Object();
        new ReplyHold(ServingLease.UNLIMITED, new InMemoryJournal(), new Executor() {
            private final Object owned = state; // as the sequencer's runOnOwner keeps the sequencer and its state

            @Override
            public void execute(Runnable task) {
                task.run();
            }
        });
        return new WeakReference<>(state);
    }
}
