package io.sibyl.admin;

import io.sibyl.client.TTable;
import io.sibyl.client.TransactionManager;
import io.sibyl.client.oracle.OracleClient;
import io.sibyl.client.oracle.TransactionStatus;
import io.sibyl.embedded.EmbeddedHBase;
import io.sibyl.oracle.ha.OracleProcess;
import io.sibyl.oracle.journal.BookKeeperCluster;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.HConstants;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptor;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Increment;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptor;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * Every {@code bin/sibyl} command against one running cluster for the class: ZooKeeper and 3 bookies in process, an
 * HA pair of oracles in their own JVMs (a leader and a standby, with an admin secret), and the HBase minicluster.
 */
@Timeout(value = 5, unit = TimeUnit.MINUTES)
class SibylCliTest {
    @RegisterExtension
    static final BookKeeperCluster BOOKIES = BookKeeperCluster.perTestClass(3);
    private static final String GROUP = "/cli";
    @TempDir
    static Path dir;
    private static Path secret;
    private static final List<OracleProcess> ORACLES = new ArrayList<>();
    private static int leaderPort;
    private static EmbeddedHBase hbase;

    @BeforeAll
    static void startCluster() throws Exception {
        // HBase first: its start-up takes every core for seconds, which could cost a running leader its ZooKeeper
        // session. The collector's classes are not on this module's classpath (the hbase-gc-coprocessor tests load it): HBase
        // may accept the attribute enable-table sets and open the table without it.
        hbase = EmbeddedHBase.start(c -> {
            c.setBoolean("hbase.table.sanity.checks", false);
            c.setBoolean("hbase.coprocessor.abortonerror", false);
        });
        secret = dir.resolve("admin.secret");
        Files.writeString(secret, "the-admin-secret-of-the-cli-test-0123456789");
        for (String name : new String[] {"leader", "standby"}) {
            List<String> flags = new ArrayList<>(OracleProcess.haCandidateFlags(BOOKIES.zkConnect(), GROUP));
            flags.add("--admin.secret.file=" + secret);
            if (name.equals("standby")) {
                flags.add("--metrics.http.port=0");
            }
            OracleProcess p = new OracleProcess(name, flags);
            ORACLES.add(p);
            if (name.equals("leader")) {
                leaderPort = p.awaitReady(60_000);
            } else {
                p.owner(60_000); // standing by
            }
        }
    }

    @AfterAll
    static void stopCluster() throws Exception {
        for (OracleProcess p : ORACLES) {
            p.close();
        }
        if (hbase != null) {
            hbase.close();
        }
    }

    @Test
    void aStandbyServesItsRoleAndReplicationLagAsMetrics() throws Exception {
        String line = ORACLES.get(1).awaitLine("STANDBY metrics.port=", 30_000);
        int port = Integer.parseInt(line.substring("STANDBY metrics.port=".length()).trim());
        java.util.regex.Pattern lagLine = java.util.regex.Pattern.compile("\nsibyl_standby_lag_seconds ([0-9.E-]+)");
        String body = scrape(port);
        // NaN until the standby's first poll caught up with the journal, a moment after it starts.
        for (int i = 0; i < 50 && !lagLine.matcher(body).find(); i++) {
            Thread.sleep(200);
            body = scrape(port);
        }
        java.util.regex.Matcher lag = lagLine.matcher(body);
        assertTrue(lag.find(), "the standby's lag is a number once it caught up: " + body);
        assertTrue(body.contains("\nsibyl_oracle_role 0.0"), "role 0, a standby: " + body);
        assertTrue(Double.parseDouble(lag.group(1)) < 10, "an idle standby keeps up: lag " + lag.group(1) + " s");
        assertTrue(body.contains("\nsibyl_standby_entries_replayed_total "), body);
        assertTrue(body.contains("\nsibyl_standby_position 0.0"), "the first standby in line: " + body);
    }

    private static String scrape(int port) throws Exception {
        java.net.http.HttpResponse<String> r = java.net.http.HttpClient.newHttpClient().send(
                java.net.http.HttpRequest.newBuilder(java.net.URI.create("http://127.0.0.1:" + port + "/metrics"))
                        .build(), java.net.http.HttpResponse.BodyHandlers.ofString());
        assertEquals(200, r.statusCode(), r.body());
        return r.body();
    }

