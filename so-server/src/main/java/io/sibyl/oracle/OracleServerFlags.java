package io.sibyl.oracle;

import io.sibyl.protocol.settings.Setting;
import io.sibyl.protocol.settings.SettingsSpec;
import io.sibyl.oracle.journal.JournalKeys;
import io.sibyl.oracle.journal.JournalSettings;
import picocli.CommandLine;
import picocli.CommandLine.MissingParameterException;
import picocli.CommandLine.Model.ArgGroupSpec;
import picocli.CommandLine.Model.ArgSpec;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Model.OptionSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.UnmatchedArgumentException;

import java.nio.file.Path;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;

/**
 * so-server's command line on picocli: {@code --config FILE} and one {@code --KEY=VALUE} option per setting that
 * {@link OracleSettings} and {@link JournalKeys} declare, built from those declarations (picocli's programmatic API),
 * so that a new setting is a flag, listed by {@code --help} with its default and meaning, without a change here.
 * Values stay text: {@link OracleConfig#fromProperties} reads and checks them, as it does a config file's.
 */
final class OracleServerFlags {
    private static final String NAME = "so-server";
    /** Where a mistake's message sends the reader. */
    static final String SEE_HELP = "'so-server --help' lists every setting with its default";

    private final CommandLine commandLine;
    private final OptionSpec config;
    /** The option of each declared setting, by key. */
    private final Map<String, OptionSpec> settings = new LinkedHashMap<>();
    /** The default of each declared setting, as a flag writes it (a secret masked). */
    private final Map<String, String> defaultTexts = new LinkedHashMap<>();

    /** What a command line asks for: the usage, or an oracle with these settings. */
    record Parsed(boolean help, List<Path> configFiles, Properties flags) {
    }

    private OracleServerFlags() {
        CommandSpec spec = CommandSpec.create().name(NAME);
        spec.interpolateVariables(false); // the settings' texts are shown as written
        spec.usageMessage()
                .customSynopsis("so-server [--config FILE]... [--KEY=VALUE]...")
                .description("Runs the status oracle. Settings come from --KEY=VALUE flags ('--KEY VALUE' works"
                        + " too) and from --config files (Java properties, the same keys), the flags winning over"
                        + " the files and the first file over later ones; a key given twice takes the last value."
                        + " Prints 'READY port=N' once it accepts clients; SIGTERM stops it cleanly.", "")
                .sortOptions(false)
                .width(110)
                .footer("", "Every setting, its allowed values and how to choose it: docs/operations.md and"
                        + " docs/journal.md.");
        config = OptionSpec.builder("--config").paramLabel("FILE").type(List.class).auxiliaryTypes(String.class)
                .description("a properties file of settings (repeatable)").build();
        spec.addOption(config);
        spec.addOption(OptionSpec.builder("-h", "--help").usageHelp(true).description("this text").build());
        spec.addArgGroup(group("%nOracle settings (docs/operations.md):%n", OracleSettings.SPEC,
                OracleConfig.defaults()));
        spec.addArgGroup(group("%nJournal settings, used with --journal=bookkeeper (docs/journal.md):%n",
                JournalKeys.SPEC, JournalSettings.defaults()));
        commandLine = new CommandLine(spec)
                .setOverwrittenOptionsAllowed(true) // 'bin/so-bench' appends SO_SERVER_ARGS to its own --port=0
                .setExpandAtFiles(false);
    }

    /** A heading and one option per setting of {@code declared}, described with its value in {@code defaults}. */
    private <C> ArgGroupSpec group(String heading, SettingsSpec<C> declared, C defaults) {
        ArgGroupSpec.Builder group = ArgGroupSpec.builder().heading(heading).exclusive(false).multiplicity("0..1")
                .validate(false);
        for (Setting<C, ?> s : declared.settings()) {
            String value = s.valueText(defaults);
            OptionSpec option = OptionSpec.builder("--" + s.key()).paramLabel("VALUE").arity("1")
                    .description(escaped(s.doc(defaults) + " [" + (value.isEmpty() ? "none" : value) + "]"))
                    .build();
            settings.put(s.key(), option);
            defaultTexts.put(s.key(), value);
            group.addArg(option);
        }
        return group.build();
    }

