package io.sibyl.client;

import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;

import static io.sibyl.client.TestSupport.CF;
import static io.sibyl.client.TestSupport.b;
import static io.sibyl.client.TestSupport.get;
import static io.sibyl.client.TestSupport.put;
import static io.sibyl.client.TestSupport.scan;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

/**
 * Cells with more versions than one read fetches ({@value #FETCH} here): the reader walks down through invisible
 * versions (uncommitted, committed after its start, aborted and not cleaned up) and fetches deeper ones.
 */
@ExtendWith(MiniCluster.class)
class ManyVersionsTest {
    static final int FETCH = 2;
    private static TransactionManager tm;
    private TTable t;

    @BeforeAll
    static void manager() throws Exception {
        tm = MiniCluster.get().manager(Map.of(TransactionManager.READ_VERSIONS, Integer.toString(FETCH),
                TransactionManager.WRITE_BUFFER_BYTES, "0"));
    }

    @AfterAll
    static void close() {
        tm.close();
    }

    @BeforeEach
    void table() throws Exception {
        MiniCluster c = MiniCluster.get();
        t = new TTable(c.connection(), c.createTable("versions", "cf"));
    }

    @Test
    void readerWalksPastManyUncommittedVersionsInGetsMultiGetsAndScans() throws Exception {
        Transaction base = tm.begin();
        for (String row : List.of("r1", "r2", "r3")) {
            put(t, base, row, "v", "base-" + row);
            put(t, base, row, "w", "w-" + row);
        }
        tm.commit(base);
        // 12 writers start, and write every row, before the reader starts; they stay uncommitted
        List<Transaction> writers = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            Transaction w = tm.begin();
            writers.add(w);
            for (String row : List.of("r1", "r2", "r3")) {
                put(t, w, row, "v", "dirty-" + i);
            }
        }
        Transaction reader = tm.begin();
        assertEquals("base-r1", get(t, reader, "r1"));
        Result[] multi = t.get(reader, List.of(new Get(b("r1")), new Get(b("r2")), new Get(b("r3"))));
        for (int i = 0; i < 3; i++) {
            assertEquals("base-r" + (i + 1), Bytes.toString(multi[i].getValue(CF, b("v"))));
            assertEquals(2, multi[i].size());
        }
        Map<String, Map<String, String>> rows = scan(t, reader, new Scan());
        assertEquals(3, rows.size());
        assertEquals(Map.of("cf:v", "base-r2", "cf:w", "w-r2"), rows.get("r2"));
        // one of them commits after the reader started: still invisible to it, visible to a later reader
        tm.commit(writers.get(5));
        assertEquals("base-r3", get(t, reader, "r3"));
        Transaction later = tm.begin();
        assertEquals("dirty-5", get(t, later, "r3"));
        assertEquals(Map.of("cf:v", "dirty-5", "cf:w", "w-r1"), scan(t, later, new Scan()).get("r1"));
        for (Transaction w : writers) {
            if (w.getStatus() == Transaction.Status.RUNNING) {
                assertEquals(RollbackException.Reason.CONFLICT,
                        org.junit.jupiter.api.Assertions.assertThrows(RollbackException.class, () -> tm.commit(w))
                                .getReason());
            }
        }
        tm.commit(reader);
        tm.commit(later);
    }

    @Test
    void longCommittedHistoryIsReadAtEverySnapshot() throws Exception {
        // W_i starts, then R_i starts, then W_i commits: R_i must read W_(i-1)'s value past W_i's newer version
        List<Transaction> readers = new ArrayList<>();
        for (int i = 0; i < 40; i++) {
            Transaction w = tm.begin();
            Transaction r = tm.begin();
            readers.add(r);
            put(t, w, "hot", "v" + i);
            tm.commit(w);
        }
        assertNull(get(t, readers.get(0), "hot"));
        for (int i = 1; i < readers.size(); i++) {
            assertEquals("v" + (i - 1), get(t, readers.get(i), "hot"), "reader " + i);
            assertEquals(List.of("hot"), TestSupport.rows(t, readers.get(i), new Scan()));
            tm.commit(readers.get(i));
        }
        tm.commit(readers.get(0));
        Transaction last = tm.begin();
        assertEquals("v39", get(t, last, "hot"));
        tm.commit(last);
    }

    @Test
    void versionsOfAClientThatVanishedAreSkipped() throws Exception {
        Transaction base = tm.begin();
        put(t, base, "k", "committed");
        tm.commit(base);
        MiniCluster c = MiniCluster.get();
        TransactionManager crashing = c.manager(Map.of(TransactionManager.WRITE_BUFFER_BYTES, "0"));
        for (int i = 0; i < 5; i++) {
            put(t, crashing.begin(), "k", "orphan-" + i);
        }
        crashing.oracle().close(); // like a crash: no rollback, no clean-up; the oracle aborts its transactions
        Transaction reader = tm.begin();
        assertEquals("committed", get(t, reader, "k"));
        assertEquals(Map.of("k", Map.of("cf:v", "committed")), scan(t, reader, new Scan()));
        tm.commit(reader);
        crashing.getConnection().close();
    }
}