    @Test
    void statusShowsTheLeaderTheCandidatesAndTheLeadersFigures() throws Exception {
        java.util.regex.Pattern standbyState =
                java.util.regex.Pattern.compile("\\(standby: lag \\d+ ms, \\d+ journal entries replayed\\)");
        Run attempt = sibyl("status", "--admin-secret-file=" + secret);
        // The standby publishes its state within a second of standing by, and this may be the first test to run.
        for (int i = 0; i < 50 && attempt.exit == 0 && !standbyState.matcher(attempt.out).find(); i++) {
            Thread.sleep(200);
            attempt = sibyl("status", "--admin-secret-file=" + secret);
        }
        Run r = attempt;
        assertEquals(0, r.exit, () -> r.all() + "\nleader alive: " + ORACLES.get(0).process.isAlive() + "\n"
                + ORACLES.get(0).tail());
        assertTrue(r.out.contains("leader:     127.0.0.1:" + leaderPort + " (epoch "), r.out);
        assertTrue(r.out.contains("candidates: 2 in line"), r.out);
        assertTrue(r.out.contains("(leader)"), r.out);
        assertTrue(standbyState.matcher(r.out).find(), "the standby shows its lag: " + r.out);
        for (String figure : new String[] {"t.max", "low.watermark", "running.transactions",
                "aborted.transactions", "aborted.ranges", "connections"}) {
            assertTrue(r.out.contains(figure), figure + " in " + r.out);
        }
        assertTrue(r.out.contains("range.sweep.phase") && r.out.contains("off (range.sweep.tables is empty"),
                "the background range sweep's phase, by name: " + r.out);
        Run withoutSecret = sibyl("status");
        assertEquals(0, withoutSecret.exit, withoutSecret.all());
        assertTrue(withoutSecret.out.contains("give --admin-secret-file"), withoutSecret.out);
    }

    @Test
    void transactionsListsARunningTransactionAndAbortStopsIt() throws Exception {
        try (OracleClient client = OracleClient.connect("127.0.0.1", leaderPort)) {
            long ts = client.begin().get(10, TimeUnit.SECONDS);
            Run list = sibyl("transactions", "--admin-secret-file=" + secret);
            assertEquals(0, list.exit, list.all());
            assertTrue(list.out.contains(Long.toString(ts)) && list.out.contains("running"), list.out);

            Run abort = sibyl("abort", Long.toString(ts), "--admin-secret-file=" + secret);
            assertEquals(0, abort.exit, abort.all());
            assertEquals("aborted transaction " + ts, abort.out.trim());
            assertEquals(TransactionStatus.State.ABORTED,
                    client.query(ts).get(10, TimeUnit.SECONDS).state());

            Run again = sibyl("abort", Long.toString(ts), "--admin-secret-file=" + secret);
            assertEquals(1, again.exit, again.all());
            assertTrue(again.err.contains("is not running"), again.err);
        }
        Run noSecret = sibyl("transactions");
        assertEquals(2, noSecret.exit, noSecret.all());
        assertTrue(noSecret.err.contains("--admin-secret-file"), noSecret.err);
    }

    @Test
    void ledgersShowsTheJournalRegistry() {
        Run r = sibyl("ledgers", "--ledgers-znode=" + GROUP + "/ledgers");
        assertEquals(0, r.exit, r.all());
        assertTrue(r.out.contains("epoch:") && r.out.contains("owner:") && r.out.contains("ledgers:  "), r.out);
        Run absent = sibyl("ledgers", "--ledgers-znode=/no/such/registry");
        assertEquals(1, absent.exit, absent.all());
        assertTrue(absent.err.contains("no ledger registry at /no/such/registry"), absent.err);
    }

    @Test
    void aMissingLeaderIsSaidWithWhatToCheck() {
        Run r = sibyl("status", "--leader-znode=/elsewhere/leader");
        assertEquals(1, r.exit, r.all());
        assertTrue(r.err.contains("no oracle leads") && r.err.contains("--leader-znode"), r.err);
        Run none = SibylCliTest.run("status");
        assertEquals(2, none.exit, none.all());
        assertTrue(none.err.contains("--zk") && none.err.contains("--oracle"), none.err);
    }

    @Test
    void enableTableCreatesATableAndMakesAnExistingOneTransactional() throws Exception {
        Run created = sibyl("enable-table", "cli_created", "--family=cf,other", "--no-gc");
        assertEquals(0, created.exit, created.all());
        TableName existing = TableName.valueOf("cli_existing");
        try (Connection c = ConnectionFactory.createConnection(hbase.configuration()); Admin admin = c.getAdmin()) {
            assertEquals(Integer.MAX_VALUE, admin.getDescriptor(TableName.valueOf("cli_created"))
                    .getColumnFamily(Bytes.toBytes("other")).getMaxVersions());
            admin.createTable(TableDescriptorBuilder.newBuilder(existing)
                    .setColumnFamily(ColumnFamilyDescriptorBuilder.newBuilder(Bytes.toBytes("plain"))
                            .setTimeToLive(3600).build()) // one version and a TTL: TTable refuses it
                    .build());

            Run enabled = sibyl("enable-table", existing.getNameAsString(), "--family=added",
                    "--gc-setting=sibyl.gc.enabled=false");
            assertEquals(0, enabled.exit, enabled.all());
            TableDescriptor d = admin.getDescriptor(existing);
            for (ColumnFamilyDescriptor f : d.getColumnFamilies()) {
                assertEquals(Integer.MAX_VALUE, f.getMaxVersions(), f.toString());
                assertEquals(HConstants.FOREVER, f.getTimeToLive(), f.toString());
            }
            assertTrue(d.hasColumnFamily(Bytes.toBytes("added")));
            assertTrue(d.hasCoprocessor(EnableTableCommand.GC_COPROCESSOR), d.toString());
            assertTrue(d.hasCoprocessor(EnableTableCommand.FAST_PATH_COPROCESSOR), d.toString());
            assertEquals("false", d.getCoprocessorDescriptors().stream()
                    .filter(cp -> cp.getClassName().equals(EnableTableCommand.GC_COPROCESSOR)).findFirst().orElseThrow()
                    .getProperties().get("sibyl.gc.enabled"));

            Run again = sibyl("enable-table", existing.getNameAsString(), "--gc-setting=sibyl.gc.enabled=false");
            assertEquals(0, again.exit, again.all());
            assertTrue(again.out.contains("nothing changed"), again.out);
        }
        Run missing = sibyl("enable-table", "cli_missing");
        assertEquals(2, missing.exit, missing.all());
        assertTrue(missing.err.contains("--family"), missing.err);
    }

