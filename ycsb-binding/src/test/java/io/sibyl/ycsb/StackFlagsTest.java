package io.sibyl.ycsb;

import org.junit.jupiter.api.Test;
import picocli.CommandLine;
import picocli.CommandLine.ParameterException;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The embedded stack's flags, as bin/sibyl-ycsb passes them; no minicluster is started. */
class StackFlagsTest {
    private static EmbeddedStack.StackFlags parse(String... args) {
        EmbeddedStack.StackFlags flags = new EmbeddedStack.StackFlags();
        new CommandLine(flags).parseArgs(args);
        return flags;
    }

    @Test
    void withoutFlagsTheBindingsDefaultTableAndFamily() {
        EmbeddedStack.StackFlags flags = parse();
        assertEquals(List.of(BindingSettings.DEFAULT_TABLE), flags.tablesToCreate());
        assertEquals(BindingSettings.DEFAULT_COLUMN_FAMILY, flags.family);
    }

    @Test
    void theScriptsListIsTrimmedAndEachTableCreatedOnce() {
        // bin/sibyl-ycsb appends '--tables t1,t2' to its own 'usertable,accounts'.
        EmbeddedStack.StackFlags flags = parse("--tables", "usertable,accounts,extra, usertable,", "--family=cf");
        assertEquals(List.of("usertable", "accounts", "extra"), flags.tablesToCreate());
        assertEquals("cf", flags.family);
        assertEquals(List.of("a", "b"), parse("--tables=a", "--tables", "b").tablesToCreate());
    }

    @Test
    void badFlagsAreRejectedNamingThem() {
        ParameterException unknown = assertThrows(ParameterException.class, () -> parse("--table", "x"));
        assertTrue(unknown.getMessage().contains("'--table'"), unknown.getMessage());
        ParameterException missing = assertThrows(ParameterException.class, () -> parse("--family"));
        assertTrue(missing.getMessage().contains("'--family'"), missing.getMessage());
        assertTrue(parse("--help").help);
    }
}
