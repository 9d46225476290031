package io.sibyl.client;

import io.sibyl.client.SiHistory.Op;
import io.sibyl.client.SiHistory.Outcome;
import io.sibyl.client.SiHistory.Tx;

import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.EnumMap;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;

/**
 * Checks that a list-append history ({@link SiHistory}) is snapshot isolation, in the manner of Elle (Kingsbury and
 * Alvaro): every read returns a whole list, so the longest read of a key reveals the order of all appends to it that
 * anyone saw; from that order come write-write, write-read and read-write (anti-)dependencies between transactions,
 * and SI forbids exactly the dependency cycles that lack two consecutive read-write edges. Direct checks on the reads
 * (aborted or intermediate data, one snapshot per transaction, lost updates, real-time order) give precise messages
 * for what the cycles would also show.
 */
final class SiHistoryChecker {
    /** What can be wrong with a history. */
    enum Anomaly {
        /** An element nobody appended, appended to another key, or twice in one list. */
        GARBLED,
        /** Two reads of a key that are not prefixes of one another: one version order cannot explain them. */
        INCOMPATIBLE_ORDER,
        /** A transaction's read does not end with its own earlier appends to the key. */
        OWN_WRITES,
        /** A committed append missing from its key's final list. */
        LOST_WRITE,
        /** Two committed appends to a key from the same snapshot of it, or one placed after data it did not read. */
        LOST_UPDATE,
        /** A read of an aborted transaction's append. */
        G1A,
        /** A read of a list ending in an append that was not its writer's last to that key. */
        G1B,
        /** One transaction's reads are not one snapshot: a writer seen in one read and missed in another. */
        READ_SKEW,
        /** A cycle of write-write edges. */
        G0,
        /** A cycle of write-write and write-read edges. */
        G1C,
        /** A cycle with exactly one read-write edge. */
        G_SINGLE,
        /** A cycle with several read-write edges, no two of them consecutive. */
        G_NONADJACENT,
        /** A transaction that began after another's commit returned did not see its appends. */
        REAL_TIME,
        /**
         * A cycle with two consecutive read-write edges (write skew and its relatives): snapshot isolation allows it,
         * serializability does not. Looked for only by {@link #checkSerializable}.
         */
        G2
    }

    /** One anomaly found, with the transactions and keys that show it. */
    record Finding(Anomaly anomaly, String detail) {
        @Override
        public String toString() {
            return anomaly + ": " + detail;
        }
    }

    /** The outcome of a check: findings (at most a few examples of each kind) and what was checked. */
    record Report(List<Finding> findings, Map<Anomaly, Integer> counts, int transactions, int committed,
                  int aborted, int unknown, int unknownSeen, int ops, int reads, int appends, int edges) {
        boolean ok() {
            return findings.isEmpty();
        }

        boolean has(Anomaly a) {
            return counts.getOrDefault(a, 0) > 0;
        }

        String summary() {
            return transactions + " transactions (" + committed + " committed, " + aborted + " aborted, " + unknown
                    + " unknown of which " + unknownSeen + " seen committed), " + ops + " ops (" + reads + " reads, "
                    + appends + " appends), " + edges + " dependency edges" + (ok() ? ", SI" : ", anomalies " + counts);
        }
    }

    private static final int EXAMPLES = 8;

    /** A read with the transaction's own earlier appends removed: the part that comes from its snapshot. */
    private record ExtRead(Tx tx, int key, List<Long> list) {
    }

    private record Append(Tx tx, int key) {
    }

    private final List<Finding> findings = new ArrayList<>();
    private final Map<Anomaly, Integer> counts = new EnumMap<>(Anomaly.class);

    private void fail(Anomaly a, String detail) {
        int n = counts.merge(a, 1, Integer::sum);
        if (n <= EXAMPLES) {
            findings.add(new Finding(a, detail));
        }
    }

    static Report check(Collection<Tx> history) {
        return new SiHistoryChecker(false).run(history);
    }

    /** As {@link #check}, and every cycle of dependencies is an anomaly: the history must be serializable. */
    static Report checkSerializable(Collection<Tx> history) {
        return new SiHistoryChecker(true).run(history);
    }

