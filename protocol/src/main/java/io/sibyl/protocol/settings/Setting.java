package io.sibyl.protocol.settings;

import java.util.Locale;
import java.util.Properties;
import java.util.function.BiFunction;
import java.util.function.Function;

/**
 * One setting declared once: its key, how its text is read, its default, the values it allows, where a settings
 * object {@code C} holds its current value, and what it is for. Reading it, checking it, listing it in
 * {@code --help} and naming it in errors all come from this declaration ({@link SettingsSpec} gathers them).
 *
 * @param <C> the settings object that holds the value (so that {@code --help} can show the current one)
 * @param <T> the value's type
 */
public final class Setting<C, T> {

    /**
     * How a setting's text becomes a value, and a value its text again. {@code parse} is given the key and the text,
     * and refuses text it cannot read with an {@link IllegalArgumentException} saying what the text must be ("must be
     * a whole number"); {@link #read} puts the key, the text and the docs page around it.
     */
    public record Type<T>(BiFunction<String, String, T> parse, Function<T, String> format) {
        /** {@code parse} is given the key and the text. */
        public static <T> Type<T> of(BiFunction<String, String, T> parse, Function<T, String> format) {
            return new Type<>(parse, format);
        }
    }

    static final Type<Long> LONG = Type.of(Setting::parseLong, String::valueOf);
    static final Type<Integer> INT = Type.of(Setting::parseInt, String::valueOf);
    static final Type<Boolean> BOOLEAN = Type.of(Setting::parseBoolean, String::valueOf);
    static final Type<String> TEXT = Type.of((key, text) -> text, text -> text);
    /** A file name or list: blanks around it are a typing accident, not part of it. */
    static final Type<String> TRIMMED = Type.of((key, text) -> text.trim(), text -> text);

    private final String key;
    private final Type<T> type;
    private final T defaultValue;
    private final Range range;
    private final Function<C, T> current;
    private final Function<C, String> doc;
    private final String docsPage;

    Setting(String key, Type<T> type, T defaultValue, Range range, Function<C, T> current, Function<C, String> doc,
            String docsPage) {
        this.key = key;
        this.type = type;
        this.defaultValue = defaultValue;
        this.range = range;
        this.current = current;
        this.doc = doc;
        this.docsPage = docsPage;
    }

    /** The key, as config files and {@code --key=value} flags write it. */
    public String key() {
        return key;
    }

    /** The value when the key is not set. */
    public T defaultValue() {
        return defaultValue;
    }

    /**
     * The value {@code p} sets, or the default; text of the wrong type is refused naming the key (the range is the
     * settings record's to check, as it is for values set in code).
     */
    public T read(Properties p) {
        String text = p.getProperty(key);
        return text == null ? defaultValue : parse(text);
    }

    /**
     * The value {@code lookup} gives the key, or the default when it gives null or blank text (an HBase
     * {@code Configuration}'s {@code get}, a map's); text of the wrong type is refused naming the key.
     */
    public T read(Function<String, String> lookup) {
        String text = lookup.apply(key);
        return text == null || text.isBlank() ? defaultValue : parse(text);
    }

    private T parse(String text) {
        try {
            return type.parse().apply(key, text);
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("invalid value '" + text.trim() + "' for " + key + ": " + e.getMessage()
                    + " (see " + docsPage + ")", e);
        }
    }

    /**
     * Refuses {@code value} when the declared range does not allow it, with a message that names the key, the allowed
     * values and the page that explains them. A setting declared without a range is its record's to check.
     */
    public void require(long value) {
        if (range != null && !range.contains(value)) {
            throw new IllegalArgumentException("invalid value " + value + " for " + key + ": must be " + range.rule()
                    + " (see " + docsPage + ")");
        }
    }

    /** The value {@code settings} hold and what the setting is for, as the settings list at start shows it. */
    String describe(C settings) {
        return valueText(settings) + "  # " + doc(settings);
    }

    /** The value {@code settings} hold, as a config file or a flag writes it (a secret masked). */
    public String valueText(C settings) {
        return type.format().apply(current.apply(settings));
    }

    /** What the setting is for, given the values of {@code settings} (some texts show a derived value). */
    public String doc(C settings) {
        return doc.apply(settings);
    }

    private static long parseLong(String key, String text) {
        try {
            return Long.parseLong(text.trim().replace("_", ""));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("must be a whole number");
        }
    }

    private static int parseInt(String key, String text) {
        long v = parseLong(key, text);
        if (v != (int) v) {
            // A silent cast would turn 4294967296 into 0 and pass the range checks with a value nobody asked for.
            throw new IllegalArgumentException("must be at most " + Integer.MAX_VALUE);
        }
        return (int) v;
    }

    private static boolean parseBoolean(String key, String text) {
        return switch (text.trim().toLowerCase(Locale.ROOT)) {
            case "true", "yes", "1" -> true;
            case "false", "no", "0" -> false;
            default -> throw new IllegalArgumentException("must be true or false");
        };
    }
}
