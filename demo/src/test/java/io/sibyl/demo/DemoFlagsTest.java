package io.sibyl.demo;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

class DemoFlagsTest {
    @Test
    void defaultsGiveAHalfMinuteRunWithAFailoverHalfway() throws Exception {
        DemoFlags f = DemoFlags.parse();
        assertEquals(30, f.durationSeconds);
        assertEquals(8, f.threads);
        assertEquals(1000, f.accounts);
        assertTrue(f.failover);
        assertEquals(15.0, f.killAt());
        assertFalse(f.help);
    }

    @Test
    void bothFlagFormsAndTheScriptsWiringAreRead() throws Exception {
        DemoFlags f = DemoFlags.parse("--duration", "12", "--threads=3", "--accounts", "50", "--no-failover",
                "--kill-at=2.5", "--zk", "127.0.0.1:2181", "--oracle-pids=11,22", "--leader-znode", "/x/leader");
        assertEquals(12, f.durationSeconds);
        assertEquals(3, f.threads);
        assertEquals(50, f.accounts);
        assertFalse(f.failover);
        assertEquals(2.5, f.killAt());
        assertEquals("127.0.0.1:2181", f.zkConnect);
        assertEquals(List.of(11L, 22L), f.oraclePids);
        assertEquals("/x/leader", f.leaderZnode);
    }

    @Test
    void helpIsRecognisedAndTheUsageNamesEveryUserFlag() throws Exception {
        assertTrue(DemoFlags.parse("--threads", "2", "--help").help);
        for (String flag : List.of("--duration", "--threads", "--accounts", "--auditors", "--opening",
                "--max-amount", "--kill-at", "--no-failover", "--seed", "--help")) {
            assertTrue(DemoFlags.usage().contains(flag), flag);
        }
    }

    @Test
    void badFlagsAreRejectedNamingTheFlag() {
        assertMessage("unknown flag --bogus", "--bogus", "1");
        assertMessage("unknown flag --bogus", "--bogus");
        assertMessage("unknown flag --failover", "--failover", "--threads", "2");
        assertMessage("--threads must be at least 1", "--threads", "0");
        assertMessage("--duration must be a whole number", "--duration", "ten");
        assertMessage("--accounts needs a value", "--accounts");
        assertMessage("--accounts must be at least 2", "--accounts", "1");
        assertMessage("--kill-at must be below --duration", "--duration", "10", "--kill-at", "10");
        assertMessage("--no-failover takes no value", "--no-failover=yes");
        assertMessage("unexpected argument 'x'", "x");
    }

    private static void assertMessage(String expected, String... args) {
        DemoFlags.UsageException e = assertThrows(DemoFlags.UsageException.class, () -> DemoFlags.parse(args));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    @Test
    void theLeaderRecordOwnerGivesThePid() {
        assertEquals(4242, DemoMain.ownerPid("host.example/4242/ab12cd34"));
        assertEquals(-1, DemoMain.ownerPid("no-pid-here"));
        assertEquals(-1, DemoMain.ownerPid("host/notanumber/ab12"));
    }
}