    /** Any cycle is forbidden, not only those without two consecutive rw edges. */
    private final boolean serializable;

    private SiHistoryChecker(boolean serializable) {
        this.serializable = serializable;
    }

    private Report run(Collection<Tx> history) {
        // 1. Who appended what; each transaction's appends per key, in order.
        Map<Long, Append> writer = new HashMap<>();
        Map<Tx, Map<Integer, List<Long>>> appendsOf = new HashMap<>();
        int ops = 0;
        int reads = 0;
        int appends = 0;
        for (Tx t : history) {
            for (Op op : t.ops()) {
                ops++;
                if (op.append()) {
                    appends++;
                    if (writer.putIfAbsent(op.element(), new Append(t, op.key())) != null) {
                        fail(Anomaly.GARBLED, "element " + op.element() + " appended twice (a broken workload)");
                    }
                    appendsOf.computeIfAbsent(t, x -> new HashMap<>())
                            .computeIfAbsent(op.key(), x -> new ArrayList<>()).add(op.element());
                } else {
                    reads++;
                }
            }
        }

        // 2. Reads from the snapshot: strip the transaction's own appends, which it must see at the end of the list.
        //    The read just before a transaction's first append to a key is the snapshot that append builds on.
        List<ExtRead> ext = new ArrayList<>();
        Map<Tx, Map<Integer, List<Long>>> basis = new HashMap<>();
        for (Tx t : history) {
            Map<Integer, List<Long>> own = new HashMap<>();
            Map<Integer, List<Long>> lastRead = new HashMap<>();
            for (Op op : t.ops()) {
                List<Long> mine = own.computeIfAbsent(op.key(), x -> new ArrayList<>());
                if (op.append()) {
                    if (mine.isEmpty() && lastRead.containsKey(op.key())) {
                        basis.computeIfAbsent(t, x -> new HashMap<>()).put(op.key(), lastRead.get(op.key()));
                    }
                    mine.add(op.element());
                    continue;
                }
                List<Long> l = op.list();
                int n = l.size() - mine.size();
                if (n < 0 || !l.subList(n, l.size()).equals(mine)) {
                    fail(Anomaly.OWN_WRITES, "T" + t.id() + " read k" + op.key() + "=" + l + " after appending " + mine
                            + ": " + t);
                    n = Math.max(0, n);
                }
                List<Long> e = l.subList(0, n); // a view: the lists are immutable
                ext.add(new ExtRead(t, op.key(), e));
                if (mine.isEmpty()) {
                    lastRead.put(op.key(), e);
                }
            }
        }

        // 3. An unknown outcome counts as committed once another transaction saw one of its appends.
        Set<Tx> committed = new HashSet<>();
        int unknown = 0;
        int aborted = 0;
        for (Tx t : history) {
            if (t.outcome() == Outcome.COMMITTED) {
                committed.add(t);
            } else if (t.outcome() == Outcome.UNKNOWN) {
                unknown++;
            } else {
                aborted++;
            }
        }
        int knownCommitted = committed.size();
        for (ExtRead r : ext) {
            for (long x : r.list()) {
                Append a = writer.get(x);
                if (a != null && a.tx().outcome() == Outcome.UNKNOWN && a.tx() != r.tx()) {
                    committed.add(a.tx());
                }
            }
        }
        int unknownSeen = committed.size() - knownCommitted;

        // 4. Version order per key: the longest read; every other read must be a prefix of it.
        Map<Integer, List<Long>> order = new TreeMap<>();
        Map<Integer, ExtRead> longest = new HashMap<>();
        for (ExtRead r : ext) {
            ExtRead l = longest.get(r.key());
            if (l == null || r.list().size() > l.list().size()) {
                longest.put(r.key(), r);
            }
        }
        longest.forEach((k, r) -> order.put(k, r.list()));
        Set<Integer> incompatible = new HashSet<>();
        for (ExtRead r : ext) {
            List<Long> o = order.get(r.key());
            if (!o.subList(0, r.list().size()).equals(r.list())) {
                incompatible.add(r.key());
                fail(Anomaly.INCOMPATIBLE_ORDER, "k" + r.key() + ": T" + r.tx().id() + " read " + r.list()
                        + ", T" + longest.get(r.key()).tx().id() + " read " + o + " (not a prefix)");
            }
        }
        Map<Long, Integer> position = new HashMap<>();
        for (Map.Entry<Integer, List<Long>> e : order.entrySet()) {
            List<Long> o = e.getValue();
            for (int i = 0; i < o.size(); i++) {
                long x = o.get(i);
                Append a = writer.get(x);
                if (a == null || a.key() != e.getKey()) {
                    fail(Anomaly.GARBLED, "k" + e.getKey() + " holds " + x + ", which "
                            + (a == null ? "nobody appended" : "T" + a.tx().id() + " appended to k" + a.key()));
                }
                if (position.putIfAbsent(x, i) != null) {
                    fail(Anomaly.GARBLED, "k" + e.getKey() + " holds " + x + " twice: " + o);
                }
            }
        }

        // 5. Reads of aborted appends (G1a) and of a writer's intermediate state (G1b).
        for (ExtRead r : ext) {
            for (long x : r.list()) {
                Append a = writer.get(x);
                if (a != null && a.tx().outcome() == Outcome.ABORTED) {
                    fail(Anomaly.G1A, "T" + r.tx().id() + " read k" + r.key() + "=" + r.list() + " with " + x
                            + " of aborted " + a.tx());
                }
            }
            if (!r.list().isEmpty()) {
                long last = r.list().get(r.list().size() - 1);
                Append a = writer.get(last);
                if (a != null && a.tx() != r.tx() && a.key() == r.key()) {
                    List<Long> its = appendsOf.get(a.tx()).get(r.key());
                    if (its.get(its.size() - 1) != last) {
                        fail(Anomaly.G1B, "T" + r.tx().id() + " read k" + r.key() + "=" + r.list() + ", ending in "
                                + last + " where T" + a.tx().id() + " went on to append " + its);
                    }
                }
            }
        }

        // 6. Every committed append is in its key's list, right after the snapshot its transaction read.
        Map<Integer, Map<List<Long>, Tx>> sameBasis = new HashMap<>();
        for (Tx t : committed) {
            Map<Integer, List<Long>> mine = appendsOf.getOrDefault(t, Map.of());
            for (Map.Entry<Integer, List<Long>> e : mine.entrySet()) {
                int k = e.getKey();
                List<Long> o = order.getOrDefault(k, List.of());
                for (long x : e.getValue()) {
                    if (!position.containsKey(x)) {
                        fail(Anomaly.LOST_WRITE, "k" + k + " ends as " + o + " without " + x + " of " + t);
                    }
                }
                Integer p = position.get(e.getValue().get(0));
                for (int i = 1; p != null && i < e.getValue().size(); i++) {
                    Integer q = position.get(e.getValue().get(i));
                    if (q != null && q != p + i) {
                        fail(Anomaly.GARBLED, "T" + t.id() + "'s appends " + e.getValue() + " to k" + k
                                + " are not together in " + o);
                        break;
                    }
                }
                List<Long> b = basis.getOrDefault(t, Map.of()).get(k);
                if (b == null) {
                    continue; // a blind append (hand-made histories): no snapshot to compare with
                }
                Tx other = sameBasis.computeIfAbsent(k, x -> new HashMap<>()).putIfAbsent(b, t);
                if (other != null) {
                    fail(Anomaly.LOST_UPDATE, "T" + other.id() + " and T" + t.id() + " both read k" + k + "=" + b
                            + " and both appended to it: " + other + " / " + t);
                }
                if (p != null && p != b.size() && !incompatible.contains(k)) {
                    fail(Anomaly.LOST_UPDATE, "T" + t.id() + " read k" + k + "=" + b + " but its append "
                            + e.getValue().get(0) + " is at position " + p + " of " + o
                            + ": committed over appends it did not see");
                }
            }
        }

        // 7. One snapshot per transaction: no committed writer both seen (in one read) and missed (in another, or
        //    in part of the same list). Aborted transactions read snapshots too. Linear in the reads: a writer's
        //    appends to a key are contiguous (checked in 6), so a list cut through one shows at its end, and a
        //    writer seen in k1 but missed in k2 is found from the writers of both sorted by position in k1.
        Map<Integer, Tx[]> writerAt = new HashMap<>();
        Map<Tx, Map<Integer, int[]>> span = new HashMap<>(); // committed writer -> key -> {first, last} position
        for (Map.Entry<Integer, List<Long>> e : order.entrySet()) {
            List<Long> o = e.getValue();
            Tx[] w = new Tx[o.size()];
            for (int i = 0; i < o.size(); i++) {
                Append a = writer.get(o.get(i));
                if (a != null && committed.contains(a.tx())) {
                    w[i] = a.tx();
                    int[] fl = span.computeIfAbsent(a.tx(), x -> new HashMap<>()).computeIfAbsent(e.getKey(),
                            x -> new int[] {Integer.MAX_VALUE, -1});
                    fl[0] = Math.min(fl[0], i);
                    fl[1] = Math.max(fl[1], i);
                }
            }
            writerAt.put(e.getKey(), w);
        }
        Map<Integer, Set<Tx>> keyWriters = new HashMap<>();
        span.forEach((t, keys) -> keys.keySet().forEach(k -> keyWriters.computeIfAbsent(k, x -> new HashSet<>())
                .add(t)));
        Map<Long, PairIndex> pairs = new HashMap<>();
        Map<Tx, List<ExtRead>> readsOf = new LinkedHashMap<>();
        for (ExtRead r : ext) {
            readsOf.computeIfAbsent(r.tx(), x -> new ArrayList<>()).add(r);
        }
        for (Map.Entry<Tx, List<ExtRead>> e : readsOf.entrySet()) {
            Tx t = e.getKey();
            List<ExtRead> rs = e.getValue();
            for (ExtRead r : rs) {
                Tx[] w = writerAt.get(r.key());
                int n = r.list().size();
                if (n > 0 && n < w.length && w[n - 1] != null && w[n - 1] == w[n] && w[n] != t) {
                    fail(Anomaly.READ_SKEW, "T" + t.id() + " read k" + r.key() + "=" + r.list() + ", part of T"
                            + w[n].id() + "'s appends (k" + r.key() + " goes on as " + order.get(r.key()) + "): "
                            + t + " / " + w[n]);
                }
            }
            for (ExtRead r1 : rs) {
                for (ExtRead r2 : rs) {
                    if (r1 == r2) {
                        continue;
                    }
                    Tx both = null;
                    if (r1.key() == r2.key()) {
                        if (r1.list().size() > r2.list().size()) {
                            both = writerAt.get(r1.key())[r2.list().size()]; // read by r1, not by r2
                        }
                    } else {
                        long pk = ((long) r1.key() << 32) | (r2.key() & 0xffffffffL);
                        both = pairs.computeIfAbsent(pk, x -> new PairIndex(r1.key(), r2.key(), keyWriters, span))
                                .seenInFirstMissedInSecond(r1.list().size(), r2.list().size());
                    }
                    if (both != null && both != t) {
                        fail(Anomaly.READ_SKEW, "T" + t.id() + " saw T" + both.id() + " in k" + r1.key() + "="
                                + r1.list() + " but not in k" + r2.key() + "=" + r2.list() + " (k" + r2.key()
                                + " goes on as " + order.get(r2.key()) + "): " + t + " / " + both);
                    }
                }
            }
        }

        // 8. Dependency graph on committed transactions, and cycles without two consecutive rw edges.
        Graph g = new Graph(serializable);
        for (Map.Entry<Integer, List<Long>> e : order.entrySet()) {
            List<Long> o = e.getValue();
            for (int i = 1; i < o.size(); i++) {
                Append a = writer.get(o.get(i - 1));
                Append b = writer.get(o.get(i));
                if (a != null && b != null && a.tx() != b.tx() && committed.contains(a.tx())
                        && committed.contains(b.tx())) {
                    g.add(a.tx(), b.tx(), Graph.WW, "k" + e.getKey());
                }
            }
        }
        for (ExtRead r : ext) {
            if (!committed.contains(r.tx())) {
                continue;
            }
            List<Long> o = order.get(r.key());
            int n = r.list().size();
            if (n > 0) {
                Append a = writer.get(r.list().get(n - 1));
                if (a != null && a.tx() != r.tx() && committed.contains(a.tx())) {
                    g.add(a.tx(), r.tx(), Graph.WR, "k" + r.key());
                }
            }
            // The first committed append after what it read, by another transaction: it overwrote this snapshot.
            for (int i = n; i < o.size(); i++) {
                Append b = writer.get(o.get(i));
                if (b == null || b.tx() == r.tx() || !committed.contains(b.tx())) {
                    continue;
                }
                g.add(r.tx(), b.tx(), Graph.RW, "k" + r.key());
                break;
            }
        }
        for (List<Graph.Step> cycle : g.forbiddenCycles(EXAMPLES)) {
            int rw = 0;
            boolean allWw = true;
            StringBuilder sb = new StringBuilder();
            for (Graph.Step s : cycle) {
                rw += s.type() == Graph.RW ? 1 : 0;
                allWw &= s.type() == Graph.WW;
                sb.append("T").append(s.from().id()).append(" -").append(Graph.NAMES[s.type()]).append("(")
                        .append(s.why()).append(")-> ");
            }
            sb.append("T").append(cycle.get(0).from().id()).append("; ");
            cycle.forEach(s -> sb.append("\n    ").append(s.from()));
            Anomaly a = rw == 0 ? (allWw ? Anomaly.G0 : Anomaly.G1C) : rw == 1 ? Anomaly.G_SINGLE
                    : hasAdjacentRw(cycle) ? Anomaly.G2 : Anomaly.G_NONADJACENT;
            fail(a, sb.toString());
        }

        // 9. Real time: a transaction begun after another's commit returned reads its appends. The earliest
        //    acknowledgement among the appends after each position tells at once whether a read missed one.
        Map<Integer, List<ExtRead>> readsByKey = new HashMap<>();
        for (ExtRead r : ext) {
            readsByKey.computeIfAbsent(r.key(), x -> new ArrayList<>()).add(r);
        }
        for (Map.Entry<Integer, Tx[]> e : writerAt.entrySet()) {
            Tx[] w = e.getValue();
            long[] minAck = new long[w.length + 1];
            minAck[w.length] = Long.MAX_VALUE;
            for (int i = w.length - 1; i >= 0; i--) {
                minAck[i] = Math.min(minAck[i + 1], w[i] == null ? Long.MAX_VALUE : w[i].ackNanos());
            }
            for (ExtRead r : readsByKey.get(e.getKey())) {
                if (minAck[r.list().size()] >= r.tx().invokeNanos()) {
                    continue;
                }
                for (int i = r.list().size(); i < w.length; i++) {
                    // A read-only transaction from the replica may miss another client's commits for its staleness.
                    long mustSeeBefore = w[i] == null || w[i].client().equals(r.tx().client()) ? r.tx().invokeNanos()
                            : r.tx().invokeNanos() - r.tx().staleNanos();
                    if (w[i] != null && w[i] != r.tx() && w[i].ackNanos() < mustSeeBefore) {
                        fail(Anomaly.REAL_TIME, "T" + r.tx().id() + " began " + (r.tx().invokeNanos()
                                - w[i].ackNanos()) / 1000 + " us after T" + w[i].id() + " committed"
                                + (r.tx().staleNanos() == 0 ? "" : " (its staleness bound: "
                                + r.tx().staleNanos() / 1000 + " us)") + ", yet read k"
                                + r.key() + "=" + r.list() + " without its " + order.get(r.key()).get(i) + ": "
                                + r.tx() + " / " + w[i]);
                        break;
                    }
                }
            }
        }

        return new Report(List.copyOf(findings), new EnumMap<>(counts), history.size(), knownCommitted, aborted,
                unknown, unknownSeen, ops, reads, appends, g.edges());
    }

