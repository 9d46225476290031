package io.sibyl.client.oracle;

import io.netty.buffer.Unpooled;
import io.sibyl.protocol.AbortedRange;
import org.junit.jupiter.api.Test;

import java.util.List;

import static io.sibyl.client.oracle.ReplicaAbortedRangeTest.block;
import static org.junit.jupiter.api.Assertions.assertEquals;

/**
 * A replica keeps what it forgets while a read of the past runs: such a read may have fetched an aborted version
 * before its delete, and must not read it as committed once the oracle forgets the abort.
 */
class ReplicaPastReadersTest {

    @Test
    void anAbortForgottenDuringAReadOfThePastStaysAbortedForItUntilItEnds() {
        CommitReplica r = new CommitReplica(1001, 900, new long[] {300});
        assertEquals(Visibility.INVISIBLE, r.pastVisibility(300));
        assertEquals(Visibility.VISIBLE, r.pastVisibility(400), "finished before the point, not aborted");
        long first = r.pastReaderBegins();
        r.apply(Unpooled.wrappedBuffer(block(1001, w -> w.forget(300))));
        assertEquals(Visibility.INVISIBLE, r.pastVisibility(300), "forgotten while the read ran");
        long second = r.pastReaderBegins();
        r.pastReaderEnds(first);
        assertEquals(Visibility.INVISIBLE, r.pastVisibility(300), "one read of the past still runs");
        r.pastReaderEnds(second);
        assertEquals(Visibility.VISIBLE, r.pastVisibility(300), "no read of the past left: let go");
    }

    @Test
    void aRangeForgottenDuringAReadOfThePastStillJudgesItsWriters() {
        CommitReplica r = new CommitReplica(3001, 2500, new long[0],
                List.of(new AbortedRange(100, 1000, new long[] {150})));
        long token = r.pastReaderBegins();
        r.apply(Unpooled.wrappedBuffer(block(3001, w -> w.forgetRange(100, 1000))));
        assertEquals(Visibility.INVISIBLE, r.pastVisibility(500), "in doubt at the crash: aborted");
        assertEquals(Visibility.VISIBLE, r.pastVisibility(150), "listed as committed");
        assertEquals(Visibility.VISIBLE, r.pastVisibility(50), "below the range");
        r.pastReaderEnds(token);
        assertEquals(Visibility.VISIBLE, r.pastVisibility(500), "range forgotten, no read of the past left");
    }

    @Test
    void aReadOfThePastItsApplicationLeakedStopsKeepingForgottenAborts() throws InterruptedException {
        CommitReplica r = new CommitReplica(1001, 900, new long[] {300, 310});
        r.expireReadersAfter(1); // every read of the past is over its age at once (plus the margin)
        r.pastReaderBegins(); // never ended
        r.apply(Unpooled.wrappedBuffer(block(1001, w -> w.forget(300))));
        assertEquals(Visibility.INVISIBLE, r.pastVisibility(300), "within the margin it still counts");
        Thread.sleep(1_100); // past the margin
        r.apply(Unpooled.wrappedBuffer(block(1001, w -> w.forget(310))));
        assertEquals(Visibility.VISIBLE, r.pastVisibility(300), "the leaked read no longer holds them");
        assertEquals(Visibility.VISIBLE, r.pastVisibility(310));
    }

    @Test
    void aRangeWithoutItsCommitsIsAskedAbout() {
        CommitReplica r = new CommitReplica(2001, 100, new long[0]);
        r.apply(Unpooled.wrappedBuffer(block(2000, w -> w.abortRange(1000, 2000))));
        assertEquals(Visibility.ASK_ORACLE, r.pastVisibility(1500));
    }
}
