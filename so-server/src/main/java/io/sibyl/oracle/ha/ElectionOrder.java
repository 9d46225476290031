package io.sibyl.oracle.ha;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The order of the candidates in the election: the children of the election znode, ephemeral sequential znodes
 * named {@code candidate-NNNNNNNNNN}, by ZooKeeper's sequence number (the order they joined). The first is the
 * leader (or is taking over); the second is the first standby, the only one that watches the leader and deposes it
 * when it dies; the others wait for their turn.
 */
public final class ElectionOrder {
    /** Name prefix of a candidate's znode; ZooKeeper appends a 10-digit sequence number. */
    public static final String PREFIX = "candidate-";

    private final List<String> candidates;

    private ElectionOrder(List<String> candidates) {
        this.candidates = candidates;
    }

    /** Orders the election znode's children; names that are not candidates' are ignored. */
    public static ElectionOrder of(List<String> children) {
        List<String> c = new ArrayList<>();
        for (String name : children) {
            if (sequence(name) >= 0) {
                c.add(name);
            }
        }
        c.sort(Comparator.comparingLong(ElectionOrder::sequence).thenComparing(Comparator.naturalOrder()));
        return new ElectionOrder(List.copyOf(c));
    }

    /** The sequence number of a candidate's znode name, or -1 if it is not one. */
    static long sequence(String name) {
        if (!name.startsWith(PREFIX) || name.length() <= PREFIX.length()) {
            return -1;
        }
        String digits = name.substring(PREFIX.length());
        for (int i = 0; i < digits.length(); i++) {
            if (!Character.isDigit(digits.charAt(i))) {
                return -1;
            }
        }
        try {
            return Long.parseLong(digits);
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** 0 for the leader, 1 for the first standby, ...; -1 if {@code name} is not a candidate any more. */
    public int position(String name) {
        return candidates.indexOf(name);
    }

    /** The candidate just before {@code name}, or null if it is first or absent. */
    public String predecessor(String name) {
        int i = position(name);
        return i > 0 ? candidates.get(i - 1) : null;
    }

    /** Candidates in order. */
    public List<String> candidates() {
        return candidates;
    }
}
