package io.sibyl.bench;

import picocli.CommandLine;
import picocli.CommandLine.ParameterException;

import java.util.List;

/**
 * Parses a so-bench tool's arguments with picocli into its options object (a {@link CommandLine.Command}), the same
 * way for every tool: '--flag value' or '--flag=value', values trimmed (blanks around one are a typing accident), the
 * last of a flag given twice wins, and a mistake is a {@link UsageException} that names the flag.
 */
public final class BenchCommandLine {
    private BenchCommandLine() {
    }

    /**
     * Parses {@code args} into {@code options}; returns whether {@code --help} or {@code -h} was given, which wins over
     * every other argument, even a wrong one (then {@code options} may be half set: only the usage is for use).
     *
     * @throws UsageException naming the argument that is wrong: not a flag, an unknown one, a missing or bad value
     */
    public static boolean parse(Object options, String... args) throws UsageException {
        try {
            return commandLine(options).parseArgs(args).isUsageHelpRequested();
        } catch (ParameterException e) {
            if (List.of(args).contains("--help") || List.of(args).contains("-h")) {
                return true;
            }
            for (Throwable t = e; t != null; t = t.getCause()) {
                if (t instanceof UsageException u) {
                    throw u; // a flag's own check, thrown from its setter, says it best
                }
            }
            throw new UsageException(e.getMessage());
        }
    }

    /** The usage text of {@code options}' command, as {@code --help} prints it. */
    public static String usage(Object options) {
        return commandLine(options).getUsageMessage();
    }

    /** The picocli command line of {@code options}, set up as every so-bench tool's (for one with subcommands). */
    public static CommandLine commandLine(Object options) {
        return new CommandLine(options)
                .registerConverter(String.class, String::trim)
                .setOverwrittenOptionsAllowed(true) // scripts append flags to the user's; the last one wins
                .setExpandAtFiles(false); // '@x' is a value like any other, as before picocli
    }
}
