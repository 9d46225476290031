package io.sibyl.ycsb;

import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.ArrayList;
import java.util.List;
import java.util.function.BiPredicate;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** YCSB's own Client, in a child JVM, running our standard workload files through the binding. */
@ExtendWith(StackExtension.class)
class YcsbWorkloadTest {
    private static final Pattern RETURN = Pattern.compile("^\\[(\\w+)], Return=(\\w+), (\\d+)$", Pattern.MULTILINE);

    /** Loads {@code records} records into a fresh table with YCSB, then runs {@code ops} operations on 4 threads. */
    private static YcsbProcess.Run loadThenRun(String workload, int records, int ops, String... runArgs)
            throws Exception {
        String table = StackExtension.table("usertable");
        YcsbProcess.Run load = YcsbProcess.run("-load", workload, "-threads", "2",
                "-p", "table=" + table, "-p", "recordcount=" + records);
        assertEquals(0, load.exitStatus(), load.transcript());
        assertTrue(load.stdout().contains("[INSERT], Return=OK, " + records), load.transcript());
        List<String> args = new ArrayList<>(List.of("-threads", "4",
                "-p", "table=" + table, "-p", "recordcount=" + records, "-p", "operationcount=" + ops));
        args.addAll(List.of(runArgs));
        YcsbProcess.Run run = YcsbProcess.run("-t", workload, args.toArray(String[]::new));
        assertEquals(0, run.exitStatus(), run.transcript());
        assertFalse(run.stderr().contains("FAILED"), run.transcript());
        return run;
    }

    /** Sums the {@code Return=} counts of the run, checking each status is one the test allows for its operation. */
    private static long countReturns(YcsbProcess.Run run, BiPredicate<String, String> allowed, String operation) {
        long n = 0;
        Matcher m = RETURN.matcher(run.stdout());
        while (m.find()) {
            assertTrue(allowed.test(m.group(1), m.group(2)), "unexpected " + m.group() + "\n" + run.transcript());
            n += m.group(1).equals(operation) || operation == null && m.group(2).equals("OK")
                    ? Long.parseLong(m.group(3)) : 0;
        }
        return n;
    }

    @Test
    void workloadARunsAndReportsNoFailedOperations() throws Exception {
        YcsbProcess.Run run = loadThenRun("workloada", 200, 1000);
        assertTrue(run.stdout().contains("[OVERALL], Throughput(ops/sec)"), run.transcript());
        // Two concurrent blind updates of one hot key conflict under snapshot isolation: reported, not hidden.
        long ok = countReturns(run, (op, status) -> status.equals("OK") || op.equals("UPDATE")
                && status.equals("CONFLICT"), null);
        assertTrue(ok > 950, "nearly every operation succeeds: " + ok + "\n" + run.transcript());
    }

    @Test
    void workloadDReadsRecordsInsertedMomentsBefore() throws Exception {
        // A read of a record whose insert committed before the read began must find it: NOT_FOUND fails the test.
        assertEveryOperationOk("workloadd", 1000, "[INSERT], Return=OK");
    }

    @Test
    void workloadEScansShortRangesWhileRecordsAreInserted() throws Exception {
        assertEveryOperationOk("workloade", 500, "[SCAN], Return=OK");
    }

    /** Loads 200 records, runs {@code ops} operations of {@code workload}: all OK, and {@code seen} printed. */
    private static void assertEveryOperationOk(String workload, int ops, String seen) throws Exception {
        YcsbProcess.Run run = loadThenRun(workload, 200, ops);
        long ok = countReturns(run, (op, status) -> status.equals("OK"), null);
        assertEquals(ops, ok, run.transcript());
        assertTrue(run.stdout().contains(seen), run.transcript());
    }

