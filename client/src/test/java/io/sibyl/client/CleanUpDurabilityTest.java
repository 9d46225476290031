package io.sibyl.client;

import io.sibyl.client.oracle.OracleClient;
import io.sibyl.client.oracle.RowIds;
import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;
import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.MiniHBaseCluster;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Durability;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.util.JVMClusterUtil.RegionServerThread;
import org.awaitility.core.ConditionFactory;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.extension.ExtendWith;

import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static io.sibyl.client.TestSupport.CF;
import static io.sibyl.client.TestSupport.V;
import static io.sibyl.client.TestSupport.b;
import static io.sibyl.client.TestSupport.put;
import static org.awaitility.Awaitility.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

/**
 * A transaction's writes, and the delete markers of an abort's clean-up, must survive a region server crash even in a
 * table whose durability does not write or sync the WAL (SKIP_WAL, ASYNC_WAL): a commit follows acknowledged writes,
 * and the clean-up report lets the oracle forget the abort, after which a version whose marker was lost reads as
 * committed. The table lives alone on an extra region server, which is
 * killed (no flush) after the oracle forgot the abort; the master reopens the region from its files and its WAL.
 */
@ExtendWith(MiniCluster.class)
@Timeout(value = 150, unit = TimeUnit.SECONDS, threadMode = Timeout.ThreadMode.SEPARATE_THREAD)
class CleanUpDurabilityTest {
    private static final AtomicInteger TABLES = new AtomicInteger();
    /** The private oracle's commit window: T_max passes every earlier writer after a few dozen commits. */
    private static final int COMMIT_WINDOW = 64;
    /** Polled in the test's thread, like its other HBase and oracle calls. */
    private static final ConditionFactory WITHIN_A_MINUTE = await().atMost(Duration.ofMinutes(1))
            .pollInterval(Duration.ofMillis(100)).pollInSameThread();

    @Test
    void theCleanUpOfATableThatSkipsTheWalSurvivesARegionServerCrash() throws Exception {
        abortedVersionStaysDeletedAcrossACrash(Durability.SKIP_WAL, false);
    }

    @Test
    void theSweepOfATableThatSkipsTheWalSurvivesARegionServerCrash() throws Exception {
        abortedVersionStaysDeletedAcrossACrash(Durability.SKIP_WAL, true);
    }

    /** ASYNC_WAL: a marker not synced yet when the server dies would be lost the same way (not deterministic there). */
    @Test
    void theCleanUpOfATableWithAnAsyncWalSurvivesARegionServerCrash() throws Exception {
        abortedVersionStaysDeletedAcrossACrash(Durability.ASYNC_WAL, false);
    }

    /**
     * Writes the table's durability would not log: a transaction's writes are acknowledged by the region server's
     * memstore only, the commit follows, and a crash would lose part or all of a committed transaction.
     */
    @Test
    void aCommittedTransactionInATableThatSkipsTheWalSurvivesARegionServerCrash() throws Exception {
        onServerThatDies(Durability.SKIP_WAL, (c, oracle, admin, name, kill) -> {
            Configuration conf = c.configuration();
            conf.set(TransactionManager.ORACLE_ADDRESS, "127.0.0.1:" + oracle.port());
            conf.set("hbase.client.pause", "100");
            try (TransactionManager tm = TransactionManager.create(conf);
                 TTable t = new TTable(tm.getConnection(), name)) {
                Transaction tx = tm.begin();
                put(t, tx, "a", "debit");
                put(t, tx, "b", "credit");
                tm.commit(tx);

                kill.run(); // no flush: what only the memstore held is gone

                Transaction reader = tm.begin();
                assertEquals("debit", TestSupport.get(t, reader, "a"), "a committed write was lost in the crash");
                assertEquals("credit", TestSupport.get(t, reader, "b"), "a committed write was lost in the crash");
                tm.commit(reader);
            }
        });
    }

