package io.sibyl.protocol.settings;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The settings of one settings object {@code C}, in the order {@code --help} lists them: each is declared here once
 * ({@link Setting}), and the list of keys, the refusal of unknown ones and {@code --help} follow from the declarations.
 */
public final class SettingsSpec<C> {
    private final String what;
    private final String docsPage;
    private final List<Setting<C, ?>> settings = new ArrayList<>();

    /**
     * {@code what}: whose settings, as an unknown key's error names them ("oracle"); {@code docsPage}: where they are
     * explained, named by every error message about them.
     */
    public SettingsSpec(String what, String docsPage) {
        this.what = what;
        this.docsPage = docsPage;
    }

    /** A whole-number setting that fits an int. */
    public Setting<C, Integer> integer(String key, int dflt, Range range, Function<C, Integer> current, String doc) {
        return add(key, Setting.INT, dflt, range, current, c -> doc);
    }

    /** A whole-number setting whose text for {@code --help} depends on other settings ({@code "now 512"}). */
    public Setting<C, Integer> integer(String key, int dflt, Range range, Function<C, Integer> current,
                                Function<C, String> doc) {
        return add(key, Setting.INT, dflt, range, current, doc);
    }

    /** A whole-number setting. */
    public Setting<C, Long> longInteger(String key, long dflt, Range range, Function<C, Long> current, String doc) {
        return add(key, Setting.LONG, dflt, range, current, c -> doc);
    }

    /** A true-or-false setting. */
    public Setting<C, Boolean> bool(String key, boolean dflt, Function<C, Boolean> current, String doc) {
        return add(key, Setting.BOOLEAN, dflt, null, current, c -> doc);
    }

    /** A text setting, read as written. */
    public Setting<C, String> text(String key, String dflt, Function<C, String> current, String doc) {
        return add(key, Setting.TEXT, dflt, null, current, c -> doc);
    }

    /** A file name or a list, read without the blanks around it. */
    public Setting<C, String> trimmed(String key, String dflt, Function<C, String> current, String doc) {
        return add(key, Setting.TRIMMED, dflt, null, current, c -> doc);
    }

    /** A setting of any other type: {@code type} reads and writes its text. */
    public <T> Setting<C, T> of(String key, Setting.Type<T> type, T dflt, Function<C, T> current, String doc) {
        return add(key, type, dflt, null, current, c -> doc);
    }

    private <T> Setting<C, T> add(String key, Setting.Type<T> type, T dflt, Range range, Function<C, T> current,
                                  Function<C, String> doc) {
        Setting<C, T> s = new Setting<>(key, type, dflt, range, current, doc, docsPage);
        settings.add(s);
        return s;
    }

    /** Every setting declared, in declaration order. */
    public List<Setting<C, ?>> settings() {
        return Collections.unmodifiableList(settings);
    }

    /** Every key and its current value in {@code values}, with what it is for: the list so-server prints at start. */
    public Map<String, String> describe(C values) {
        Map<String, String> m = new LinkedHashMap<>();
        for (Setting<C, ?> s : settings) {
            m.put(s.key(), s.describe(values));
        }
        return m;
    }

    /**
     * Refuses a key of {@code p} that {@code ours} claims but nobody declared, listing the known ones (and
     * {@code alsoKnown}, words for those declared elsewhere) so that a typo is easy to see.
     */
    public void refuseUnknown(Properties p, Predicate<String> ours, String alsoKnown) {
        List<String> known = settings.stream().map(Setting::key).toList();
        for (String key : p.stringPropertyNames()) {
            if (ours.test(key) && !known.contains(key)) {
                throw new IllegalArgumentException("unknown " + what + " setting '" + key + "'; known settings: "
                        + known + alsoKnown);
            }
        }
    }
}
