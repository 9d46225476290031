package io.sibyl.ycsb;

import io.sibyl.client.SnapshotExpiredException;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;
import site.ycsb.StringByteIterator;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.Vector;
import java.util.concurrent.CompletableFuture;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** {@link SibylClient} called directly, in the test JVM, for the semantics YCSB expects of a binding. */
@ExtendWith(StackExtension.class)
class YcsbBindingTest {

    private static SibylClient client(String table) throws DBException {
        return client(table, Map.of());
    }

    private static SibylClient client(String table, Map<String, String> extra) throws DBException {
        Properties p = new Properties();
        extra.forEach(p::setProperty);
        for (String kv : StackExtension.stack().ycsbProperties()) {
            p.setProperty(kv.substring(0, kv.indexOf('=')), kv.substring(kv.indexOf('=') + 1));
        }
        p.setProperty(BindingSettings.TABLE, table);
        SibylClient c = new SibylClient();
        c.setProperties(p);
        c.init();
        return c;
    }

    private static Map<String, ByteIterator> fields(String... kv) {
        Map<String, ByteIterator> m = new HashMap<>();
        for (int i = 0; i < kv.length; i += 2) {
            m.put(kv[i], new StringByteIterator(kv[i + 1]));
        }
        return m;
    }

    private static Map<String, String> strings(Map<String, ByteIterator> m) {
        Map<String, String> s = new HashMap<>();
        m.forEach((k, v) -> s.put(k, v.toString()));
        return s;
    }

    @Test
    void readWithoutFieldsReturnsEveryFieldAndWithFieldsOnlyThose() throws Exception {
        String table = StackExtension.table("fields");
        DB db = client(table);
        try {
            assertEquals(Status.OK, db.insert(table, "k1", fields("f0", "a", "f1", "b", "f2", "c")));
            Map<String, ByteIterator> all = new HashMap<>();
            assertEquals(Status.OK, db.read(table, "k1", null, all));
            assertEquals(Map.of("f0", "a", "f1", "b", "f2", "c"), strings(all));
            Map<String, ByteIterator> some = new HashMap<>();
            assertEquals(Status.OK, db.read(table, "k1", Set.of("f1"), some));
            assertEquals(Map.of("f1", "b"), strings(some));

            assertEquals(Status.OK, db.update(table, "k1", fields("f1", "B")));
            Map<String, ByteIterator> after = new HashMap<>();
            assertEquals(Status.OK, db.read(table, "k1", null, after));
            assertEquals(Map.of("f0", "a", "f1", "B", "f2", "c"), strings(after), "an update changes only its fields");

            assertEquals(Status.NOT_FOUND, db.read(table, "missing", null, new HashMap<>()));
            assertEquals(Status.OK, db.delete(table, "k1"));
            assertEquals(Status.NOT_FOUND, db.read(table, "k1", null, new HashMap<>()));
        } finally {
            db.cleanup();
        }
    }

    @Test
    void readsAndScansTakeEitherPathAndSeeThisClientsWrites() throws Exception {
        String table = StackExtension.table("paths");
        DB fast = client(table, Map.of(BindingSettings.READS, "latest", BindingSettings.SCANS, "readonly"));
        DB ordinary = client(table, Map.of(BindingSettings.READS, "transaction", BindingSettings.SCANS,
                "transaction"));
        try {
            for (int i = 0; i < 5; i++) {
                assertEquals(Status.OK, fast.insert(table, "user" + i, fields("n", Integer.toString(i))));
                for (DB db : List.of(fast, ordinary)) {
                    Map<String, ByteIterator> got = new HashMap<>();
                    assertEquals(Status.OK, db.read(table, "user" + i, null, got));
                    assertEquals(Map.of("n", Integer.toString(i)), strings(got));
                    Vector<HashMap<String, ByteIterator>> rows = new Vector<>();
                    assertEquals(Status.OK, db.scan(table, "user0", 10, null, rows));
                    assertEquals(i + 1, rows.size(), "a scan after insert " + i);
                }
            }
        } finally {
            fast.cleanup();
            ordinary.cleanup();
        }
        DBException bad = assertThrows(DBException.class,
                () -> client(table, Map.of(BindingSettings.SCANS, "stale")));
        assertTrue(bad.getMessage().contains(BindingSettings.SCANS), bad.getMessage());
    }