    /**
     * The committed writers of both keys {@code k1} and {@code k2}, sorted by their last position in k1, with the
     * running maximum of their first position in k2: whether some writer lies within a read of k1 and beyond a read
     * of k2 is one binary search.
     */
    private static final class PairIndex {
        private final int[] lastInFirst;
        private final int[] maxFirstInSecond;
        private final Tx[] argmax;

        PairIndex(int k1, int k2, Map<Integer, Set<Tx>> keyWriters, Map<Tx, Map<Integer, int[]>> span) {
            List<Object[]> rows = new ArrayList<>();
            for (Tx t : keyWriters.getOrDefault(k1, Set.of())) {
                int[] a = span.get(t).get(k1);
                int[] b = span.get(t).get(k2);
                if (b != null) {
                    rows.add(new Object[] {a[1], b[0], t});
                }
            }
            rows.sort((x, y) -> Integer.compare((int) x[0], (int) y[0]));
            lastInFirst = new int[rows.size()];
            maxFirstInSecond = new int[rows.size()];
            argmax = new Tx[rows.size()];
            for (int i = 0; i < rows.size(); i++) {
                lastInFirst[i] = (int) rows.get(i)[0];
                int f = (int) rows.get(i)[1];
                if (i == 0 || f > maxFirstInSecond[i - 1]) {
                    maxFirstInSecond[i] = f;
                    argmax[i] = (Tx) rows.get(i)[2];
                } else {
                    maxFirstInSecond[i] = maxFirstInSecond[i - 1];
                    argmax[i] = argmax[i - 1];
                }
            }
        }

