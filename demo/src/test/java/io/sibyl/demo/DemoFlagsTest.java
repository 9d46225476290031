package io.sibyl.demo;

import org.junit.jupiter.api.Test;
import picocli.CommandLine.ParameterException;

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
        assertTrue(f.failover());
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
        assertFalse(f.failover());
        assertEquals(2.5, f.killAt());
        assertEquals("127.0.0.1:2181", f.zkConnect);
        assertEquals(List.of(11L, 22L), f.oraclePids);
        assertEquals("/x/leader", f.leaderZnode);
    }

    @Test
    void helpIsRecognisedAndTheUsageNamesEveryUserFlag() throws Exception {
        assertTrue(DemoFlags.parse("--threads", "2", "--help").help);
        assertTrue(DemoFlags.parse("-h").help);
        assertTrue(DemoFlags.parse("--help", "--accounts", "1").help, "help wins over the range checks");
        for (String flag : List.of("--duration", "--threads", "--accounts", "--auditors", "--opening",
                "--max-amount", "--kill-at", "--no-failover", "--seed", "--help")) {
            assertTrue(DemoFlags.usage().contains(flag), flag);
        }
    }

    @Test
    void badFlagsAreRejectedNamingTheFlag() {
        assertMessage("Unknown options: '--bogus', '1'", "--bogus", "1");
        assertMessage("Unknown option: '--bogus'", "--bogus");
        assertMessage("Unknown option: '--failover'", "--failover", "--threads", "2");
        assertMessage("--threads must be at least 1, got 0", "--threads", "0");
        assertMessage("--auditors must be at least 0", "--auditors=-1");
        assertMessage("'--duration': 'ten' is not an int", "--duration", "ten");
        assertMessage("'--auditors': '9999999999' is not an int", "--auditors", "9999999999");
        assertMessage("Missing required parameter for option '--accounts'", "--accounts");
        assertMessage("--accounts must be at least 2", "--accounts", "1");
        assertMessage("--kill-at must be below --duration", "--duration", "10", "--kill-at", "10");
        assertMessage("--kill-at must be 0 or more seconds", "--kill-at=-1");
        assertMessage("--kill-at must be 0 or more seconds", "--kill-at", "NaN");
        assertMessage("'--no-failover': 'yes' is not a boolean", "--no-failover=yes");
        assertMessage("--oracle-pids must be at least 1", "--oracle-pids=11,0");
        assertMessage("Unmatched argument at index 0: 'x'", "x");
    }

    @Test
    void theDemoItselfNeedsTheScriptsWiringButTheFlagsCheckDoesNot() {
        DemoFlags withoutWiring = DemoFlags.parse("--duration=5");
        ParameterException e = assertThrows(ParameterException.class, withoutWiring::requireWiring);
        assertTrue(e.getMessage().contains("--zk HOST:PORT is required"), e.getMessage());
        DemoFlags.parse("--zk", "127.0.0.1:2181").requireWiring();
    }

    private static void assertMessage(String expected, String... args) {
        ParameterException e = assertThrows(ParameterException.class, () -> DemoFlags.parse(args));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }

    @Test
    void theLeaderRecordOwnerGivesThePid() {
        assertEquals(4242, DemoMain.ownerPid("host.example/4242/ab12cd34"));
        assertEquals(-1, DemoMain.ownerPid("no-pid-here"));
        assertEquals(-1, DemoMain.ownerPid("host/notanumber/ab12"));
    }
}
