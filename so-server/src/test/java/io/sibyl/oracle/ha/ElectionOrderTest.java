package io.sibyl.oracle.ha;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/** The order of election candidates: by ZooKeeper's sequence number, whatever order the children are listed in. */
class ElectionOrderTest {

    @Test
    void candidatesAreOrderedBySequenceNumberNotByListingOrder() {
        ElectionOrder o = ElectionOrder.of(List.of("candidate-0000000012", "candidate-0000000003",
                "candidate-0000000100"));
        assertEquals(List.of("candidate-0000000003", "candidate-0000000012", "candidate-0000000100"), o.candidates());
        assertEquals(0, o.position("candidate-0000000003"), "the oldest candidate leads");
        assertEquals(1, o.position("candidate-0000000012"), "the next one is the first standby");
        assertEquals(2, o.position("candidate-0000000100"));
        assertEquals("candidate-0000000003", o.predecessor("candidate-0000000012"));
        assertNull(o.predecessor("candidate-0000000003"), "the leader follows no one");
    }

    @Test
    void aCandidateWhoseZnodeIsGoneHasNoPosition() {
        ElectionOrder o = ElectionOrder.of(List.of("candidate-0000000001"));
        assertEquals(-1, o.position("candidate-0000000002"));
        assertNull(o.predecessor("candidate-0000000002"));
    }

    @Test
    void deletingTheLeadersZnodeMakesTheFirstStandbyLead() {
        List<String> before = List.of("candidate-0000000007", "candidate-0000000008", "candidate-0000000009");
        assertEquals(1, ElectionOrder.of(before).position("candidate-0000000008"));
        ElectionOrder after = ElectionOrder.of(before.subList(1, 3));
        assertEquals(0, after.position("candidate-0000000008"));
        assertEquals(1, after.position("candidate-0000000009"), "the second standby moves up to first standby");
    }

    @Test
    void otherChildrenOfTheElectionZnodeAreIgnored() {
        ElectionOrder o = ElectionOrder.of(List.of("lock", "candidate-", "candidate-12x", "candidate-0000000005",
                "zz-0000000001"));
        assertEquals(List.of("candidate-0000000005"), o.candidates());
        assertEquals(-1, ElectionOrder.sequence("candidate-"));
        assertEquals(5, ElectionOrder.sequence("candidate-0000000005"));
    }

    @Test
    void sequenceNumbersPastTheTenDigitFormatStillOrderNumerically() {
        // ZooKeeper's counter is a signed int printed with 10 digits; compare numbers, not strings.
        ElectionOrder o = ElectionOrder.of(List.of("candidate-2147483647", "candidate-0000000999"));
        assertEquals("candidate-0000000999", o.candidates().get(0));
    }
}