        /** A writer wholly inside the first {@code n1} of k1 with an append at or beyond {@code n2} in k2, or null. */
        Tx seenInFirstMissedInSecond(int n1, int n2) {
            int lo = 0;
            int hi = lastInFirst.length; // first index with lastInFirst >= n1
            while (lo < hi) {
                int mid = (lo + hi) >>> 1;
                if (lastInFirst[mid] < n1) {
                    lo = mid + 1;
                } else {
                    hi = mid;
                }
            }
            return lo > 0 && maxFirstInSecond[lo - 1] >= n2 ? argmax[lo - 1] : null;
        }
    }

    /** True if two consecutive steps of {@code cycle} (wrapping around) are both rw. */
    private static boolean hasAdjacentRw(List<Graph.Step> cycle) {
        for (int i = 0; i < cycle.size(); i++) {
            if (cycle.get(i).type() == Graph.RW && cycle.get((i + 1) % cycle.size()).type() == Graph.RW) {
                return true;
            }
        }
        return false;
    }

    /**
     * Dependency graph with typed edges. SI allows a cycle only if it has two consecutive rw edges (Fekete et al.):
     * along ww/wr edges the commit of one precedes the start of the next, along rw the start of one precedes the
     * commit of the next, so a closed walk without two rw edges in a row would move strictly forward in time. The
     * search runs on states (transaction, arrived by rw?), where an rw edge may not leave a state arrived by rw: a
     * cycle of states is a forbidden cycle.
     */
    private static final class Graph {
        static final int WW = 0;
        static final int WR = 1;
        static final int RW = 2;
        static final String[] NAMES = {"ww", "wr", "rw"};

