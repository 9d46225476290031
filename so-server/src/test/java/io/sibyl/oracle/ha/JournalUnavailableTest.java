package io.sibyl.oracle.ha;

import io.sibyl.oracle.journal.BookKeeperCluster;
import io.sibyl.protocol.Wire;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * When the journal itself becomes unavailable (two of three bookies gone at E2/W2/A2, so no entry can reach its ack
 * quorum and no new ledger can be made), a commit sent from then on is never acknowledged: the oracle keeps trying for
 * {@code journal.write.retry.ms}, then stops serving through its fatal-error path with a reason naming the journal,
 * and the client sees its connection close (outcome unknown), never a false COMMITTED. This class removes bookies, so
 * it has its own cluster.
 */
@Timeout(value = 90, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class JournalUnavailableTest {
    @RegisterExtension
    static final BookKeeperCluster cluster = BookKeeperCluster.perTestClass(3);

    @Test
    void withTwoOfThreeBookiesGoneNoCommitIsAcknowledgedAndTheOracleStopsNamingTheJournal() throws Exception {
        List<String> flags = StandbyTakeoverTest.haFlags(cluster, "unavailable", "--journal.write.retry.ms=2000");
        try (OracleProcess oracle = new OracleProcess("unavailable", flags)) {
            int port = oracle.awaitReady(60_000);
            try (RawOracleClient client = RawOracleClient.connect("127.0.0.1", port, 60_000)) {
                for (int i = 0; i < 20; i++) {
                    long ts = client.begin();
                    assertEquals(Wire.COMMITTED, client.commit(ts, i).type(), "commits while the bookies are up");
                }
                long running = client.begin();

                cluster.removeBookie();
                cluster.removeBookie();
                long lostAt = System.nanoTime();
                try {
                    RawOracleClient.Reply r = client.commit(running, 1000);
                    fail("the oracle answered a commit that no bookie quorum can hold: " + r);
                } catch (IOException expected) {
                    // the oracle closed the connection as it stopped: the client cannot know the outcome
                }
                assertTrue(oracle.process.waitFor(30, TimeUnit.SECONDS), "the oracle stops");
                long stoppedAfterMs = (System.nanoTime() - lostAt) / 1_000_000;
                assertEquals(1, oracle.process.exitValue(), "fatal error exit status");
                List<String> why = oracle.stderrLines("stops serving");
                System.out.printf("journal unavailable: so-server exited %d ms after the bookies went: %s%n",
                        stoppedAfterMs, why);
                assertTrue(why.stream().anyMatch(l -> l.contains("journal")), "the reason names the journal: " + why
                        + "\n" + oracle.tail());
                assertTrue(stoppedAfterMs >= 2000, "it kept trying for journal.write.retry.ms first");
            }
        }
    }
}
