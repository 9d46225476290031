package io.sibyl.ycsb;

import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

/** The closed-economy workload under YCSB's own Client, in a child JVM: it holds, and its check can fail. */
@ExtendWith(StackExtension.class)
class YcsbClosedEconomyTest {
    private static final Pattern COMMITTED = Pattern.compile("transfers committed (\\d+), conflicts (\\d+)");
    private static final Pattern AUDITS = Pattern.compile("audits (\\d+), violations (\\d+)");

    /** Opens the accounts with YCSB's load phase, whose own final check must pass. */
    private static void load(String table, int accounts, long total) throws Exception {
        YcsbProcess.Run load = YcsbProcess.run("-load", "closedeconomy", "-threads", "4", "-p", "table=" + table,
                "-p", "recordcount=" + accounts, "-p", "closedeconomy.totalcash=" + total);
        assertEquals(0, load.exitStatus(), load.transcript());
        assertTrue(load.stdout().contains("final check: total " + total + " over " + accounts + " accounts, expected "
                + total + " over " + accounts + ": PASS"), load.transcript());
    }

    @Test
    void closedEconomyTotalStaysExactUnderEightThreads() throws Exception {
        String table = StackExtension.table("accounts");
        load(table, 100, 100_000);

        // Few accounts for eight threads, so that transfers do conflict; audits one operation in ten.
        YcsbProcess.Run run = YcsbProcess.run("-t", "closedeconomy", "-threads", "8",
                "-p", "table=" + table, "-p", "recordcount=100", "-p", "closedeconomy.totalcash=100000",
                "-p", "operationcount=1500", "-p", "closedeconomy.auditproportion=0.1");
        assertEquals(0, run.exitStatus(), run.transcript());
        assertTrue(run.stdout().contains(
                "final check: total 100000 over 100 accounts, expected 100000 over 100: PASS"), run.transcript());
        Matcher transfers = COMMITTED.matcher(run.stdout());
        Matcher audits = AUDITS.matcher(run.stdout());
        assertTrue(transfers.find() && audits.find(), run.transcript());
        assertTrue(Long.parseLong(transfers.group(1)) > 1200, run.transcript());
        assertTrue(Long.parseLong(audits.group(1)) > 50, run.transcript());
        assertEquals("0", audits.group(2), run.transcript());
        assertTrue(run.stdout().contains("[TRANSFER], Return=OK"), run.transcript());
        assertTrue(run.stdout().contains("[AUDIT], Return=OK"), run.transcript());
        System.out.println("closed economy, 8 threads, 100 accounts: " + transfers.group() + ", " + audits.group());
    }

    @Test
    void transfersGivenUpUnderHeavyContentionAreConflictsAndTheTotalHolds() throws Exception {
        // Eight threads on three accounts, two attempts per transfer: many transfers are given up.
        String table = StackExtension.table("contended");
        load(table, 3, 3000);
        YcsbProcess.Run run = YcsbProcess.run("-t", "closedeconomy", "-threads", "8", "-p", "table=" + table,
                "-p", "recordcount=3", "-p", "closedeconomy.totalcash=3000", "-p", "operationcount=400",
                "-p", "closedeconomy.attempts=2", "-p", "closedeconomy.auditproportion=0.1");
        assertEquals(0, run.exitStatus(), run.transcript());
        assertTrue(run.stdout().contains("final check: total 3000 over 3 accounts, expected 3000 over 3: PASS"),
                run.transcript());
        Matcher m = Pattern.compile("transfers committed (\\d+), conflicts (\\d+) \\(retried\\), transfers given up"
                + " after retries (\\d+), errors 0, audits \\d+, violations 0").matcher(run.stdout());
        assertTrue(m.find(), run.transcript());
        long givenUp = Long.parseLong(m.group(3));
        assertTrue(givenUp > 0, run.transcript());
        assertTrue(run.stdout().contains("[TRANSFER], Return=CONFLICT, " + givenUp), run.transcript());
        assertFalse(run.stdout().contains("Return=ERROR"), run.transcript());
        // Every attempt read two balances: committed, retried and given-up attempts add up to those reads.
        long attempts = Long.parseLong(m.group(1)) + Long.parseLong(m.group(2)) + givenUp;
        assertTrue(run.stdout().contains("[READ], Return=OK, " + 2 * attempts), run.transcript());
    }

