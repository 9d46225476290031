package io.sibyl.bench;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@code bin/bookies}' flags: a mistake is refused, before anything starts, with the flag named. */
class LocalBookiesFlagsTest {

    @Test
    void badFlagsAreRefusedNamingTheFlag() {
        assertMessage("Unknown option: '--bogus'", "--bogus");
        assertMessage("Unknown options: '--bookie', '3'", "--bookie", "3");
        assertMessage("--bookies must be a whole number, got 'x'", "--bookies", "x");
        assertMessage("--bookies must be at least 1, got 0", "--bookies=0");
        assertMessage("Missing required parameter for option '--bookies' (N)", "--bookies");
        assertMessage("--zk-port must be 0 to 65535, got 70000", "--zk-port=70000");
        assertMessage("--journalMaxGroupWaitMSec must be a whole number, got 'soon'", "--journalMaxGroupWaitMSec=soon");
        assertMessage("--journalSyncData must be true or false, got 'yes'", "--journalSyncData=yes");
        assertMessage("--set needs KEY=VALUE, got 'x'", "--set", "x");
        assertMessage("Unmatched argument at index 0: 'bookies=3'", "bookies=3");
    }

    @Test
    void theScriptsFlagsParseAndHelpListsThem() throws Exception {
        LocalBookies.Flags f = LocalBookies.parse("--bookies=4", "--zk-port", "2181", "--journalSyncData=false",
                "--journalMaxGroupWaitMSec", "0", "--set", "journalDirectories=/tmp/j", "--set=a=b");
        assertEquals(4, f.bookies);
        assertEquals(2181, f.zkPort);
        assertEquals("false", f.journal.get("journalSyncData"));
        assertEquals("0", f.journal.get("journalMaxGroupWaitMSec"));
        assertEquals("true", f.journal.get("journalFlushWhenQueueEmpty"), "our default, not BookKeeper's");
        assertEquals(List.of("journalDirectories=/tmp/j", "a=b"), f.extra.stream().map(kv -> kv[0] + "=" + kv[1])
                .toList());
        assertTrue(LocalBookies.parse("--bookies", "0", "--help").help);
        String usage = LocalBookies.usage();
        for (String flag : List.of("--bookies", "--zk-port", "--journalFlushWhenQueueEmpty",
                "--journalMaxGroupWaitMSec", "--journalBufferedWritesThreshold", "--journalAdaptiveGroupWrites",
                "--journalSyncData", "--set", "--help")) {
            assertTrue(usage.contains(flag), flag);
        }
    }

    private static void assertMessage(String expected, String... args) {
        assertEquals(expected, assertThrows(UsageException.class, () -> LocalBookies.parse(args)).getMessage());
    }
}
