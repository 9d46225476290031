package io.sibyl.oracle.journal;

import io.netty.buffer.ByteBuf;
import io.netty.buffer.Unpooled;
import io.sibyl.protocol.AbortedRange;
import io.sibyl.protocol.DecisionBlockWriter;
import io.sibyl.protocol.ProtocolException;
import io.sibyl.protocol.Varints;

import java.util.Arrays;
import java.util.List;

/**
 * The oracle's journal-only state at one point of the journal: what a replay of everything journaled before that
 * point would rebuild, except the commits above T_max (paper Section IV, "SO data reliability": periodic checkpoints of
 * the aborted set). The journal writes one as the first entry of each ledger it rolls over to, so that older ledgers
 * can be deleted once T_max has passed every commit in them (see {@link BookKeeperJournal}). Never replicated:
 * clients learn the same state from their HELLO.
 *
 * <p>Entry format: a zero byte (a decision block always starts with a non-zero length, so no entry of decision blocks
 * starts with it), the format version (1), then {@code varint tMax}, {@code varint clock},
 * {@code varint (lastTimestamp - clock)},
 * {@code varint n, n x varint delta} (the aborted set, ascending, each minus the previous, the first minus 0) and the
 * aborted ranges with their commits in {@link AbortedRange#writeAll}'s format.
 *
 * <p>Bookies refuse frames above 5 MB (their nettyMaxFrameSizeBytes), and a checkpoint with many aborted ranges (each
 * with up to recent.commits.capacity commits) or a big aborted set can exceed it: such an entry can never be written,
 * and the leader (and each successor) would stop at its next rollover. So a checkpoint whose entry is above
 * {@link #PART_BYTES} is journaled as consecutive <em>part</em> entries ({@link #entries()}): a zero byte, the part
 * format version ({@link #PARTS_VERSION}, 2), {@code varint index}, {@code varint count}, then the index-th slice of
 * the single-entry encoding. Their concatenation, in index order, is the version-1 entry. Smaller checkpoints stay
 * single version-1 entries, so journals written before parts existed read as before. {@link CheckpointParts}
 * reassembles them in replay.
 *
 * @param tMax          the T_max journaled so far
 * @param clock         highest timestamp handed out: every commit journaled before the checkpoint is at or below it
 *                      (what decides when the ledgers before it may be deleted)
 * @param lastTimestamp highest timestamp that may have been handed out (reservations included)
 * @param aborted       the aborted set (aborted, not forgotten), ascending
 * @param abortedRanges the aborted ranges the oracle keeps (at most {@link AbortedRange#MAX_KEPT}), with commits
 */
