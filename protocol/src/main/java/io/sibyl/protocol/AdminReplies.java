package io.sibyl.protocol;

import io.netty.buffer.ByteBuf;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Bodies of the admin replies {@link Wire#ORACLE_STATUS} and {@link Wire#RUNNING_LIST}, written by the oracle and read
 * by {@code bin/sibyl}, so that both sides share one layout (docs/protocol.md, "Admin requests").
 *
 * <p>The status is a list of named figures rather than fixed fields: an oracle can report a new figure, and an older
 * admin tool prints it, without a change of the protocol version.
 */
public final class AdminReplies {
    /** Longest figure name or client address read; longer ones are malformed. */
    private static final int MAX_NAME_BYTES = 256;

    /** Transaction state in {@link Wire#RUNNING_LIST}: running, it may still commit. */
    public static final byte RUNNING = 1;
    /** Transaction state in {@link Wire#RUNNING_LIST}: T_max passed it, so it will abort; its client is not done yet. */
    public static final byte ABORTED_BY_TMAX = 2;
    /**
     * Transaction state in {@link Wire#RUNNING_LIST}: another connection of its client, or the admin, aborted it; it
     * holds the low watermark until its own connection is done with it.
     */
    public static final byte ABORTED_ELSEWHERE = 3;

    private AdminReplies() {
    }

    /** One running transaction as {@link Wire#RUNNING_LIST} reports it. */
    public record RunningTransaction(long startTs, byte state, int connection, String clientAddress) {
        /** The state in words, for people. */
        public String stateName() {
            return switch (state) {
                case RUNNING -> "running";
                case ABORTED_BY_TMAX -> "aborted (T_max passed it)";
                case ABORTED_ELSEWHERE -> "aborted (by another connection or the admin)";
                default -> "state " + state;
            };
        }
    }

    /** The running transactions: how many run in all, and the oldest ones, up to the limit asked for. */
    public record RunningList(long total, List<RunningTransaction> oldest) {
        public RunningList {
            oldest = List.copyOf(oldest);
        }
    }

    /** Writes an {@link Wire#ORACLE_STATUS} reply to request {@code id}: the figures in their order. */
    public static void writeStatus(ByteBuf out, long id, Map<String, Long> figures) {
        out.writeByte(Wire.ORACLE_STATUS);
        Varints.writeUnsigned(out, id);
        Varints.writeUnsigned(out, figures.size());
        for (Map.Entry<String, Long> f : figures.entrySet()) {
            Frames.writeString(out, f.getKey());
            Varints.writeUnsigned(out, f.getValue());
        }
    }

    /** Reads the body of an {@link Wire#ORACLE_STATUS} (after its type byte and request id), in the oracle's order. */
    public static Map<String, Long> readStatus(ByteBuf in) {
        int n = Varints.readBoundedInt(in, in.readableBytes(), "figure count");
        Map<String, Long> figures = new LinkedHashMap<>();
        for (int i = 0; i < n; i++) {
            String name = Frames.readString(in, MAX_NAME_BYTES);
            figures.put(name, Varints.readUnsigned(in));
        }
        return figures;
    }

    /**
     * Starts a {@link Wire#RUNNING_LIST} reply to request {@code id}: {@code total} transactions run, {@code listed}
     * of them follow, each written with {@link #writeRunningTransaction}.
     */
    public static void writeRunningHeader(ByteBuf out, long id, long total, int listed) {
        out.writeByte(Wire.RUNNING_LIST);
        Varints.writeUnsigned(out, id);
        Varints.writeUnsigned(out, total);
        Varints.writeUnsigned(out, listed);
    }

    /** One entry of a {@link Wire#RUNNING_LIST}. */
    public static void writeRunningTransaction(ByteBuf out, RunningTransaction t) {
        Varints.writeUnsigned(out, t.startTs());
        out.writeByte(t.state());
        Varints.writeUnsigned(out, t.connection());
        Frames.writeString(out, t.clientAddress());
    }

    /** Reads the body of a {@link Wire#RUNNING_LIST} (after its type byte and request id). */
    public static RunningList readRunning(ByteBuf in) {
        long total = Varints.readUnsigned(in);
        int n = Varints.readBoundedInt(in, in.readableBytes(), "listed transactions");
        List<RunningTransaction> listed = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            long startTs = Varints.readUnsigned(in);
            byte state = in.readByte();
            int connection = Varints.readBoundedInt(in, Integer.MAX_VALUE, "connection number");
            listed.add(new RunningTransaction(startTs, state, connection, Frames.readString(in, MAX_NAME_BYTES)));
        }
        return new RunningList(total, listed);
    }
}
