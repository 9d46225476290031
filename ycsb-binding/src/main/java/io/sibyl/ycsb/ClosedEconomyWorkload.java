package io.sibyl.ycsb;

import site.ycsb.ByteIterator;
import site.ycsb.DB;
import site.ycsb.DBException;
import site.ycsb.Status;
import site.ycsb.StringByteIterator;
import site.ycsb.Workload;
import site.ycsb.WorkloadException;
import site.ycsb.generator.ExponentialGenerator;
import site.ycsb.generator.HotspotIntegerGenerator;
import site.ycsb.generator.NumberGenerator;
import site.ycsb.generator.SequentialGenerator;
import site.ycsb.generator.UniformLongGenerator;
import site.ycsb.generator.ZipfianGenerator;
import site.ycsb.measurements.Measurements;

import java.util.HashMap;
import java.util.Map;
import java.util.Properties;
import java.util.Set;
import java.util.concurrent.ThreadLocalRandom;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The closed economy, a transactional YCSB workload: the load phase opens {@code recordcount} accounts holding
 * {@code closedeconomy.totalcash} between them; the run phase moves money between random pairs of accounts (read
 * both, write both, in one transaction) while audits read every account in one read-only transaction. Money is
 * neither made nor lost, so every audit and the final check must see exactly the total; one that does not is a
 * violation, and fails the run (stderr, exit status {@value FailingExit#STATUS}). Properties: docs/ycsb.md.
 */
public class ClosedEconomyWorkload extends Workload {
    /** Cash held by all accounts together. */
    public static final String TOTAL_CASH = "closedeconomy.totalcash";
    /** Share of run-phase operations that are audits; the rest are transfers. */
    public static final String AUDIT_PROPORTION = "closedeconomy.auditproportion";
    /** Largest amount one transfer moves (never more than the paying account holds). */
    public static final String MAX_TRANSFER = "closedeconomy.maxtransfer";
    /** Attempts per transfer when it conflicts with a concurrent one, before it is given up. */
    public static final String ATTEMPTS = "closedeconomy.attempts";
    /** Whether cleanup reads every account once more and checks the total. */
    public static final String FINAL_CHECK = "closedeconomy.finalcheck";
    /** How accounts are picked: uniform or zipfian. */
    public static final String DISTRIBUTION = "requestdistribution";

    /**
     * An audit that saw another total or another number of accounts. One constant status (what the audit saw goes to
     * stderr): YCSB counts statuses by name and description, so a description per finding would split the count
     * into one {@code [AUDIT], Return=VIOLATION} line per distinct total.
     */
    public static final Status VIOLATION = new Status("VIOLATION",
            "an audit saw a total or a number of accounts other than the opening ones");
    /** A transfer that read an account holding no balance or one that is not a number. */
    public static final Status BAD_BALANCE = new Status("BAD_BALANCE",
            "an account holds no balance or one that is not a number");
    /** Violations described on stderr, at the most (the count is always reported). */
    private static final int REPORTED_VIOLATIONS = 5;
    private static final Set<String> BALANCE_ONLY = Set.of(Accounts.BALANCE);

    private final EconomyTally tally = new EconomyTally();
    private Properties props;
    private String table;
    private Accounts accounts;
    private double auditProportion;
    private long maxTransfer;
    private int attempts;
    private boolean finalCheck;
    private boolean runPhase;
    private boolean wholeLoad;
    private AtomicLong nextAccount;
    private long loadEnd;
    private NumberGenerator picker;
    /** Whether an audit found another number of accounts than recordcount (see {@link #otherAccounts}). */
    private volatile boolean otherAccountsSeen;

    @Override
    public void init(Properties p) throws WorkloadException {
        props = p;
        table = p.getProperty(BindingSettings.TABLE, BindingSettings.DEFAULT_TABLE);
        long count = longProperty(p, "recordcount", 1000);
        long total = longProperty(p, TOTAL_CASH, 1000 * count);
        if (count < 2 || total < 0) {
            throw invalid("transfers need at least 2 accounts (recordcount) and " + TOTAL_CASH + " >= 0");
        }
        accounts = new Accounts(count, total);
        try {
            auditProportion = Double.parseDouble(p.getProperty(AUDIT_PROPORTION, "0.05"));
        } catch (NumberFormatException e) {
            throw invalid(AUDIT_PROPORTION + " is not a number");
        }
        maxTransfer = longProperty(p, MAX_TRANSFER, 100);
        attempts = (int) longProperty(p, ATTEMPTS, 10);
        finalCheck = Boolean.parseBoolean(p.getProperty(FINAL_CHECK, "true"));
        if (auditProportion < 0 || auditProportion > 1 || maxTransfer < 1 || attempts < 1) {
            throw invalid("need 0 <= " + AUDIT_PROPORTION + " <= 1, " + MAX_TRANSFER + " >= 1 and " + ATTEMPTS
                    + " >= 1");
        }
        // site.ycsb.Client sets dotransactions=false for -load, true for -t.
        runPhase = Boolean.parseBoolean(p.getProperty("dotransactions", "true"));
        TimedRun.apply(p);
        long start = longProperty(p, INSERT_START_PROPERTY, 0);
        long insertCount = longProperty(p, INSERT_COUNT_PROPERTY, count - start);
        nextAccount = new AtomicLong(start);
        loadEnd = Math.min(count, start + insertCount);
        wholeLoad = start == 0 && loadEnd == count;
        picker = picker(p, count);
    }

    /**
     * Picks account numbers in 0..count-1 as {@code requestdistribution} says, with CoreWorkload's names and
     * parameters, so that a setting given to every workload of a run suits this one too. The accounts are fixed, so
     * {@code latest} (CoreWorkload: the records inserted last) favours the highest-numbered accounts.
     */
    static NumberGenerator picker(Properties p, long count) throws WorkloadException {
        String distribution = p.getProperty(DISTRIBUTION, "uniform").trim();
        switch (distribution) {
            case "uniform":
                return new UniformLongGenerator(0, count - 1);
            case "zipfian":
                return new ZipfianGenerator(0, count - 1);
            case "latest": {
                ZipfianGenerator zipfian = new ZipfianGenerator(0, count - 1);
                return new NumberGenerator() {
                    @Override
                    public Long nextValue() {
                        long v = count - 1 - zipfian.nextValue();
                        setLastValue(v);
                        return v;
                    }

                    @Override
                    public double mean() {
                        return count - 1 - zipfian.mean();
                    }
                };
            }
            case "hotspot":
                return new HotspotIntegerGenerator(0, count - 1,
                        doubleProperty(p, "hotspotdatafraction", 0.2), doubleProperty(p, "hotspotopnfraction", 0.8));
            case "sequential":
                return new SequentialGenerator(0, count - 1);
            case "exponential": {
                ExponentialGenerator exponential = new ExponentialGenerator(
                        doubleProperty(p, "exponential.percentile", 95),
                        count * doubleProperty(p, "exponential.frac", 0.8571428571));
                return new NumberGenerator() {
                    @Override
                    public Long nextValue() {
                        long v = Math.floorMod(exponential.nextValue().longValue(), count);
                        setLastValue(v);
                        return v;
                    }

                    @Override
                    public double mean() {
                        return exponential.mean();
                    }
                };
            }
            default:
                throw invalid(DISTRIBUTION + "=" + distribution + " is not supported (uniform, zipfian, latest,"
                        + " hotspot, sequential or exponential)");
        }
    }

    private static double doubleProperty(Properties p, String key, double defaultValue) throws WorkloadException {
        String v = p.getProperty(key);
        try {
            return v == null ? defaultValue : Double.parseDouble(v.trim());
        } catch (NumberFormatException e) {
            throw invalid(key + "=" + v + " is not a number");
        }
    }

    /** YCSB's Client exits 0 after a WorkloadException from init: record the failure so that the run fails. */
    private static WorkloadException invalid(String message) {
        FailingExit.fail("closedeconomy: " + message);
        return new WorkloadException("closedeconomy: " + message);
    }

    private static long longProperty(Properties p, String key, long defaultValue) throws WorkloadException {
        String v = p.getProperty(key);
        try {
            return v == null ? defaultValue : Long.parseLong(v.trim());
        } catch (NumberFormatException e) {
            throw invalid(key + "=" + v + " is not a whole number");
        }
    }

    @Override
    public boolean doInsert(DB db, Object threadState) {
        long i = nextAccount.getAndIncrement();
        if (i >= loadEnd) {
            return false;
        }
        Map<String, ByteIterator> values = balance(accounts.openingBalance(i));
        Status s = Status.ERROR;
        for (int attempt = 0; attempt < attempts; attempt++) {
            s = db.insert(table, accounts.key(i), values);
            if (!Outcomes.isRetryable(s)) {
                break;
            }
            values = balance(accounts.openingBalance(i)); // the failed insert consumed the iterators
        }
        if (s.isOk()) {
            tally.accountsLoaded.increment();
            return true;
        }
        tally.errors.increment();
        System.err.println("closedeconomy: could not open account " + accounts.key(i) + ": " + s);
        return false;
    }

    /** The fields of an account holding {@code amount}, for an insert or update. */
    protected static Map<String, ByteIterator> balance(long amount) {
        Map<String, ByteIterator> values = new HashMap<>();
        values.put(Accounts.BALANCE, new StringByteIterator(Long.toString(amount)));
        return values;
    }

    @Override
    public boolean doTransaction(DB db, Object threadState) {
        if (ThreadLocalRandom.current().nextDouble() < auditProportion) {
            audit(db);
        } else {
            transfer(db);
        }
        return true;
    }

    private void transfer(DB db) {
        long from = picker.nextValue().longValue();
        long to = picker.nextValue().longValue();
        while (to == from) {
            to = ThreadLocalRandom.current().nextLong(accounts.count());
        }
        long amount = 1 + ThreadLocalRandom.current().nextLong(maxTransfer);
        long t0 = System.nanoTime();
        Status s = Status.ERROR;
        for (int attempt = 0; attempt < attempts; attempt++) {
            s = transferOnce(db, table, accounts.key(from), accounts.key(to), amount);
            if (!Outcomes.isRetryable(s)) {
                break;
            }
            if (attempt + 1 < attempts) {
                tally.conflicts.increment(); // retried; the last attempt's conflict counts as a transfer given up
            }
        }
        record("TRANSFER", t0, s);
        if (s.isOk()) {
            tally.transfersCommitted.increment();
        } else if (Outcomes.isRetryable(s)) {
            tally.transfersGivenUp.increment();
        } else {
            tally.errors.increment();
        }
    }

    /**
     * One attempt: read both balances, move at most what the payer holds, write both, commit; returns the outcome
     * (a retryable {@link Outcomes} status is tried again). Overridable so that a test can break it on purpose and
     * see the audits and the final check catch it.
     */
    protected Status transferOnce(DB db, String table, String from, String to, long amount) {
        try (TransactionScope scope = TransactionScope.open()) {
            Map<String, ByteIterator> a = new HashMap<>();
            Map<String, ByteIterator> b = new HashMap<>();
            Status read = db.read(table, from, BALANCE_ONLY, a);
            if (read.isOk()) {
                read = db.read(table, to, BALANCE_ONLY, b);
            }
            if (!read.isOk()) {
                return read;
            }
            scope.requireJoined();
            Long payer = balanceOf(a);
            Long payee = balanceOf(b);
            if (payer == null || payee == null) {
                return BAD_BALANCE;
            }
            long moved = Math.min(amount, payer);
            Status write = db.update(table, from, balance(payer - moved));
            if (write.isOk()) {
                write = db.update(table, to, balance(payee + moved));
            }
            return write.isOk() ? scope.commit() : write;
        }
    }

    /** The balance an account read returned, or null if it has none or one that is not a number. */
    protected static Long balanceOf(Map<String, ByteIterator> account) {
        ByteIterator b = account.get(Accounts.BALANCE);
        try {
            return b == null ? null : Long.valueOf(b.toString());
        } catch (NumberFormatException e) {
            return null;
        }
    }

    private void audit(DB db) {
        long t0 = System.nanoTime();
        AuditScan.Result r = auditWithRetries(db);
        tally.audits.increment();
        if (r.violates(accounts)) {
            long n = tally.violations.incrementAndGet();
            if (n <= REPORTED_VIOLATIONS) {
                System.err.println("closedeconomy: VIOLATION: an audit saw " + r.describe(accounts));
            }
            // Recorded at once, not only in cleanup(): a client thread that dies later makes YCSB exit without it.
            if (r.accounts() != accounts.count()) {
                otherAccountsSeen = true;
                FailingExit.fail(otherAccounts(r.accounts()));
            } else {
                FailingExit.fail("closedeconomy: an audit saw a total other than the opening one (VIOLATION above)");
            }
            record("AUDIT", t0, VIOLATION);
        } else {
            if (!r.status().isOk()) {
                tally.errors.increment();
            }
            record("AUDIT", t0, r.status());
        }
    }

    /**
     * One audit, tried again (up to {@code closedeconomy.attempts} in all) while it ends in a retryable outcome: a
     * snapshot that expired across an oracle failover says nothing about the economy, so it is not counted an error.
     */
    private AuditScan.Result auditWithRetries(DB db) {
        AuditScan.Result r = auditOnce(db, table, accounts);
        for (int attempt = 1; attempt < attempts && Outcomes.isRetryable(r.status()); attempt++) {
            r = auditOnce(db, table, accounts);
        }
        return r;
    }

    /** One attempt at reading every account in one transaction; overridable so that a test can make it fail. */
    protected AuditScan.Result auditOnce(DB db, String table, Accounts accounts) {
        return AuditScan.run(db, table, accounts);
    }

    private static void record(String operation, long startNanos, Status s) {
        Measurements m = Measurements.getMeasurements();
        m.measure(operation, (int) ((System.nanoTime() - startNanos) / 1000));
        m.reportStatus(operation, s);
    }

    /** Reports the counts and runs the final check; a violation or a failed check fails the run. */
    @Override
    public void cleanup() throws WorkloadException {
        String report = runPhase ? tally.runReport() : tally.loadReport();
        System.out.println("[CLOSEDECONOMY] " + report);
        System.err.println("closedeconomy: " + report);
        if (tally.violations() > 0 && otherAccountsSeen) {
            FailingExit.fail("closedeconomy: " + tally.violations() + " audit(s) saw other accounts than the "
                    + accounts.count() + " of recordcount (see above)");
        } else if (tally.violations() > 0) {
            FailingExit.fail("closedeconomy: " + tally.violations() + " audit(s) saw a total other than "
                    + accounts.total() + ": the closed economy was violated");
        }
        if (!finalCheck) {
            return;
        }
        if (!runPhase && !wholeLoad) {
            System.out.println("[CLOSEDECONOMY] final check skipped: this load opened only accounts "
                    + (loadEnd - longProperty(props, INSERT_START_PROPERTY, 0)) + " of " + accounts.count());
            return;
        }
        AuditScan.Result r = finalAudit();
        String verdict = r.violates(accounts) || !r.status().isOk() ? "FAIL" : "PASS";
        String line = "final check: " + (r.status().isOk() ? r.describe(accounts) : "could not read: " + r.status())
                + ": " + verdict;
        System.out.println("[CLOSEDECONOMY] " + line);
        System.err.println("closedeconomy: " + line);
        if (verdict.equals("FAIL")) {
            FailingExit.fail("closedeconomy: " + line);
            if (r.status().isOk() && r.accounts() != accounts.count()) {
                FailingExit.fail(otherAccounts(r.accounts()));
            }
        }
    }

    /**
     * Why a scan of the accounts found {@code seen} of them instead of {@code recordcount}, and what to change:
     * transfers never open or close an account, so in a run the table holds accounts the settings do not describe
     * (another recordcount than the load's, a load not done or not finished), and after a whole load it holds rows
     * of an earlier, larger load: the user's to fix, not a violation of snapshot isolation.
     */
    private String otherAccounts(long seen) {
        String found = "closedeconomy: table '" + table + "' holds " + (seen > accounts.count() ? "more than "
                + accounts.count() : Long.toString(seen)) + " accounts from " + accounts.firstKey() + " on, not"
                + " recordcount=" + accounts.count();
        if (runPhase) {
            return found + " (transfers never open or close an account): run with the recordcount and"
                    + " closedeconomy.totalcash of the load, or load again into an empty table";
        }
        return seen > accounts.count() ? found + ": load into an empty table (this one holds accounts of an earlier"
                + " load with a larger recordcount)" : found;
    }

    /** Reads every account through a DB of the run's binding (YCSB has closed the client threads' ones). */
    private AuditScan.Result finalAudit() throws WorkloadException {
        String dbClass = props.getProperty("db", SibylClient.class.getName());
        DB db;
        try {
            db = (DB) Class.forName(dbClass).getDeclaredConstructor().newInstance();
        } catch (ReflectiveOperationException | ClassCastException e) {
            FailingExit.fail("closedeconomy: cannot create the DB " + dbClass + " for the final check: " + e);
            throw new WorkloadException("closedeconomy: cannot create the DB " + dbClass + " for the final check", e);
        }
        db.setProperties(props);
        try {
            db.init();
        } catch (DBException e) {
            FailingExit.fail("closedeconomy: the final check could not start the DB binding: " + e.getMessage());
            throw new WorkloadException("closedeconomy: final check", e);
        }
        try {
            return auditWithRetries(db);
        } finally {
            try {
                db.cleanup();
            } catch (DBException e) {
                System.err.println("closedeconomy: closing the final check's DB failed: " + e);
            }
        }
    }
}
