package io.sibyl.demo;

import org.junit.jupiter.api.Test;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

class LedgerTest {
    @Test
    void balancesThatFollowTheCommittedTransfersPass() {
        Ledger l = new Ledger(3, 100);
        l.committed(0, 1, 30);
        l.committed(1, 2, 5);
        Ledger.Check c = l.check(new Long[] {70L, 125L, 105L});
        assertTrue(c.pass(), c.describe());
        assertEquals(300, c.total());
        assertTrue(c.describe().startsWith("PASS"));
    }

    @Test
    void aLostCommitFailsEvenThoughTheTotalIsConstant() {
        Ledger l = new Ledger(3, 100);
        l.committed(0, 1, 30);
        Ledger.Check c = l.check(new Long[] {100L, 100L, 100L}); // as if the acknowledged transfer vanished
        assertFalse(c.pass());
        assertEquals(300, c.total());
        assertEquals(2, c.mismatched());
        assertTrue(c.describe().contains("acct-0000000 is 100, ledger says 70"), c.describe());
    }

    @Test
    void aMissingAccountOrAnUnknownOutcomeFails() {
        Ledger l = new Ledger(2, 10);
        Ledger.Check missing = l.check(new Long[] {10L, null});
        assertFalse(missing.pass());
        assertEquals(1, missing.missing());

        l.outcomeUnknown();
        Ledger.Check unknown = l.check(new Long[] {10L, 10L});
        assertFalse(unknown.pass());
        assertTrue(unknown.describe().contains("1 commits of unknown outcome"), unknown.describe());
    }

    @Test
    void theFailoverClockMeasuresFromTheKill() {
        FailoverClock c = new FailoverClock();
        c.committed(0, 1_000_000);          // before the kill
        assertEquals(-1, c.killToFirstCommitMs());
        c.killed(5_000_000);
        c.committed(4_000_000, 9_000_000);  // began before the kill: an old transaction's late reply
        c.committed(6_000_000, 30_000_000); // began after it: served by the new leader
        c.committed(7_000_000, 20_000_000);
        assertEquals(4.0, c.killToFirstCommitMs());
        assertEquals(15.0, c.killToFirstNewCommitMs());
        assertEquals(8.0, c.commitGapMs());
    }
}
