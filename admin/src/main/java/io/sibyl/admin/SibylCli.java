package io.sibyl.admin;

import picocli.CommandLine;
import picocli.CommandLine.Command;

import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;

/**
 * {@code bin/sibyl}: the operator's commands for a Sibyl deployment (docs/operations.md, "The admin CLI"). Each
 * failure is one message that says what went wrong and what to do, never a stack trace.
 */
@Command(name = "sibyl", mixinStandardHelpOptions = true, versionProvider = SibylCli.Version.class,
        subcommands = {StatusCommand.class, TransactionsCommand.class, AbortCommand.class, LedgersCommand.class,
                SweepCommand.class, EnableTableCommand.class, CommandLine.HelpCommand.class},
        description = {"Administers a Sibyl deployment: the status oracle group, its transactions and journal, the"
                + " abort sweep, and transactional tables in HBase.",
                "Every command takes --zk (or --oracle), --admin-secret-file and -D KEY=VALUE; see"
                + " 'bin/sibyl help COMMAND'."})
public final class SibylCli implements Runnable {
    /** Where the commands write; the sweeper takes streams, not writers. */
    final PrintStream out;
    final PrintStream err;

    SibylCli(PrintStream out, PrintStream err) {
        this.out = out;
        this.err = err;
    }

    /** Runs one command and exits with its status (0 done, 1 failed, 2 wrong options). */
    public static void main(String[] args) {
        System.exit(run(args, System.out, System.err));
    }

    /** Runs one command, writing to {@code out} and {@code err}; returns the exit status. */
    public static int run(String[] args, PrintStream out, PrintStream err) {
        CommandLine cli = new CommandLine(new SibylCli(out, err));
        cli.setOut(new PrintWriter(out, true, StandardCharsets.UTF_8));
        cli.setErr(new PrintWriter(err, true, StandardCharsets.UTF_8));
        cli.setExecutionExceptionHandler((e, command, parsed) -> {
            command.getOut().flush();
            if (e instanceof CliException c) {
                command.getErr().println("sibyl " + command.getCommandName() + ": " + c.getMessage());
                return c.exitCode();
            }
            if (e instanceof IllegalArgumentException) {
                // The libraries' settings checks (a secret file, a TLS store): their messages name the setting.
                command.getErr().println("sibyl " + command.getCommandName() + ": " + e.getMessage());
                return CliException.USAGE;
            }
            // Not foreseen: still one line, with the exception's type, which is what a bug report needs.
            command.getErr().println("sibyl " + command.getCommandName() + ": " + e);
            return CliException.FAILED;
        });
        int status = cli.execute(args);
        cli.getOut().flush();
        cli.getErr().flush();
        return status;
    }

    /** Without a command: the list of commands. */
    @Override
    public void run() {
        CommandLine.usage(this, out);
    }

    /** The release, from the jar's manifest (absent when run from classes). */
    static final class Version implements CommandLine.IVersionProvider {
        @Override
        public String[] getVersion() {
            String v = SibylCli.class.getPackage().getImplementationVersion();
            return new String[] {"sibyl " + (v == null ? "(development build)" : v)};
        }
    }
}
