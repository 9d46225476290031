package io.sibyl.client;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

/** A recorded list-append history: transactions of reads (whole lists) and appends (unique elements) on integer keys. */
final class SiHistory {
    /** How a transaction ended, as far as its client knows. */
    enum Outcome {
        COMMITTED, ABORTED,
        /** The commit was sent and no answer came: it may have taken effect or not. */
        UNKNOWN
    }

    /**
     * One operation: a read of the whole list at {@code key} ({@code element} unused), or an append of the unique
     * {@code element} to it ({@code list} null). An append that read the list first is recorded as a read, then the
     * append: the read is what makes a lost update visible.
     */
    record Op(boolean append, int key, long element, List<Long> list) {
        static Op read(int key, List<Long> list) {
            return new Op(false, key, 0, List.copyOf(list));
        }

        static Op append(int key, long element) {
            return new Op(true, key, element, null);
        }

        @Override
        public String toString() {
            return append ? "append(k" + key + ", " + element + ")" : "read(k" + key + ")=" + list;
        }
    }

    /**
     * One transaction attempt. {@code invokeNanos}: wall clock (System.nanoTime) just before {@code begin()} was
     * called; {@code ackNanos}: just after {@code commit()} returned (Long.MAX_VALUE unless committed). Timestamps are
     * for the report only.
     */
    record Tx(int id, String thread, List<Op> ops, Outcome outcome, long invokeNanos, long ackNanos, long startTs,
              long commitTs, long staleNanos) {
        /** A transaction that must see every commit acknowledged before it began (staleness 0). */
        Tx(int id, String thread, List<Op> ops, Outcome outcome, long invokeNanos, long ackNanos, long startTs,
           long commitTs) {
            this(id, thread, ops, outcome, invokeNanos, ackNanos, startTs, commitTs, 0);
        }

        /**
         * The client a thread works for ("-clientN" in its name), whose own commits a read-only transaction sees
         * however stale it may be otherwise.
         */
        String client() {
            int at = thread.indexOf("-client");
            return at < 0 ? thread : thread.substring(at);
        }

        // Identity by id: the checker keys maps by transaction, and hashing every op list would cost seconds.
        @Override
        public boolean equals(Object o) {
            return o instanceof Tx t && t.id == id;
        }

        @Override
        public int hashCode() {
            return Integer.hashCode(id);
        }

        @Override
        public String toString() {
            return "T" + id + "[" + thread + ", " + outcome + ", start " + startTs + ", commit " + commitTs + "] "
                    + ops;
        }
    }

    /** Builds one transaction's record on the thread that runs it. */
    static final class Recorder {
        private static final AtomicInteger IDS = new AtomicInteger();
        final int id = IDS.incrementAndGet();
        final List<Op> ops = new ArrayList<>();
        final long invokeNanos = System.nanoTime();

        void read(int key, List<Long> list) {
            ops.add(Op.read(key, list));
        }

        void append(int key, long element) {
            ops.add(Op.append(key, element));
        }

        Tx finish(Outcome outcome, long startTs, long commitTs) {
            return finish(outcome, startTs, commitTs, 0);
        }

        /**
         * As {@link #finish(Outcome, long, long)} for a transaction allowed to miss other clients' commits acknowledged
         * less than {@code staleNanos} before it began (a read-only transaction begun from the replica).
         */
        Tx finish(Outcome outcome, long startTs, long commitTs, long staleNanos) {
            long ack = outcome == Outcome.COMMITTED ? System.nanoTime() : Long.MAX_VALUE;
            return new Tx(id, Thread.currentThread().getName(), List.copyOf(ops), outcome, invokeNanos, ack, startTs,
                    commitTs, staleNanos);
        }
    }

    /** The cell value for a list: its elements joined with commas (empty string for none). */
    static String encode(List<Long> list) {
        return list.stream().map(String::valueOf).collect(Collectors.joining(","));
    }

    static List<Long> decode(String value) {
        if (value == null || value.isEmpty()) {
            return Collections.emptyList();
        }
        List<Long> out = new ArrayList<>();
        for (String s : value.split(",")) {
            if (!s.isEmpty()) { // a fast-path append adds ",x", also to an empty list
                out.add(Long.parseLong(s));
            }
        }
        return out;
    }

    private SiHistory() {
    }
}
