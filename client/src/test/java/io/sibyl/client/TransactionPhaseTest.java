package io.sibyl.client;

import org.junit.jupiter.api.Test;

import java.util.EnumSet;
import java.util.Set;

import static io.sibyl.client.TransactionPhase.COMMITTED;
import static io.sibyl.client.TransactionPhase.COMMITTING;
import static io.sibyl.client.TransactionPhase.COMMITTING_AT_ORACLE;
import static io.sibyl.client.TransactionPhase.IN_DOUBT;
import static io.sibyl.client.TransactionPhase.OPEN;
import static io.sibyl.client.TransactionPhase.ROLLED_BACK;
import static io.sibyl.client.TransactionPhase.ROLLED_BACK_BY_CLOSE;
import static io.sibyl.client.TransactionPhase.ROLLING_BACK;
import static io.sibyl.client.TransactionPhase.ROLLING_BACK_AT_ORACLE;
import static io.sibyl.client.TransactionPhase.UNFINISHED;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The transaction phase model: the legal moves of docs/architecture.md and what each phase permits. */
class TransactionPhaseTest {

    private static Set<TransactionPhase> successors(TransactionPhase from) {
        Set<TransactionPhase> out = EnumSet.noneOf(TransactionPhase.class);
        for (TransactionPhase to : TransactionPhase.values()) {
            if (from.canMoveTo(to)) {
                out.add(to);
            }
        }
        return out;
    }

    @Test
    void theLegalMovesAreThoseOfTheDiagram() {
        assertEquals(EnumSet.of(COMMITTING, ROLLING_BACK), successors(OPEN));
        assertEquals(EnumSet.of(COMMITTING, ROLLING_BACK), successors(UNFINISHED));
        assertEquals(EnumSet.of(COMMITTING_AT_ORACLE, UNFINISHED), successors(COMMITTING));
        assertEquals(EnumSet.of(COMMITTED, ROLLED_BACK, IN_DOUBT, UNFINISHED), successors(COMMITTING_AT_ORACLE));
        assertEquals(EnumSet.of(ROLLING_BACK_AT_ORACLE, UNFINISHED), successors(ROLLING_BACK));
        assertEquals(EnumSet.of(ROLLED_BACK, ROLLED_BACK_BY_CLOSE, UNFINISHED), successors(ROLLING_BACK_AT_ORACLE));
        for (TransactionPhase outcome : EnumSet.of(COMMITTED, ROLLED_BACK, ROLLED_BACK_BY_CLOSE, IN_DOUBT)) {
            assertTrue(successors(outcome).isEmpty(), outcome + " is final");
        }
    }

    @Test
    void onlyOpenAndUnfinishedTransactionsCanBeClaimedAndOnlyClaimsLeadToTheOracle() {
        for (TransactionPhase p : TransactionPhase.values()) {
            assertEquals(p == OPEN || p == UNFINISHED, p.isClaimable(), p.toString());
            assertFalse(p.isClaimable() && p.isClaimed(), p.toString());
            if (p.isClaimed()) {
                assertTrue(p.canMoveTo(UNFINISHED), p + " gives its claim back after an unexpected error");
                assertTrue(p.atOracle() == p || p.canMoveTo(p.atOracle()), p.toString());
            }
        }
    }

    @Test
    void onlyFinishedPhasesRefuseEveryUseWithADescription() {
        for (TransactionPhase p : TransactionPhase.values()) {
            boolean finished = successors(p).isEmpty();
            if (finished) {
                assertNotNull(p.finishedAs(), p.toString());
                assertFalse(p.sendsWrites() || p.resolvesReads(), p.toString());
            } else {
                assertNull(p.finishedAs(), p.toString());
            }
        }
        assertEquals(Transaction.Status.RUNNING, IN_DOUBT.status(), "an in-doubt commit may have committed");
        assertEquals(Transaction.Status.ROLLED_BACK, ROLLED_BACK_BY_CLOSE.status());
    }
}