    @Test
    void scanReturnsRecordcountRecordsInKeyOrderFromTheStartKey() throws Exception {
        String table = StackExtension.table("scan");
        DB db = client(table);
        try {
            for (int i = 9; i >= 0; i--) {
                assertEquals(Status.OK, db.insert(table, "user" + i, fields("n", Integer.toString(i), "x", "y")));
            }
            Vector<HashMap<String, ByteIterator>> rows = new Vector<>();
            assertEquals(Status.OK, db.scan(table, "user3", 4, Set.of("n"), rows));
            List<String> seen = new ArrayList<>();
            rows.forEach(r -> seen.add(strings(r).toString()));
            assertEquals(List.of("{n=3}", "{n=4}", "{n=5}", "{n=6}"), seen);

            // Deleted records take no place in the count: the scan goes on past them.
            for (int i = 4; i <= 6; i++) {
                assertEquals(Status.OK, db.delete(table, "user" + i));
            }
            Vector<HashMap<String, ByteIterator>> skipping = new Vector<>();
            assertEquals(Status.OK, db.scan(table, "user3", 4, Set.of("n"), skipping));
            List<String> kept = new ArrayList<>();
            skipping.forEach(r -> kept.add(strings(r).toString()));
            assertEquals(List.of("{n=3}", "{n=7}", "{n=8}", "{n=9}"), kept);

            Vector<HashMap<String, ByteIterator>> tail = new Vector<>();
            assertEquals(Status.OK, db.scan(table, "user8", 100, null, tail));
            assertEquals(2, tail.size(), "a scan stops at the end of the table");
            assertEquals(Map.of("n", "8", "x", "y"), strings(tail.get(0)));
        } finally {
            db.cleanup();
        }
    }

    @Test
    void writesOfMissingOrExistingKeysBehaveAsHBaseBindingsDo() throws Exception {
        String table = StackExtension.table("upsert");
        DB db = client(table);
        try {
            // YCSB's HBase bindings: an update or an insert is a put (creates or overwrites), a delete of nothing is OK.
            assertEquals(Status.OK, db.update(table, "new", fields("f1", "x")));
            Map<String, ByteIterator> created = new HashMap<>();
            assertEquals(Status.OK, db.read(table, "new", null, created));
            assertEquals(Map.of("f1", "x"), strings(created));
            assertEquals(Status.OK, db.insert(table, "new", fields("f0", "a", "f1", "y")));
            Map<String, ByteIterator> over = new HashMap<>();
            assertEquals(Status.OK, db.read(table, "new", Set.of("f1", "f9"), over));
            assertEquals(Map.of("f1", "y"), strings(over), "a field the record lacks is left out");
            assertEquals(Status.NOT_FOUND, db.read(table, "new", Set.of("f9"), new HashMap<>()));
            assertEquals(Status.OK, db.delete(table, "never-there"));
            Vector<HashMap<String, ByteIterator>> none = new Vector<>();
            assertEquals(Status.OK, db.scan(table, "zzz", 10, null, none));
            assertTrue(none.isEmpty());
        } finally {
            db.cleanup();
        }
    }

    @Test
    void aConflictInsideAScopeIsReportedAsConflictAndTheWriteIsDiscarded() throws Exception {
        String table = StackExtension.table("conflict");
        DB db = client(table);
        DB other = client(table);
        try {
            assertEquals(Status.OK, db.insert(table, "k", fields("v", "0")));
            Status outcome;
            try (TransactionScope scope = TransactionScope.open()) {
                assertEquals(Status.OK, db.read(table, "k", null, new HashMap<>()));
                assertEquals(Status.OK, db.update(table, "k", fields("v", "scoped")));
                // A concurrent writer on another thread commits first: its update is a transaction of its own.
                Status concurrent = CompletableFuture.supplyAsync(() -> other.update(table, "k", fields("v", "other")))
                        .join();
                assertEquals(Status.OK, concurrent);
                outcome = scope.commit();
            }
            assertEquals(Outcomes.CONFLICT, outcome);
            assertEquals("CONFLICT", outcome.getName());
            assertFalse(outcome.isOk());
            Map<String, ByteIterator> now = new HashMap<>();
            assertEquals(Status.OK, db.read(table, "k", null, now));
            assertEquals(Map.of("v", "other"), strings(now), "the losing transaction's write is gone");
        } finally {
            db.cleanup();
            other.cleanup();
        }
    }

