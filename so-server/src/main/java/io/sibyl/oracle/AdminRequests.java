package io.sibyl.oracle;

import io.netty.buffer.ByteBuf;
import io.sibyl.protocol.AdminReplies;

import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Supplier;

/**
 * Answers the admin role's {@code ORACLE_STATUS_QUERY} and {@code RUNNING_QUERY} ({@code bin/sibyl status} and
 * {@code transactions}) from the state, on the thread that owns it. Kept out of the {@link Sequencer} so that the
 * request path stays as it was: these requests are rare, and may walk every running transaction.
 */
final class AdminRequests {
    /** Most transactions one RUNNING_LIST carries, whatever the limit asked: keeps the reply far below a frame. */
    static final int MAX_LISTED = 10_000;

    private final OracleState state;
    /** Open connections by number, with their remote address; none until the server says where to find them. */
    private Supplier<Map<Integer, String>> connections = Map::of;
    /** The background range sweep's figures (range.sweep.*); none until the server says where to find them. */
    private Supplier<Map<String, Long>> rangeSweep = Map::of;

    AdminRequests(OracleState state) {
        this.state = state;
    }

    void describeConnectionsWith(Supplier<Map<Integer, String>> connections) {
        this.connections = connections;
    }

    void describeRangeSweepWith(Supplier<Map<String, Long>> figures) {
        this.rangeSweep = figures;
    }

    /**
     * The figures of {@code bin/sibyl status}, named as in docs/protocol.md ("Admin requests"); the order is the one
     * they are printed in.
     */
    void status(ByteBuf out, long id) {
        Map<String, Long> figures = new LinkedHashMap<>();
        figures.put("last.timestamp", state.clock());
        figures.put("t.max", state.tMax());
        figures.put("low.watermark", state.lowWatermark());
        figures.put("running.transactions", (long) state.running().live());
        figures.put("max.running.transactions", (long) state.running().capacity());
        figures.put("aborted.transactions", (long) state.aborted().size());
        figures.put("max.aborted.transactions", (long) state.aborted().limit());
        figures.put("aborted.ranges", (long) state.aborted().ranges().size());
        figures.put("recent.commits", (long) state.recentCommitCount());
        figures.put("commits", state.counts().commits());
        figures.put("aborts", state.counts().aborts());
        figures.put("connections", (long) connections.get().size());
        long[] history = state.readHorizon().historyFigures();
        figures.put("history.points", history[0]);
        figures.put("history.bytes", history[1]);
        figures.putAll(rangeSweep.get());
        AdminReplies.writeStatus(out, id, figures);
    }

    /** The oldest {@code limit} (at most {@link #MAX_LISTED}) transactions not finished, and how many there are. */
    void running(ByteBuf out, long id, long limit) {
        int max = (int) Math.min(Math.max(limit, 0), MAX_LISTED);
        Map<Integer, String> addresses = connections.get();
        List<AdminReplies.RunningTransaction> listed = new ArrayList<>();
        if (max > 0) {
            // RunningTransactions' state codes are the wire's (AdminReplies.RUNNING, ...).
            state.running().forEachLive((ts, owner, txState) -> {
                listed.add(new AdminReplies.RunningTransaction(ts, (byte) txState, owner,
                        addresses.getOrDefault(owner, "(closed)")));
                return listed.size() < max;
            });
        }
        AdminReplies.writeRunningHeader(out, id, state.running().live(), listed.size());
        for (AdminReplies.RunningTransaction t : listed) {
            AdminReplies.writeRunningTransaction(out, t);
        }
    }
}