    /** Picocli formats descriptions: a '%' in a setting's text is a percent sign. */
    private static String escaped(String text) {
        return text.replace("%", "%%");
    }

    /** The usage text, as {@code --help} prints it. */
    static String usage() {
        return new OracleServerFlags().commandLine.getUsageMessage();
    }

    /**
     * Reads {@code args}; {@code --help} anywhere wins over every other argument, even a wrong one. A mistake in the
     * command line throws a {@link ParameterException} that says what is wrong and how to write it; the values are
     * checked later, by {@link OracleConfig#fromProperties}.
     */
    static Parsed parse(String... args) {
        OracleServerFlags f = new OracleServerFlags();
        ParseResult result;
        try {
            result = f.commandLine.parseArgs(args);
        } catch (ParameterException e) {
            if (List.of(args).contains("--help") || List.of(args).contains("-h")) {
                return new Parsed(true, List.of(), new Properties());
            }
            throw f.explained(e);
        }
        Properties flags = new Properties();
        f.settings.forEach((key, option) -> {
            if (result.hasMatchedOption(option)) {
                flags.setProperty(key, option.getValue());
            }
        });
        List<String> files = result.hasMatchedOption(f.config) ? f.config.getValue() : List.of();
        return new Parsed(result.isUsageHelpRequested(), files.stream().map(Path::of).toList(), flags);
    }

    /** Picocli's message, with how to write it right where picocli does not say. */
    private ParameterException explained(ParameterException e) {
        String message = e.getMessage();
        if (e instanceof UnmatchedArgumentException u) {
            String first = u.getUnmatched().isEmpty() ? "" : u.getUnmatched().get(0);
            if (!first.startsWith("-")) {
                message = "unrecognised argument '" + first + "': settings are given as --key=value (e.g."
                        + " --port=24680), or --config FILE";
            } else {
                String name = first.split("=", 2)[0];
                List<String> close = closest(name.replaceFirst("^-+", ""));
                message = "unknown setting '" + name + "'" + (close.isEmpty() ? ""
                        : "; did you mean --" + String.join(" or --", close) + "?");
            }
        } else if (e instanceof MissingParameterException m && !m.getMissing().isEmpty()) {
            ArgSpec missing = m.getMissing().get(0);
            if (missing instanceof OptionSpec o && settings.containsValue(o)) {
                String name = o.longestName();
                message = "'" + name + "' has no value: settings are given as --key=value, e.g. " + name + "="
                        + valueExample(name.substring(2));
            }
        }
        return new ParameterException(commandLine, message, e);
    }

    /** The keys at most a few typing mistakes away from {@code key}, closest first: what a typo meant. */
    private List<String> closest(String key) {
        int most = Math.max(2, key.length() / 5);
        return settings.keySet().stream()
                .map(k -> Map.entry(k, editDistance(k, key)))
                .filter(e -> e.getValue() <= most)
                .sorted(Map.Entry.comparingByValue())
                .limit(3)
                .map(Map.Entry::getKey)
                .toList();
    }

    /** Levenshtein distance: the fewest inserted, deleted or replaced characters that turn {@code a} into {@code b}. */
    static int editDistance(String a, String b) {
        int[] previous = new int[b.length() + 1];
        int[] current = new int[b.length() + 1];
        for (int j = 0; j <= b.length(); j++) {
            previous[j] = j;
        }
        for (int i = 1; i <= a.length(); i++) {
            current[0] = i;
            for (int j = 1; j <= b.length(); j++) {
                int replace = previous[j - 1] + (a.charAt(i - 1) == b.charAt(j - 1) ? 0 : 1);
                current[j] = Math.min(replace, Math.min(previous[j], current[j - 1]) + 1);
            }
            int[] t = previous;
            previous = current;
            current = t;
        }
        return previous[b.length()];
    }

    /** The default of {@code key} as an example value, or VALUE for one that is empty or masked. */
    private String valueExample(String key) {
        String value = defaultTexts.getOrDefault(key, "");
        return value.isEmpty() || value.startsWith("*") ? "VALUE" : value;
    }
}
