package io.sibyl.client;

import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.sibyl.oracle.HistorySettings;
import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Increment;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * The examples of docs/user-guide.md, run against the minicluster. Each block between {@code // guide:NAME} and
 * {@code // guide:end} must appear verbatim (de-indented) in the guide; {@link #guideShowsTheCodeThatRuns} checks it.
 */
@ExtendWith(MiniCluster.class)
class UserGuideExampleTest {
    static final Path GUIDE = Path.of("..", "docs", "user-guide.md");
    static final Path SOURCE = Path.of("src", "test", "java", "io", "sibyl", "client", "UserGuideExampleTest.java");

    static void createTable(Connection connection) throws IOException {
        // guide:create-table
        try (Admin admin = connection.getAdmin()) {
            admin.createTable(TableDescriptorBuilder.newBuilder(TableName.valueOf("accounts"))
                    .setColumnFamily(TTable.familyDescriptor("cf")) // keeps every version, no TTL
                    .build());
        }
        // guide:end
    }

    static long example(Configuration conf) throws IOException, RollbackException {
        // guide:example
        byte[] cf = Bytes.toBytes("cf");
        byte[] balance = Bytes.toBytes("balance");
        try (TransactionManager tm = TransactionManager.create(conf); // conf has sibyl.oracle.address=host:port
             TTable accounts = new TTable(tm.getConnection(), TableName.valueOf("accounts"))) {

            // 1. An explicit transaction: writes are buffered and become visible atomically at commit.
            Transaction tx = tm.begin();
            accounts.put(tx, new Put(Bytes.toBytes("alice")).addColumn(cf, balance, Bytes.toBytes(100L)));
            accounts.put(tx, new Put(Bytes.toBytes("bob")).addColumn(cf, balance, Bytes.toBytes(50L)));
            accounts.put(tx, new Put(Bytes.toBytes("carol")).addColumn(cf, balance, Bytes.toBytes(0L)));
            tm.commit(tx); // throws RollbackException if a concurrent transaction wrote one of these rows first

            // 2. The retry helper: begins, runs, commits, and runs the function again after a conflict.
            tm.run(t -> {
                try {
                    long alice = Bytes.toLong(accounts.get(t, new Get(Bytes.toBytes("alice"))).getValue(cf, balance));
                    long bob = Bytes.toLong(accounts.get(t, new Get(Bytes.toBytes("bob"))).getValue(cf, balance));
                    accounts.put(t, new Put(Bytes.toBytes("alice")).addColumn(cf, balance, Bytes.toBytes(alice - 30)));
                    accounts.put(t, new Put(Bytes.toBytes("bob")).addColumn(cf, balance, Bytes.toBytes(bob + 30)));
                    return null;
                } catch (IOException e) {
                    throw new UncheckedIOException(e); // run() takes a Function: wrap checked exceptions
                }
            });

            // 3. Deletes are transactional too, and a transaction reads its own writes.
            Transaction close = tm.begin();
            accounts.delete(close, new Delete(Bytes.toBytes("carol")));
            boolean stillThere = accounts.exists(close, new Get(Bytes.toBytes("carol"))); // false: own delete
            tm.rollback(close); // changed our mind: carol stays

            // 4. A read-only transaction: one consistent snapshot, committed locally without a round trip.
            Transaction audit = tm.begin();
            long total = 0;
            try (ResultScanner scanner = accounts.getScanner(audit, new Scan().addColumn(cf, balance))) {
                for (Result r : scanner) {
                    total += Bytes.toLong(r.getValue(cf, balance));
                }
            }
            tm.commit(audit);
            System.out.println("total " + total + ", carol deleted inside the rolled-back transaction: " + !stillThere);
            return total; // 150
        }
        // guide:end
    }

    @Test
    void guideExampleRuns() throws Exception {
        MiniCluster c = MiniCluster.get();
        createTable(c.connection());
        assertEquals(150, example(c.configuration()));
        try (TransactionManager tm = c.manager();
             TTable accounts = new TTable(c.connection(), TableName.valueOf("accounts"))) {
            Transaction check = tm.begin();
            byte[] cf = Bytes.toBytes("cf");
            byte[] balance = Bytes.toBytes("balance");
            assertEquals(70, Bytes.toLong(accounts.get(check, new Get(Bytes.toBytes("alice"))).getValue(cf, balance)));
            assertEquals(80, Bytes.toLong(accounts.get(check, new Get(Bytes.toBytes("bob"))).getValue(cf, balance)));
            assertTrue(accounts.exists(check, new Get(Bytes.toBytes("carol"))));
            tm.commit(check);
        }
    }

    /** Binds {@code tm}'s meters to a registry and commits one transaction; returns the begins it recorded. */
    static long metricsExample(TransactionManager tm) throws RollbackException {
        // guide:metrics
        MeterRegistry registry = new SimpleMeterRegistry(); // or the application's: Prometheus, JMX, StatsD, ...
        tm.metrics().bindTo(registry); // ClientMetrics is a Micrometer MeterBinder
        tm.commit(tm.begin());
        long begins = registry.get("sibyl.client.begin").timer().count(); // 1: what follows the binding
        // guide:end
        return begins;
    }

    @Test
    void guideMetricsExampleRecordsIntoTheApplicationsRegistry() throws Exception {
        try (TransactionManager tm = MiniCluster.get().manager()) {
            tm.commit(tm.begin()); // before the binding: recorded nowhere
            assertEquals(1, metricsExample(tm));
        }
    }

    /** Counts a page hit in a transaction retried on conflict; returns the new count. */
    static long countHit(TransactionManager tm, TTable table) throws RollbackException {
        byte[] CF = Bytes.toBytes("cf");
        // guide:counter
        long hits = tm.run(tx -> {
            try {
                return table.incrementColumnValue(tx, Bytes.toBytes("home"), CF, Bytes.toBytes("hits"), 1);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
        // guide:end
        return hits;
    }

    @Test
    void guideCounterExampleCountsEveryHit() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("guide_counter", "cf");
        try (TransactionManager tm = c.manager(); TTable table = new TTable(c.connection(), name)) {
            assertEquals(1, countHit(tm, table));
            assertEquals(2, countHit(tm, table));
        }
    }

    /** Writes one row and counts a visit, each a transaction of its own; returns the new count. */
    static long singleRowExample(TransactionManager tm, TTable table, byte[] row) throws IOException,
            RollbackException {
        byte[] CF = Bytes.toBytes("cf");
        // guide:single-row
        table.put(tm, new Put(row).addColumn(CF, Bytes.toBytes("owner"), Bytes.toBytes("ada")));
        long visits = Bytes.toLong(table.increment(tm, new Increment(row).addColumn(CF, Bytes.toBytes("visits"), 1))
                .getValue(CF, Bytes.toBytes("visits")));
        // guide:end
        return visits;
    }

    /** Reads {@code row} as it was when {@code tx} committed. */
    static Result pastExample(TransactionManager tm, TTable table, Transaction tx, byte[] row) throws IOException,
            RollbackException {
        // guide:past
        long before = tx.getCommitTimestamp(); // a start or commit timestamp the application kept
        Transaction then = tm.beginAt(before); // or tm.beginAt(Instant.now().minus(Duration.ofMinutes(5)))
        Result old = table.get(then, new Get(row)); // gets and scans as usual; writes are refused
        tm.commit(then); // ends it without the oracle
        // guide:end
        return old;
    }

    @Test
    void guidePastExampleReadsTheRowAsItWas() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("guide_past", "cf");
        byte[] cf = Bytes.toBytes("cf");
        byte[] row = Bytes.toBytes("alice");
        try (OracleServer oracle = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withHistory(new HistorySettings(3_600_000, 1000, 64L << 20)));
             TransactionManager tm = TransactionManager.create(c.connection(), "127.0.0.1", oracle.port());
             TTable table = new TTable(c.connection(), name)) {
            Transaction tx = tm.begin();
            table.put(tx, new Put(row).addColumn(cf, cf, Bytes.toBytes("before")));
            tm.commit(tx);
            Transaction later = tm.begin();
            table.put(later, new Put(row).addColumn(cf, cf, Bytes.toBytes("after")));
            tm.commit(later);
            assertEquals("before", Bytes.toString(pastExample(tm, table, tx, row).getValue(cf, cf)));
        }
    }

    @Test
    void guideSingleRowExampleCommitsWithoutTheCoprocessorToo() throws Exception {
        MiniCluster c = MiniCluster.get();
        TableName name = c.createTable("guide_single_row", "cf");
        try (TransactionManager tm = c.manager(); TTable table = new TTable(c.connection(), name)) {
            assertEquals(1, singleRowExample(tm, table, Bytes.toBytes("page")));
            assertEquals(2, singleRowExample(tm, table, Bytes.toBytes("page")));
            assertFalse(table.offersFastPath(), "no fast-path coprocessor on this table: the ordinary path ran");
        }
    }

    @Test
    void guideShowsTheCodeThatRuns() throws IOException {
        String guide = Files.readString(GUIDE, StandardCharsets.UTF_8);
        List<String> blocks = blocks(Files.readString(SOURCE, StandardCharsets.UTF_8));
        assertEquals(6, blocks.size());
        for (String block : blocks) {
            assertTrue(guide.contains(block), "docs/user-guide.md must contain this block from " + SOURCE
                    + " verbatim:\n" + block);
        }
        assertFalse(blocks.get(1).isBlank());
        // And the other way round: an example added to the guide without a test here fails the build.
        Matcher java = Pattern.compile("(?m)^```java\\n((?:.*\\n)*?)```$").matcher(guide);
        int examples = 0;
        while (java.find()) {
            examples++;
            assertTrue(blocks.contains(java.group(1)), "this example of docs/user-guide.md runs nowhere: add it to "
                    + SOURCE + " between // guide:NAME and // guide:end\n" + java.group(1));
        }
        assertEquals(blocks.size(), examples, "every block of " + SOURCE + " appears in the guide once");
    }

    /** The de-indented text between each {@code // guide:NAME} marker and the next {@code // guide:end}. */
    static List<String> blocks(String source) {
        List<String> out = new ArrayList<>();
        Matcher m = Pattern.compile("(?m)^\\s*// guide:(?!end)\\S+\\n((?:.*\\n)*?)\\s*// guide:end").matcher(source);
        while (m.find()) {
            String[] lines = m.group(1).split("\n");
            int indent = Integer.MAX_VALUE;
            for (String l : lines) {
                if (!l.isBlank()) {
                    indent = Math.min(indent, l.length() - l.stripLeading().length());
                }
            }
            StringBuilder b = new StringBuilder();
            for (String l : lines) {
                b.append(l.isBlank() ? "" : l.substring(indent)).append('\n');
            }
            out.add(b.toString());
        }
        return out;
    }
}