    @Test
    void operationcountZeroRunsUntilMaxexecutiontime() throws Exception {
        // YCSB 0.17 alone would start no client thread for operationcount=0 and end at once, having done nothing.
        String table = StackExtension.table("timed");
        load(table, 20, 2000);
        YcsbProcess.Run run = YcsbProcess.run("-t", "closedeconomy", "-threads", "2", "-p", "table=" + table,
                "-p", "recordcount=20", "-p", "closedeconomy.totalcash=2000", "-p", "operationcount=0",
                "-p", "maxexecutiontime=3");
        assertEquals(0, run.exitStatus(), run.transcript());
        Matcher transfers = COMMITTED.matcher(run.stdout());
        assertTrue(transfers.find() && Long.parseLong(transfers.group(1)) > 20, run.transcript());
        assertTrue(run.stdout().contains("final check: total 2000 over 20 accounts, expected 2000 over 20: PASS"),
                run.transcript());
    }

    @Test
    void aRunOrLoadThatDoesNotMatchTheTableSaysWhatToChangeInsteadOfAViolation() throws Exception {
        String table = StackExtension.table("resized");
        load(table, 20, 2000);

        // A run given another recordcount than its load: audits see 20 accounts where 30 were expected.
        YcsbProcess.Run run = YcsbProcess.run("-t", "closedeconomy", "-threads", "2", "-p", "table=" + table,
                "-p", "recordcount=30", "-p", "closedeconomy.totalcash=2000", "-p", "operationcount=40",
                "-p", "closedeconomy.auditproportion=0.5");
        assertEquals(FailingExit.STATUS, run.exitStatus(), run.transcript());
        assertTrue(run.stderr().contains("FAILED: closedeconomy: table '" + table + "' holds 20 accounts from"
                + " account0000000000 on, not recordcount=30 (transfers never open or close an account): run with the"
                + " recordcount and closedeconomy.totalcash of the load, or load again into an empty table"),
                run.transcript());
        assertFalse(run.stderr().contains("the closed economy was violated"), run.transcript());

        // A load into a table that holds a larger, earlier economy: its final check sees the leftover accounts.
        YcsbProcess.Run reload = YcsbProcess.run("-load", "closedeconomy", "-threads", "2", "-p", "table=" + table,
                "-p", "recordcount=10", "-p", "closedeconomy.totalcash=1000");
        assertEquals(FailingExit.STATUS, reload.exitStatus(), reload.transcript());
        assertTrue(reload.stderr().contains("FAILED: closedeconomy: table '" + table + "' holds more than 10 accounts"
                + " from account0000000000 on, not recordcount=10: load into an empty table"), reload.transcript());
    }

    @Test
    void anAccountCorruptedOutsideTransactionsFailsTheRun() throws Exception {
        String table = StackExtension.table("corrupted");
        load(table, 50, 5000);

        // Overwrite one committed balance in place through plain HBase (same cell, same version): no transaction
        // wrote it, and 1 unit of money appears from nowhere.
        Accounts accounts = new Accounts(50, 5000);
        byte[] row = Bytes.toBytes(accounts.key(7));
        byte[] family = Bytes.toBytes(BindingSettings.DEFAULT_COLUMN_FAMILY);
        byte[] balance = Bytes.toBytes(Accounts.BALANCE);
        try (Table raw = StackExtension.stack().connection().getTable(TableName.valueOf(table))) {
            Cell committed = raw.get(new Get(row).addColumn(family, balance)).getColumnLatestCell(family, balance);
            long value = Long.parseLong(Bytes.toString(CellUtil.cloneValue(committed)));
            raw.put(new Put(row).addColumn(family, balance, committed.getTimestamp(),
                    Bytes.toBytes(Long.toString(value + 1))));
        }

        YcsbProcess.Run run = YcsbProcess.run("-t", "closedeconomy", "-threads", "2",
                "-p", "table=" + table, "-p", "recordcount=50", "-p", "closedeconomy.totalcash=5000",
                "-p", "operationcount=100", "-p", "closedeconomy.auditproportion=0.2");
        assertEquals(FailingExit.STATUS, run.exitStatus(), run.transcript());
        assertTrue(run.stderr().contains("VIOLATION: an audit saw total 5001 over 50 accounts"), run.transcript());
        assertTrue(run.stderr().contains("FAILED: closedeconomy: final check: total 5001 over 50 accounts, expected"
                + " 5000 over 50: FAIL"), run.transcript());
        assertTrue(run.stdout().contains("[OVERALL], Throughput(ops/sec)"), "YCSB's summary is still printed\n"
                + run.transcript());
    }

