package io.sibyl.oracle;

import io.netty.buffer.ByteBuf;
import io.sibyl.protocol.AbortedRange;

import java.util.List;

/**
 * The aborted transactions as the HELLO, status and refused BEGINs see them: how many wait for their clean-up against
 * the limit, the aborted ranges of earlier recoveries, and the images a client's replica starts from. Read-only, so
 * that reporting cannot forget an abort.
 */
public interface AbortedView {
    /** Aborted transactions kept (their clean-up not yet reported, or reported while an older reader still ran). */
    int size();

    /** {@code max.aborted.transactions}: at it, BEGINs are refused until clean-ups are reported. */
    int limit();

    /** Calls {@code sink} with every aborted transaction kept. */
    void forEach(RunningTransactions.TimestampSink sink);

    /** True if {@code ts} was running when an earlier oracle stopped (no commit, no abort record): aborted. */
    boolean isInDoubt(long ts);

    /** The aborted ranges of earlier recoveries, oldest first. */
    List<AbortedRange> ranges();

    /**
     * Writes the HELLO's images: the aborted set ({@link AbortedSetImage}: a copy of an image encoded earlier, so no
     * handshake sorts the set) and then the aborted ranges of earlier recoveries ({@link AbortedRange#writeAll}).
     */
    void writeForHello(ByteBuf out);
}
