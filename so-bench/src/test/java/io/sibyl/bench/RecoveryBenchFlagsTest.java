package io.sibyl.bench;

import org.junit.jupiter.api.Test;
import picocli.CommandLine.MissingParameterException;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.ParseResult;
import picocli.CommandLine.UnmatchedArgumentException;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** bin/so-recovery-bench's steps and their flags, parsed only: nothing connects to ZooKeeper or an oracle. */
class RecoveryBenchFlagsTest {

    @Test
    void theScriptsCommandLinesParse() {
        RecoveryBench.Write write = step(RecoveryBench.steps().parseArgs("write", "--oracle", "127.0.0.1:24680",
                "--transactions", "2e6", "--window", "2048"));
        assertEquals("127.0.0.1:24680", write.oracle);
        assertEquals(2_000_000, (long) write.transactions);
        assertEquals("2048", write.window);
        assertEquals("8", write.writeSet);
        RecoveryBench.Recover recover = step(RecoveryBench.steps().parseArgs("recover", "--zk", "127.0.0.1:2181",
                "--znode", "/sibyl/recovery-bench/1/A/ledgers"));
        assertEquals("/sibyl/recovery-bench/1/A/ledgers", recover.journal.settings().ledgersZnode());
        RecoveryBench.Breakdown sync = step(RecoveryBench.steps().parseArgs("breakdown", "--zk=h:1", "--znode=/a"));
        assertEquals(RecoveryBench.Read.SYNC, sync.read);
        RecoveryBench.Breakdown pipelined = step(RecoveryBench.steps().parseArgs("breakdown", "--zk", "h:1",
                "--znode", "/a", "--read", "Pipelined"));
        assertEquals(RecoveryBench.Read.PIPELINED, pipelined.read);
        assertTrue(RecoveryBench.steps().parseArgs("serve", "--help").subcommand().isUsageHelpRequested());
    }

    @Test
    void badArgumentsAreRefusedNamingThemWithExitStatusTwo() {
        assertMessage(MissingParameterException.class, "Missing required options: '--zk=HOST:PORT',"
                + " '--znode=PATH'", "recover");
        assertMessage(MissingParameterException.class, "Missing required option: '--transactions=N'", "write",
                "--oracle", "h:1");
        assertMessage(UnmatchedArgumentException.class, "Unmatched argument at index 0: 'replay'", "replay");
        assertMessage(UnmatchedArgumentException.class, "Unknown options: '--zk', 'h:1'", "write", "--oracle=h:1",
                "--transactions=1", "--zk", "h:1");
        assertMessage(ParameterException.class, "expected one of [SYNC, PIPELINED] (case-insensitive) but was"
                + " 'async'", "breakdown", "--zk=h:1", "--znode=/a", "--read=async");
        assertEquals(2, RecoveryBench.steps().execute(), "no step given");
        assertEquals(2, RecoveryBench.steps().execute("serve", "--zk", "h:1"));
        assertEquals(0, RecoveryBench.steps().execute("--help"));
    }

    @SuppressWarnings("unchecked")
    private static <T> T step(ParseResult parsed) {
        return (T) parsed.subcommand().commandSpec().userObject();
    }

    private static void assertMessage(Class<? extends ParameterException> type, String expected, String... args) {
        ParameterException e = assertThrows(type, () -> RecoveryBench.steps().parseArgs(args));
        assertTrue(e.getMessage().contains(expected), e.getMessage());
    }
}