    @Test
    void anExpiredSnapshotInsideAScopeIsARetryableRollbackNotAnError() throws Exception {
        // What a read throws when the oracle connection was lost too long (or the transaction outlived the oracle's
        // max age): the transaction can only roll back, and a new one may well succeed (the closed economy retries).
        String table = StackExtension.table("expired");
        DB db = client(table);
        try {
            assertEquals(Status.OK, db.insert(table, "k", fields("v", "1")));
            try (TransactionScope scope = TransactionScope.open()) {
                assertEquals(Status.OK, db.read(table, "k", null, new HashMap<>()));
                scope.fail(new SnapshotExpiredException(scope.transaction(), "the test says so"));
                Status outcome = scope.commit();
                assertEquals(Outcomes.SNAPSHOT_EXPIRED, outcome);
                assertTrue(Outcomes.isRetryable(outcome));
                assertEquals(io.sibyl.client.Transaction.Status.ROLLED_BACK, scope.transaction().getStatus());
            }
        } finally {
            db.cleanup();
        }
    }

    @Test
    void callsInsideAScopeSeeOneSnapshotAndCommitTogether() throws Exception {
        String table = StackExtension.table("scope");
        DB db = client(table);
        try {
            try (TransactionScope scope = TransactionScope.open()) {
                assertEquals(Status.OK, db.insert(table, "a", fields("v", "1")));
                assertEquals(Status.OK, db.insert(table, "b", fields("v", "2")));
                Map<String, ByteIterator> own = new HashMap<>();
                assertEquals(Status.OK, db.read(table, "a", null, own), "a scope reads its own writes");
                Status invisible = CompletableFuture.supplyAsync(() -> db.read(table, "a", null, new HashMap<>()))
                        .join();
                assertEquals(Status.NOT_FOUND, invisible, "uncommitted writes are invisible to other threads");
                assertEquals(Status.OK, scope.commit());
            }
            try (TransactionScope scope = TransactionScope.open()) {
                assertEquals(Status.OK, db.delete(table, "a"));
                // closed without commit: rolled back
            }
            assertEquals(Status.OK, db.read(table, "a", null, new HashMap<>()));
            assertEquals(Status.OK, db.read(table, "b", null, new HashMap<>()));
            try (TransactionScope scope = TransactionScope.open()) {
                assertThrows(IllegalStateException.class, TransactionScope::open, "scopes do not nest");
            }
        } finally {
            db.cleanup();
        }
    }

    @Test
    void clientThreadsShareOneManagerThatTheLastCleanupCloses() throws Exception {
        String table = StackExtension.table("shared");
        int before = SharedManager.users();
        DB a = client(table);
        DB b = client(table);
        assertEquals(before + 2, SharedManager.users());
        a.cleanup();
        assertEquals(Status.OK, b.insert(table, "still", fields("v", "works")), "one cleanup leaves the other");
        b.cleanup();
        assertEquals(before, SharedManager.users());
        assertTrue(FailingExit.reasons().stream().noneMatch(r -> r.contains(table)), "nothing here fails a run");
    }

    @Test
    void aMissingTableFailsInitButLeavesTheExitStatusOfAJvmThatIsNotYcsbsAlone() {
        // A test or program calling the binding gets the exception; only YCSB's Client has its exit status forced
        // to 1 (here it would fail the build after every test passed).
        DBException e = assertThrows(DBException.class, () -> client("no_such_table_in_jvm"));
        assertTrue(e.getMessage().contains("table 'no_such_table_in_jvm' does not exist in HBase"), e.getMessage());
        assertFalse(FailingExit.armed());
    }
}