        record Step(Tx from, Tx to, int type, String why) {
        }

        /** Whether a cycle through two consecutive rw edges counts (serializability) or not (snapshot isolation). */
        private final boolean anyCycle;
        private final Map<Tx, Integer> index = new HashMap<>();
        private final List<Tx> nodes = new ArrayList<>();
        private final List<Map<Integer, Step>> out = new ArrayList<>(); // per node: target -> best step
        private int edges;

        Graph(boolean anyCycle) {
            this.anyCycle = anyCycle;
        }

        int node(Tx t) {
            return index.computeIfAbsent(t, x -> {
                nodes.add(x);
                out.add(new HashMap<>());
                return nodes.size() - 1;
            });
        }

        void add(Tx from, Tx to, int type, String why) {
            Map<Integer, Step> m = out.get(node(from));
            int target = node(to);
            Step old = m.get(target);
            // One step per pair: a non-rw type wins, it constrains more (and may follow an rw edge).
            if (old == null) {
                edges++;
            }
            if (old == null || (old.type() == RW && type != RW)) {
                m.put(target, new Step(from, to, type, why));
            }
        }

        int edges() {
            return edges;
        }

        /** Successor states of state s = 2 * node + (arrived by rw ? 1 : 0). */
        private List<int[]> next(int s) {
            List<int[]> r = new ArrayList<>();
            boolean byRw = (s & 1) == 1;
            for (Map.Entry<Integer, Step> e : out.get(s >> 1).entrySet()) {
                int type = e.getValue().type();
                if (type != RW) {
                    r.add(new int[] {e.getKey() * 2, type});
                } else if (!byRw || anyCycle) {
                    r.add(new int[] {e.getKey() * 2 + 1, type});
                }
            }
            return r;
        }