    @Test
    void workloadFTxRunsEachReadModifyWriteAsOneTransaction() throws Exception {
        YcsbProcess.Run run = loadThenRun("workloadf-tx", 50, 500);
        assertTrue(run.stdout().contains("[TRANSACTION], Operations, 500"), run.transcript());
        assertTrue(run.stdout().contains("[READ-MODIFY-WRITE], Operations"), run.transcript());
        // The calls inside a transaction only read or buffer: a conflict shows at the transaction's commit.
        long transactions = countReturns(run, (op, status) -> status.equals("OK") || op.equals("TRANSACTION")
                && status.equals("CONFLICT"), "TRANSACTION");
        assertEquals(500, transactions, run.transcript());
    }

    @Test
    void transactionalInsertsAreCommittedBeforeReadsOfTheLatestKeysAskForThem() throws Exception {
        // CoreWorkload makes an inserted key readable as soon as the insert call returns: inside a transaction
        // that was before its commit, and reads of the latest keys found nothing (about one read in eight here).
        YcsbProcess.Run run = loadThenRun("workloadd", 100, 1000,
                "-p", "workload=" + TransactionalCoreWorkload.class.getName(), "-p", "insertproportion=0.3",
                "-p", "readproportion=0.7");
        long ok = countReturns(run, (op, status) -> status.equals("OK"), "TRANSACTION");
        assertEquals(1000, ok, run.transcript());
        assertTrue(run.stdout().contains("[INSERT], Return=OK"), run.transcript());
    }

    @Test
    void unknownTableFailsInitWithAClearMessage() throws Exception {
        YcsbProcess.Run run = YcsbProcess.run("-t", "workloadc", "-threads", "2", "-p", "table=no_such_table",
                "-p", "operationcount=10");
        assertEquals(FailingExit.STATUS, run.exitStatus(), run.transcript());
        assertTrue(run.stderr().contains("table 'no_such_table' does not exist in HBase"), run.transcript());
        assertTrue(run.stderr().contains("create 'no_such_table', {NAME => 'family', VERSIONS => 2147483647}"),
                run.transcript());
    }

    @Test
    void aTableCreatedAsForPlainHBaseFailsInitWithTheShellCommandThatFixesIt() throws Exception {
        // YCSB's HBase instructions create the table with create 'usertable', 'family': one version per cell.
        String table = "one_version_" + System.nanoTime();
        try (Admin admin = StackExtension.stack().connection().getAdmin()) {
            admin.createTable(TableDescriptorBuilder.newBuilder(TableName.valueOf(table))
                    .setColumnFamily(ColumnFamilyDescriptorBuilder.of(BindingSettings.DEFAULT_COLUMN_FAMILY)).build());
        }
        YcsbProcess.Run run = YcsbProcess.run("-t", "workloadc", "-threads", "2", "-p", "table=" + table,
                "-p", "operationcount=10");
        assertEquals(FailingExit.STATUS, run.exitStatus(), run.transcript());
        assertTrue(run.stderr().contains("in the HBase shell: alter '" + table + "', {NAME => 'family', VERSIONS =>"
                + " 2147483647}"), run.transcript());
    }

    @Test
    void anOracleThatDoesNotAnswerFailsEveryClientThreadOnceNotOneAfterAnother() throws Exception {
        // Eight client threads, 3 s of failover timeout: one wait for the oracle, not eight in turn (24 s).
        long t0 = System.nanoTime();
        YcsbProcess.Run run = YcsbProcess.run("-t", "workloadc", "-threads", "8", "-p", "operationcount=8",
                "-p", "sibyl.oracle.address=127.0.0.1:1", "-p", "sibyl.client.failover.timeout.ms=3000");
        long seconds = (System.nanoTime() - t0) / 1_000_000_000;
        assertEquals(FailingExit.STATUS, run.exitStatus(), run.transcript());
        assertTrue(run.stderr().contains("FAILED: SibylClient: cannot start the Sibyl client (HBase at 127.0.0.1"
                + " (ZooKeeper client port " + StackExtension.stack().zkPort() + "), status oracle at 127.0.0.1:1)"),
                run.transcript());
        assertTrue(seconds < 16, "took " + seconds + " s\n" + run.transcript());
    }
}