    @Test
    void transfersThatAreNotOneTransactionFailTheRun() throws Exception {
        // Reads and writes of a transfer in transactions of their own: concurrent transfers lose each other's updates.
        String table = StackExtension.table("nonatomic");
        load(table, 5, 5000);
        YcsbProcess.Run run = YcsbProcess.run("-t", "closedeconomy", "-threads", "4", "-p", "table=" + table,
                "-p", "workload=" + NonAtomicTransferWorkload.class.getName(), "-p", "recordcount=5",
                "-p", "closedeconomy.totalcash=5000", "-p", "operationcount=300",
                "-p", "closedeconomy.auditproportion=0.2");
        assertEquals(FailingExit.STATUS, run.exitStatus(), run.transcript());
        assertTrue(run.stdout().contains("over 5 accounts, expected 5000 over 5: FAIL"), run.transcript());
        assertTrue(run.stderr().contains("FAILED: closedeconomy: final check: total "), run.transcript());
        // Audits saw many different wrong totals: still one line of YCSB's report counts them all.
        Matcher violations = AUDITS.matcher(run.stdout());
        assertTrue(violations.find() && Long.parseLong(violations.group(2)) > 1, run.transcript());
        assertEquals(1, run.stdout().lines().filter(l -> l.startsWith("[AUDIT], Return=VIOLATION, ")).count(),
                run.transcript());
        assertTrue(run.stdout().contains("[AUDIT], Return=VIOLATION, " + violations.group(2)), run.transcript());
    }

    @Test
    void auditsWhoseSnapshotExpiredAreTriedAgainAndTheRunPasses() throws Exception {
        String table = StackExtension.table("expiring");
        load(table, 20, 2000);
        YcsbProcess.Run run = YcsbProcess.run("-t", "closedeconomy", "-threads", "2", "-p", "table=" + table,
                "-p", "workload=" + ExpiringAuditWorkload.class.getName(), "-p", "recordcount=20",
                "-p", "closedeconomy.totalcash=2000", "-p", "operationcount=200",
                "-p", "closedeconomy.auditproportion=0.3");
        assertEquals(0, run.exitStatus(), run.transcript());
        assertTrue(run.stdout().contains("final check: total 2000 over 20 accounts, expected 2000 over 20: PASS"),
                run.transcript());
        assertTrue(run.stdout().contains("[AUDIT], Return=OK, "), run.transcript());
        assertFalse(run.stdout().contains("[AUDIT], Return=SNAPSHOT_EXPIRED"), run.transcript());
        assertFalse(run.stdout().contains("[AUDIT], Return=ERROR"), run.transcript());
    }

    @Test
    void aBindingThatIgnoresTransactionScopesFailsTheRun() throws Exception {
        // YCSB's BasicDB answers OK to everything, outside any transaction: the transfers' checks would mean nothing.
        YcsbProcess.Run run = YcsbProcess.run("-t", "closedeconomy", "-db", "site.ycsb.BasicDB",
                "-p", "recordcount=10", "-p", "operationcount=5", "-p", "closedeconomy.auditproportion=0");
        assertEquals(FailingExit.STATUS, run.exitStatus(), run.transcript());
        assertTrue(run.stderr().contains("FAILED: the -db binding does not honour transaction scopes"),
                run.transcript());
    }
}