    /**
     * enable-table names the fast-path observer, whose class these region servers lack: the client's first
     * single-row transactions find their writes left by HBase itself, undo them and commit them ordinarily.
     */
    @Test
    void singleRowWritesToATableWhoseRegionServersLackTheFastPathAreUndoneAndCommittedOrdinarily() throws Exception {
        TableName name = TableName.valueOf("cli_fast_path_missing");
        assertEquals(0, sibyl("enable-table", name.getNameAsString(), "--family=cf").exit);
        Configuration conf = new Configuration(hbase.configuration());
        conf.set(TransactionManager.ORACLE_ADDRESS, "127.0.0.1:" + leaderPort);
        byte[] cf = Bytes.toBytes("cf");
        byte[] row = Bytes.toBytes("r");
        try (TransactionManager tm = TransactionManager.create(conf);
             TTable t = new TTable(tm.getConnection(), name)) {
            assertTrue(t.offersFastPath(), "the descriptor names the observer");
            t.put(tm, new Put(row).addColumn(cf, Bytes.toBytes("a"), Bytes.toBytes("x")));
            assertFalse(t.offersFastPath(), "a write left by HBase itself takes the table off the fast path");
        }
        try (TransactionManager tm = TransactionManager.create(conf);
             TTable t = new TTable(tm.getConnection(), name)) {
            byte[] q = Bytes.toBytes("count");
            assertEquals(5L, Bytes.toLong(t.increment(tm, new Increment(row).addColumn(cf, q, 5)).getValue(cf, q)));
            assertEquals(7L, Bytes.toLong(t.increment(tm, new Increment(row).addColumn(cf, q, 2)).getValue(cf, q)));
            assertEquals("x", Bytes.toString(t.getLatest(tm, new Get(row)).getValue(cf, Bytes.toBytes("a"))));
            try (Table raw = tm.getConnection().getTable(name)) {
                for (Cell c : raw.get(new Get(row).addColumn(cf, q).addColumn(cf, Bytes.toBytes("a"))
                        .readAllVersions()).rawCells()) {
                    assertTrue(c.getTimestamp() != 0 && c.getTimestamp() < 1_000_000_000_000L,
                            "no version HBase gave itself is left: " + c);
                }
            }
        }
    }

    @Test
    void sweepRunsTheAbortSweeper() {
        Run dry = sibyl("sweep", "--all-tables", "--settle-ms=0", "--dry-run");
        assertEquals(0, dry.exit, dry.all());
        assertTrue(dry.out.contains("dry run:"), dry.out);
        Run swept = sibyl("sweep", "--all-tables", "--settle-ms=0", "--admin-secret-file=" + secret);
        assertEquals(0, swept.exit, swept.all());
        assertTrue(swept.out.contains("reported cleaned up to the oracle"), swept.out);
        Run noSecret = sibyl("sweep", "--all-tables");
        assertEquals(2, noSecret.exit, noSecret.all());
    }

    /** A command against this class's cluster: its ZooKeeper, leader znode and HBase. */
    private static Run sibyl(String... args) {
        Configuration conf = hbase.configuration();
        List<String> all = new ArrayList<>(List.of(args));
        all.add("--zk=" + BOOKIES.zkConnect());
        if (all.stream().noneMatch(a -> a.startsWith("--leader-znode="))) {
            all.add("--leader-znode=" + GROUP + "/leader");
        }
        all.add("--election-znode=" + GROUP + "/election");
        all.add("-D");
        all.add("hbase.zookeeper.quorum=" + conf.get("hbase.zookeeper.quorum"));
        all.add("-D");
        all.add("hbase.zookeeper.property.clientPort=" + conf.get("hbase.zookeeper.property.clientPort"));
        return run(all.toArray(new String[0]));
    }

    private static Run run(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit = SibylCli.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
                new PrintStream(err, true, StandardCharsets.UTF_8));
        return new Run(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    private record Run(int exit, String out, String err) {
        String all() {
            return "stdout:\n" + out + "\nstderr:\n" + err;
        }
    }
}
