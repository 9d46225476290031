package io.sibyl.oracle.ha;

import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.journal.BookKeeperCluster;
import io.sibyl.protocol.Wire;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * {@code timestamp.reservation.block} at and past its limit, on so-server processes with the BookKeeper journal: once
 * {@code 2^63 - 1} was accepted, the journaled reservation limit wrapped negative, and after a SIGKILL the recovered
 * oracle answered ABORTED for an acknowledged commit and handed its commit timestamp out again.
 */
@Timeout(value = 120, unit = TimeUnit.SECONDS)
class ReservationBlockTest {
    @RegisterExtension
    static final BookKeeperCluster cluster = BookKeeperCluster.perTestClass(3);

    private static List<String> flags(String name, long reservationBlock) {
        String zk = cluster.zkConnect();
        return new ArrayList<>(List.of("--port=0", "--host=127.0.0.1", "--journal=bookkeeper",
                "--journal.zk.connect=" + zk, "--journal.bk.metadata.uri=zk+null://" + zk + "/ledgers",
                "--journal.ledgers.znode=/sibyl/test/" + name + "/ledgers",
                "--conflict.table.rows=65536", "--recent.commits.capacity=65536", "--max.running.transactions=4096",
                "--timestamp.reservation.block=" + reservationBlock));
    }

    @Test
    void aReservationBlockThatWouldOverflowIsRefusedAtStartNamingTheKeyAndItsRange() throws Exception {
        try (OracleProcess oracle = new OracleProcess("overflow", flags("overflow", Long.MAX_VALUE))) {
            assertTrue(oracle.process.waitFor(30, TimeUnit.SECONDS), "the oracle exits");
            assertEquals(2, oracle.process.exitValue(), oracle.tail());
            List<String> refusal = oracle.stderrLines("timestamp.reservation.block");
            assertFalse(refusal.isEmpty(), oracle.tail());
            assertTrue(refusal.get(0).contains("1 to " + OracleConfig.MAX_TIMESTAMP_RESERVATION_BLOCK),
                    refusal.get(0));
        }
    }

    @Test
    void theLargestReservationBlockKeepsAnAcknowledgedCommitAcrossSigkill() throws Exception {
        List<String> flags = flags("largest", OracleConfig.MAX_TIMESTAMP_RESERVATION_BLOCK);
        long start;
        long committedAt;
        try (OracleProcess first = new OracleProcess("largest-1", flags)) {
            int port = first.awaitReady(60_000);
            try (RawOracleClient c = RawOracleClient.connect("127.0.0.1", port, 5000)) {
                start = c.begin();
                c.begin();
                c.begin();
                RawOracleClient.Reply r = c.commit(start, 42L);
                assertEquals(Wire.COMMITTED, r.type(), "commit: " + r);
                committedAt = r.value();
            }
            first.process.destroyForcibly();
            assertTrue(first.process.waitFor(10, TimeUnit.SECONDS));
        }
        try (OracleProcess second = new OracleProcess("largest-2", flags)) {
            int port = second.awaitReady(60_000);
            try (RawOracleClient c = RawOracleClient.connect("127.0.0.1", port, 5000)) {
                RawOracleClient.Reply st = c.query(start);
                assertEquals(Wire.STATUS_COMMITTED, st.value(), "the acknowledged commit after recovery: " + st);
                assertEquals(committedAt, st.commitTs());
                long next = c.begin();
                // The first begin reserved the block above its own timestamp.
                assertTrue(next > start + OracleConfig.MAX_TIMESTAMP_RESERVATION_BLOCK,
                        "the clock restarts above the journaled reservation: " + next + " after " + committedAt);
            }
        }
    }
}