public record Checkpoint(long tMax, long clock, long lastTimestamp, long[] aborted,
                         List<AbortedRange> abortedRanges) {
    static final byte MARKER = 0;
    static final byte VERSION = 1;
    /** Format version of a checkpoint part entry. */
    static final byte PARTS_VERSION = 2;
    /** Largest slice of a checkpoint per entry: well below the bookies' 5 MB frame limit. */
    static final int PART_BYTES = 1 << 20;

    public Checkpoint {
        if (tMax < 0 || tMax > clock || clock > lastTimestamp || lastTimestamp >= DecisionBlockWriter.MAX_TIMESTAMP) {
            throw new IllegalArgumentException("checkpoint T_max " + tMax + " / clock " + clock + " / last timestamp "
                    + lastTimestamp + " out of order or range");
        }
        for (int i = 1; i < aborted.length; i++) {
            if (aborted[i] <= aborted[i - 1]) {
                throw new IllegalArgumentException("checkpoint aborted set must be ascending");
            }
        }
        abortedRanges = List.copyOf(abortedRanges);
    }

    /** True if the journal entry {@code data} (at its reader index) is a checkpoint rather than decision blocks. */
    public static boolean isCheckpoint(ByteBuf data) {
        return data.isReadable() && data.getByte(data.readerIndex()) == MARKER;
    }

    /** True if the checkpoint entry {@code data} (at its reader index) is one part of a checkpoint in several. */
    static boolean isPart(ByteBuf data) {
        return data.readableBytes() >= 2 && data.getByte(data.readerIndex()) == MARKER
                && data.getByte(data.readerIndex() + 1) == PARTS_VERSION;
    }

    /** The journal entries: the single-entry encoding, or its parts when it is above {@link #PART_BYTES}. */
    public List<byte[]> entries() {
        return entries(PART_BYTES);
    }

    /** As {@link #entries()}, in slices of {@code partBytes} (tests use small ones). */
    List<byte[]> entries(int partBytes) {
        byte[] whole = encode();
        if (whole.length <= partBytes) {
            return List.of(whole);
        }
        int count = (whole.length + partBytes - 1) / partBytes;
        List<byte[]> parts = new java.util.ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            int from = i * partBytes;
            int length = Math.min(partBytes, whole.length - from);
            ByteBuf out = Unpooled.buffer(length + 12);
            out.writeByte(MARKER);
            out.writeByte(PARTS_VERSION);
            Varints.writeUnsigned(out, i);
            Varints.writeUnsigned(out, count);
            out.writeBytes(whole, from, length);
            byte[] part = new byte[out.readableBytes()];
            out.readBytes(part);
            parts.add(part);
        }
        return parts;
    }

    /** The single-entry (version 1) encoding. */
    public byte[] encode() {
        ByteBuf out = Unpooled.buffer(32 + aborted.length * 4 + abortedRanges.size() * 16);
        out.writeByte(MARKER);
        out.writeByte(VERSION);
        Varints.writeUnsigned(out, tMax);
        Varints.writeUnsigned(out, clock);
        Varints.writeUnsigned(out, lastTimestamp - clock);
        Varints.writeUnsigned(out, aborted.length);
        long previous = 0;
        for (long ts : aborted) {
            Varints.writeUnsigned(out, ts - previous);
            previous = ts;
        }
        AbortedRange.writeAll(out, abortedRanges);
        byte[] bytes = new byte[out.readableBytes()];
        out.readBytes(bytes);
        return bytes;
    }

    /** Reads a whole checkpoint entry, validating it. */
    public static Checkpoint decode(ByteBuf in) {
        if (in.readableBytes() < 2 || in.readByte() != MARKER) {
            throw new ProtocolException("not a checkpoint entry");
        }
        byte version = in.readByte();
        if (version != VERSION) {
            throw new ProtocolException("checkpoint format version " + version + " is not supported (this oracle"
                    + " reads version " + VERSION + ")");
        }
        long tMax = Varints.readUnsigned(in);
        long clock = Varints.readUnsigned(in);
        long last = clock + Varints.readUnsigned(in);
        int n = Varints.readBoundedInt(in, in.readableBytes(), "checkpoint aborted count");
        long[] aborted = new long[n];
        long previous = 0;
        for (int i = 0; i < n; i++) {
            long delta = Varints.readUnsigned(in);
            if (delta <= 0 && i > 0) {
                throw new ProtocolException("checkpoint aborted set is not ascending");
            }
            previous += delta;
            aborted[i] = previous;
        }
        List<AbortedRange> ranges = AbortedRange.readAll(in);
        if (in.isReadable()) {
            throw new ProtocolException("checkpoint entry has " + in.readableBytes() + " bytes after its end");
        }
        try {
            return new Checkpoint(tMax, clock, last, aborted, ranges);
        } catch (IllegalArgumentException e) {
            throw new ProtocolException("invalid checkpoint: " + e.getMessage());
        }
    }

    @Override
    public boolean equals(Object o) {
        return o instanceof Checkpoint c && tMax == c.tMax && clock == c.clock && lastTimestamp == c.lastTimestamp
                && Arrays.equals(aborted, c.aborted) && sameRanges(abortedRanges, c.abortedRanges);
    }

    /** Same intervals with the same commits (AbortedRange itself compares by identity). */
    static boolean sameRanges(List<AbortedRange> a, List<AbortedRange> b) {
        if (a.size() != b.size()) {
            return false;
        }
        for (int i = 0; i < a.size(); i++) {
            if (!a.get(i).sameInterval(b.get(i))
                    || !Arrays.equals(a.get(i).committedStarts(), b.get(i).committedStarts())) {
                return false;
            }
        }
        return true;
    }

    @Override
    public int hashCode() {
        return Long.hashCode(tMax) * 31 + Arrays.hashCode(aborted);
    }

    @Override
    public String toString() {
        return "Checkpoint[tMax=" + tMax + ", clock=" + clock + ", lastTimestamp=" + lastTimestamp + ", aborted=" + aborted.length
                + ", aborted ranges=" + abortedRanges + "]";
    }
}
