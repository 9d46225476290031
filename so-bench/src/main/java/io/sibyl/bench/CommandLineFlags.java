package io.sibyl.bench;

import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/** Splits {@code --name value} and {@code --name=value} arguments into flags, in order, for the bench tools. */
final class CommandLineFlags {
    /** One flag as given; a switch's value is null. */
    record Flag(String name, String value) {
    }

    private CommandLineFlags() {
    }

    /** Whether {@code --help} or {@code -h} is anywhere: it wins over every other argument, even a wrong one. */
    static boolean asksForHelp(String[] args) {
        for (String arg : args) {
            if (arg.equals("--help") || arg.equals("-h")) {
                return true;
            }
        }
        return false;
    }

    /**
     * The flags in {@code args}: {@code switches} take no value, {@code valued} take one (after {@code =} or as the
     * next argument; trimmed).
     *
     * @throws UsageException naming the first argument that is not a known flag, or lacks its value
     */
    static List<Flag> split(String[] args, Set<String> switches, Set<String> valued) throws UsageException {
        List<Flag> flags = new ArrayList<>();
        for (int i = 0; i < args.length; i++) {
            String arg = args[i];
            if (!arg.startsWith("--") || arg.length() == 2) {
                throw new UsageException("unexpected argument '" + arg + "' (flags start with --)");
            }
            String name = arg.substring(2);
            String value = null;
            int eq = name.indexOf('=');
            if (eq >= 0) {
                value = name.substring(eq + 1);
                name = name.substring(0, eq);
            }
            if (switches.contains(name)) {
                if (value != null) {
                    throw new UsageException("--" + name + " takes no value");
                }
                flags.add(new Flag(name, null));
                continue;
            }
            if (!valued.contains(name)) {
                throw new UsageException("unknown flag --" + name);
            }
            if (value == null) {
                if (i + 1 >= args.length) {
                    throw new UsageException("--" + name + " needs a value");
                }
                value = args[++i];
            }
            flags.add(new Flag(name, value.trim()));
        }
        return flags;
    }
}