        /** Up to {@code limit} forbidden cycles, one per strongly connected component of states (iterative Tarjan). */
        List<List<Step>> forbiddenCycles(int limit) {
            int n = nodes.size() * 2;
            int[] idx = new int[n];
            int[] low = new int[n];
            boolean[] onStack = new boolean[n];
            java.util.Arrays.fill(idx, -1);
            ArrayDeque<Integer> stack = new ArrayDeque<>();
            List<List<Step>> cycles = new ArrayList<>();
            int counter = 0;
            for (int root = 0; root < n && cycles.size() < limit; root++) {
                if (idx[root] >= 0) {
                    continue;
                }
                ArrayDeque<int[]> work = new ArrayDeque<>(); // {state, position in its successor list}
                Map<Integer, List<int[]>> succ = new HashMap<>();
                work.push(new int[] {root, 0});
                idx[root] = low[root] = counter++;
                stack.push(root);
                onStack[root] = true;
                while (!work.isEmpty()) {
                    int[] top = work.peek();
                    int v = top[0];
                    List<int[]> s = succ.computeIfAbsent(v, this::next);
                    if (top[1] < s.size()) {
                        int w = s.get(top[1]++)[0];
                        if (idx[w] < 0) {
                            idx[w] = low[w] = counter++;
                            stack.push(w);
                            onStack[w] = true;
                            work.push(new int[] {w, 0});
                        } else if (onStack[w]) {
                            low[v] = Math.min(low[v], idx[w]);
                        }
                        continue;
                    }
                    work.pop();
                    succ.remove(v);
                    if (!work.isEmpty()) {
                        int u = work.peek()[0];
                        low[u] = Math.min(low[u], low[v]);
                    }
                    if (low[v] == idx[v]) {
                        Set<Integer> scc = new HashSet<>();
                        int w;
                        do {
                            w = stack.pop();
                            onStack[w] = false;
                            scc.add(w);
                        } while (w != v);
                        List<Step> c = cycleThrough(v, scc);
                        if (c != null && cycles.size() < limit) {
                            cycles.add(c);
                        }
                    }
                }
            }
            return cycles;
        }

        /** A shortest cycle of states from {@code start} back to it inside {@code scc}, as steps; null if none. */
        private List<Step> cycleThrough(int start, Set<Integer> scc) {
            Map<Integer, Integer> parent = new HashMap<>();
            ArrayDeque<Integer> queue = new ArrayDeque<>();
            queue.add(start);
            while (!queue.isEmpty()) {
                int v = queue.poll();
                for (int[] e : next(v)) {
                    int w = e[0];
                    if (!scc.contains(w)) {
                        continue;
                    }
                    if (w == start) {
                        List<Step> path = new ArrayList<>();
                        int cur = v;
                        int to = w;
                        while (true) {
                            path.add(0, out.get(cur >> 1).get(to >> 1));
                            if (cur == start) {
                                break;
                            }
                            to = cur;
                            cur = parent.get(cur);
                        }
                        return path;
                    }
                    if (!parent.containsKey(w)) {
                        parent.put(w, v);
                        queue.add(w);
                    }
                }
            }
            return null;
        }
    }
}
