package io.sibyl.oracle;

import org.junit.jupiter.api.Test;

import java.util.HashMap;
import java.util.Map;
import java.util.Random;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/** The bounded lastCommit map of Algorithm 3 and the T_max it maintains. */
class ConflictTableTest {

    @Test
    void rememberedRowsReturnTheirLastCommitAndUnknownRowsReturnZero() {
        ConflictTable table = new ConflictTable(1024);
        table.record(42, 7);
        table.record(-5, 9); // row ids are hashes and may be negative
        table.record(0, 11);
        assertEquals(7, table.lastCommit(42));
        assertEquals(9, table.lastCommit(-5));
        assertEquals(11, table.lastCommit(0));
        assertEquals(0, table.lastCommit(43));
        assertEquals(0, table.lastCommit(Long.MIN_VALUE));
        assertEquals(0, table.tMax(), "nothing was evicted");
    }

    @Test
    void emptyTableKnowsNoRowNotEvenRowZero() {
        ConflictTable table = new ConflictTable(8);
        assertEquals(0, table.lastCommit(0));
        assertEquals(0, table.lastCommit(1));
        assertEquals(0, table.tMax());
    }

    @Test
    void capacityIsRoundedUpAndNeverBelowOneBucketPair() {
        assertTrue(new ConflictTable(1).capacity() >= ConflictTable.WAYS);
        assertTrue(new ConflictTable(100).capacity() >= 100);
        assertEquals(1024, new ConflictTable(1024).capacity());
    }

    @Test
    void recommittingARowUpdatesItInPlaceWithoutEvicting() {
        ConflictTable table = new ConflictTable(16);
        // At most WAYS distinct rows: they fit whatever buckets they hash to.
        long ts = 0;
        for (int row = 1; row <= ConflictTable.WAYS; row++) {
            table.record(row, ++ts);
        }
        for (int round = 0; round < 50; round++) {
            for (int row = 1; row <= ConflictTable.WAYS; row++) {
                table.record(row, ++ts);
                assertEquals(ts, table.lastCommit(row));
            }
        }
        assertEquals(0, table.tMax(), "updating remembered rows must never evict");
        for (int row = 1; row <= ConflictTable.WAYS; row++) {
            assertEquals(ts - ConflictTable.WAYS + row, table.lastCommit(row));
        }
    }

    @Test
    void evictionRaisesTmaxToTheEvictedCommitTimestamp() {
        ConflictTable table = new ConflictTable(16); // 2 buckets of 8: the 17th distinct row must evict
        Map<Long, Long> last = new HashMap<>();
        long ts = 100;
        int evictions = 0;
        for (long row = 1; row <= 17; row++) {
            long before = table.tMax();
            table.record(row, ++ts);
            last.put(row, ts);
            Long evicted = null;
            for (Map.Entry<Long, Long> e : last.entrySet()) {
                if (table.lastCommit(e.getKey()) == 0) {
                    if (evicted != null) {
                        fail("one record evicted two rows");
                    }
                    evicted = e.getKey();
                }
            }
            if (evicted == null) {
                assertEquals(before, table.tMax(), "T_max moved without an eviction");
            } else {
                evictions++;
                assertEquals(Math.max(before, last.get(evicted)), table.tMax(),
                        "T_max must rise exactly to the evicted row's commit timestamp");
                last.remove(evicted);
            }
        }
        assertTrue(evictions >= 1, "17 distinct rows in 16 slots must evict");
        assertTrue(table.tMax() > 100);
    }

    @Test
    void firstEvictionTakesTheOldestEntryOfTheBucket() {
        // Rows recorded in increasing timestamp order; the first eviction in any bucket removes that bucket's
        // oldest entry, which is older than the 8 entries that remain with it. So exactly 8 rows of the same bucket
        // must remain with a larger timestamp: we check the evicted timestamp is not among the newest 8 recorded.
        ConflictTable table = new ConflictTable(16);
        long ts = 0;
        long row = 0;
        while (table.tMax() == 0) {
            table.record(++row, ++ts);
        }
        long evictedTs = table.tMax();
        assertTrue(evictedTs <= ts - ConflictTable.WAYS, "evicted " + evictedTs + " although only " + ts
                + " were recorded: an entry younger than 8 of its bucket mates was evicted");
        assertEquals(0, table.lastCommit(evictedTs), "row " + evictedTs + " (recorded at ts " + evictedTs
                + ") is the one evicted");
    }

    @Test
    void everyForgottenRowWasLastCommittedAtOrBelowTmax() {
        Random random = new Random(7);
        ConflictTable table = new ConflictTable(64);
        Map<Long, Long> last = new HashMap<>();
        long ts = 0;
        for (int i = 0; i < 20_000; i++) {
            long row = random.nextInt(500) - 250;
            ts += 1 + random.nextInt(3);
            table.record(row, ts);
            last.put(row, ts);
            if (i % 97 == 0) {
                for (Map.Entry<Long, Long> e : last.entrySet()) {
                    long remembered = table.lastCommit(e.getKey());
                    if (remembered == 0) {
                        assertTrue(e.getValue() <= table.tMax(), "row " + e.getKey() + " last committed at "
                                + e.getValue() + " is forgotten but T_max is only " + table.tMax());
                    } else {
                        assertEquals(e.getValue(), remembered, "a remembered row must have its latest commit");
                    }
                }
            }
        }
        assertTrue(table.tMax() > 0 && table.tMax() < ts);
    }
}
