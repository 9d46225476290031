package io.sibyl.oracle.journal;

import java.util.ArrayList;
import java.util.concurrent.ScheduledFuture;

/**
 * The open group-commit batch: blocks appended since the last entry was sealed, their callbacks, and the timer that
 * seals it once its first block has waited long enough. Guarded by the journal lock.
 */
final class GroupCommitBatch {
    private final ArrayList<byte[]> blocks = new ArrayList<>();
    private ArrayList<Runnable> callbacks = new ArrayList<>();
    private int bytes;
    private long startNanos;
    /** Bumped at each seal, so a timer armed for an earlier batch does nothing. */
    private long generation;
    private ScheduledFuture<?> timer;

    boolean isEmpty() {
        return blocks.isEmpty();
    }

    int bytes() {
        return bytes;
    }

    void add(byte[] block, Runnable onDurable) {
        if (blocks.isEmpty()) {
            startNanos = System.nanoTime();
        }
        blocks.add(block);
        callbacks.add(onDurable);
        bytes += block.length;
    }

    /** A barrier joins the open batch: it runs once the batch's entry is delivered. */
    void addBarrier(Runnable onDurable) {
        callbacks.add(onDurable);
    }

    long ageNanos() {
        return System.nanoTime() - startNanos;
    }

    long generation() {
        return generation;
    }

    boolean timerArmed() {
        return timer != null;
    }

    void timerArmed(ScheduledFuture<?> armed) {
        timer = armed;
    }

    /** The timer of generation {@code g} fired: true if the batch is still that one. */
    boolean timerFired(long g) {
        if (g != generation) {
            return false;
        }
        timer = null;
        return true;
    }

    /** Turns the batch into one entry (the concatenation of its self-delimiting blocks) and starts an empty one. */
    JournalEntry seal() {
        byte[] data;
        if (blocks.size() == 1) {
            data = blocks.get(0);
        } else {
            data = new byte[bytes];
            int at = 0;
            for (byte[] b : blocks) {
                System.arraycopy(b, 0, data, at, b.length);
                at += b.length;
            }
        }
        JournalEntry e = new JournalEntry(data, blocks.size(), callbacks);
        blocks.clear();
        callbacks = new ArrayList<>();
        bytes = 0;
        generation++;
        cancelTimer();
        return e;
    }

    void cancelTimer() {
        if (timer != null) {
            timer.cancel(false);
            timer = null;
        }
    }
}
