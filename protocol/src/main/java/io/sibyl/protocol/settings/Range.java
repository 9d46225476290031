package io.sibyl.protocol.settings;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;

/**
 * The whole numbers a setting allows, and the words an error message uses for them ("1 to 65535", "0 (never) or 1000
 * to 86400000"): the range and its wording come from one place, so they cannot drift apart.
 *
 * @param min          least value of the range
 * @param max          largest value of the range ({@link Long#MAX_VALUE}: no limit)
 * @param leastMeaning what {@code min} means when it is special ("never"), or null
 * @param specials     values below the range also allowed, each with what it means
 */
public record Range(long min, long max, String leastMeaning, List<Special> specials) {

    /** A value outside the range that the setting allows for a meaning of its own ({@code 0}: no limit). */
    public record Special(long value, String meaning) {
    }

    public Range {
        specials = List.copyOf(specials);
    }

    /** From {@code min} to {@code max}, both included. */
    public static Range between(long min, long max) {
        return new Range(min, max, null, List.of());
    }

    /** {@code min} or more. */
    public static Range atLeast(long min) {
        return between(min, Long.MAX_VALUE);
    }

    /** This range, its least value worded with what it means: "0 (never) to 86400000". */
    public Range leastMeaning(String meaning) {
        return new Range(min, max, meaning, specials);
    }

    /** This range and {@code value} below it, which means {@code meaning}: "0 (no limit) or 1000 to 2592000000". */
    public Range orValue(long value, String meaning) {
        List<Special> more = new ArrayList<>(specials);
        more.add(new Special(value, meaning));
        more.sort(Comparator.comparingLong(Special::value));
        return new Range(min, max, leastMeaning, more);
    }

    /** True when the setting may take {@code value}. */
    public boolean contains(long value) {
        return value >= min && value <= max || specials.stream().anyMatch(s -> s.value() == value);
    }

    /** The allowed values in words, as an error message ends: "must be " + rule. */
    public String rule() {
        String least = leastMeaning == null ? Long.toString(min) : min + " (" + leastMeaning + ")";
        String range;
        if (max != Long.MAX_VALUE) {
            range = least + " to " + max;
        } else {
            range = leastMeaning == null ? "at least " + min : least + " or more";
        }
        if (specials.isEmpty()) {
            return range;
        }
        List<String> words = specials.stream().map(s -> s.value() + " (" + s.meaning() + ")").toList();
        return String.join(", ", words) + " or " + range;
    }
}