    /**
     * A committed version and an aborted one above it, both flushed; the aborted one is deleted and reported (by its
     * client's rollback, or by the abort sweeper as a dead client's) and the oracle forgets it; then the region
     * server dies and T_max passes the aborted writer.
     */
    private static void abortedVersionStaysDeletedAcrossACrash(Durability durability, boolean bySweeper)
            throws Exception {
        onServerThatDies(durability, (c, oracle, admin, name, kill) -> {
            Configuration conf = c.configuration();
            conf.set(TransactionManager.ORACLE_ADDRESS, "127.0.0.1:" + oracle.port());
            conf.set(TransactionManager.WRITE_BUFFER_BYTES, "0"); // writes reach HBase before commit
            conf.set("hbase.client.pause", "100");
            conf.set(TransactionManager.ADMIN_SECRET_FILE, TestSupport.adminSecretFile()); // sweeps, when bySweeper
            try (TransactionManager tm = TransactionManager.create(conf);
                 TTable t = new TTable(tm.getConnection(), name);
                 OracleClient bare = OracleClient.connect("127.0.0.1", oracle.port())) {
                Transaction first = tm.begin();
                put(t, first, "row", "committed");
                tm.commit(first);
                long ts;
                if (bySweeper) { // a client that died after its write: the oracle aborts it, nobody cleans up
                    ts = bare.begin().get(5, TimeUnit.SECONDS);
                    try (Table raw = c.raw(name)) {
                        raw.put(new Put(b("row")).addColumn(CF, V, ts, b("aborted")));
                    }
                    admin.flush(name); // both versions in a store file: durable without the WAL
                    bare.abort(ts).get(5, TimeUnit.SECONDS);
                    AbortSweeper.Report r = new AbortSweeper(tm, Set.of(name), Set.of(), 0, false).sweep();
                    assertEquals(1, r.reportedCleanedUp(), r.toString());
                } else {
                    Transaction aborted = tm.begin();
                    put(t, aborted, "row", "aborted");
                    admin.flush(name); // both versions in a store file: durable without the WAL
                    tm.rollback(aborted); // the clean-up: a delete marker (in the memstore), then CLEANED_UP
                    ts = aborted.getStartTimestamp();
                }
                assertEquals(List.of(first.getStartTimestamp()), versions(c, name), "the marker hides it");
                WITHIN_A_MINUTE.alias("the oracle to forget aborted transaction " + ts).until(() -> {
                    try (OracleClient fresh = OracleClient.connect("127.0.0.1", oracle.port())) {
                        return !fresh.replica().isAborted(ts);
                    }
                });

                kill.run(); // no flush: the memstore is lost, the WAL is replayed

                for (int i = 0; i < 2 * COMMIT_WINDOW; i++) { // T_max passes the aborted writer
                    long s = bare.begin().get(5, TimeUnit.SECONDS);
                    bare.commit(s, new long[] {RowIds.of("elsewhere", b("r" + i))}).get(5, TimeUnit.SECONDS);
                }
                Transaction reader = tm.begin();
                assertTrue(reader.getStartTimestamp() > ts);
                assertEquals("committed", TestSupport.get(t, reader, "row"),
                        "a forgotten abort must not read as committed");
                tm.commit(reader);
                assertEquals(List.of(first.getStartTimestamp()), versions(c, name),
                        "the aborted version stays deleted after the crash");
            }
        });
    }

    /** What a test does with its table, alone on a region server that {@code kill} kills (no flush). */
    private interface Scenario {
        void run(MiniCluster c, OracleServer oracle, Admin admin, TableName name, Kill kill) throws Exception;
    }

    /** Kills the table's region server and waits for the table to reopen elsewhere. */
    private interface Kill {
        void run() throws Exception;
    }

    /**
     * Runs {@code scenario} on a new table of {@code durability} alone on an extra region server, with a private
     * oracle; {@code kill} kills that server and waits for the table to reopen on the original one.
     */
    private static void onServerThatDies(Durability durability, Scenario scenario) throws Exception {
        MiniCluster c = MiniCluster.get();
        MiniHBaseCluster hbase = c.util().getMiniHBaseCluster();
        try (OracleServer oracle = OracleServer.startInMemory(OracleConfig.defaults().withPort(0)
                .withCapacities(1 << 12, COMMIT_WINDOW, 1 << 10).withAdminSecretFile(TestSupport.adminSecretFile()));
             Admin admin = c.connection().getAdmin()) {
            boolean balancerWasOn = admin.balancerSwitch(false, true);
            ServerName original = hbase.getServerHoldingMeta();
            RegionServerThread extra = hbase.startRegionServer();
            ServerName doomed = extra.getRegionServer().getServerName();
            boolean[] killed = {false};
            try {
                TableName name = TableName.valueOf("cleanupdurability_" + TABLES.incrementAndGet());
                admin.createTable(TableDescriptorBuilder.newBuilder(name).setColumnFamily(TTable.familyDescriptor(CF))
                        .setDurability(durability).build());
                WITHIN_A_MINUTE.alias(name + " to open on " + doomed).until(() -> {
                    for (RegionInfo r : admin.getRegions(name)) {
                        if (!admin.getRegions(doomed).contains(r)) {
                            admin.move(r.getEncodedNameAsBytes(), doomed);
                        }
                    }
                    return admin.getRegions(doomed).containsAll(admin.getRegions(name));
                });
                scenario.run(c, oracle, admin, name, () -> {
                    hbase.killRegionServer(doomed);
                    killed[0] = true;
                    WITHIN_A_MINUTE.alias(name + " to reopen on " + original).until(
                            () -> admin.getRegions(original).containsAll(admin.getRegions(name)));
                });
            } finally {
                if (!killed[0]) {
                    hbase.killRegionServer(doomed);
                }
                extra.join(30_000);
                WITHIN_A_MINUTE.alias("the master to finish recovering " + doomed).until(
                        () -> !hbase.getMaster().getServerManager().areDeadServersInProgress());
                admin.balancerSwitch(balancerWasOn, true);
            }
        }
    }

    /** The versions HBase returns for row/cf:v (delete markers applied), newest first. */
    private static List<Long> versions(MiniCluster c, TableName name) throws Exception {
        try (Table raw = c.raw(name)) {
            return raw.get(new Get(b("row")).addColumn(CF, V).readAllVersions()).listCells().stream()
                    .map(cell -> cell.getTimestamp()).toList();
        }
    }
}
