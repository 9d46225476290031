package io.sibyl.bench;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

/** {@code bin/bookies}' flags: a mistake is refused, before anything starts, with the flag named. */
class LocalBookiesFlagsTest {

    @Test
    void badFlagsAreRefusedNamingTheFlag() {
        assertMessage("unknown flag --bogus", "--bogus");
        assertMessage("unknown flag --bookie", "--bookie", "3");
        assertMessage("--bookies must be a whole number, got 'x'", "--bookies", "x");
        assertMessage("--bookies must be at least 1, got 0", "--bookies=0");
        assertMessage("--bookies needs a value", "--bookies");
        assertMessage("--zk-port must be 0 to 65535, got 70000", "--zk-port=70000");
        assertMessage("--journalMaxGroupWaitMSec must be a whole number, got 'soon'", "--journalMaxGroupWaitMSec=soon");
        assertMessage("--journalSyncData must be true or false, got 'yes'", "--journalSyncData=yes");
        assertMessage("--set needs KEY=VALUE, got 'x'", "--set", "x");
        assertMessage("unexpected argument 'bookies=3'", "bookies=3");
    }

    private static void assertMessage(String expected, String... args) {
        assertEquals(expected, assertThrows(IllegalArgumentException.class, () -> LocalBookies.run(args)).getMessage());
    }
}
