package io.sibyl.bench.fuzz;

import io.sibyl.client.oracle.OracleClient;
import io.sibyl.client.oracle.OracleCredentials;
import io.sibyl.protocol.SecretProof;
import io.sibyl.protocol.Wire;

import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * One fuzz run against one oracle: the attacking threads until they have sent their frames, the good clients, the
 * sweeper and the memory sampler meanwhile; then the end-of-run checks. The engine of {@link SoFuzz}.
 */
final class FuzzRun {
    private FuzzRun() {
    }

    static FuzzReport run(FuzzOptions o, PrintStream progress) throws IOException, InterruptedException {
        byte[] secret = o.adminSecretFile == null ? null
                : SecretProof.readSecret(o.adminSecretFile, "--admin-secret-file");
        OracleLimits oracle = OracleLimits.probe(o.oracleHost, o.oraclePort, secret);
        FuzzCounters counters = new FuzzCounters();
        GoodOutcomes outcomes = new GoodOutcomes();
        GoodTransactions good = new GoodTransactions();
        CommitHistory history = new CommitHistory();
        Verdicts verdicts = new Verdicts(counters);
        AtomicBoolean stop = new AtomicBoolean();

        List<OracleClient> clients = new ArrayList<>();
        List<Thread> helpers = new ArrayList<>();
        for (int i = 0; i < o.goodClients; i++) {
            OracleClient c = OracleClient.connect(o.oracleHost, o.oraclePort, 10_000, OracleCredentials.newClient());
            clients.add(c);
            helpers.add(start("so-fuzz-good-" + i, new GoodClient(c, new Random(o.seed - 1 - i), o.goodRows, good,
                    history, outcomes, stop::get)));
        }
        if (secret != null) {
            OracleClient admin = OracleClient.connect(o.oracleHost, o.oraclePort, 10_000,
                    OracleCredentials.newAdmin(secret));
            clients.add(admin);
            helpers.add(start("so-fuzz-sweeper", new AbortSweeper(admin, good, outcomes, stop::get)));
        }
        RssSampler rss = o.serverPid > 0 ? new RssSampler(o.serverPid, stop::get) : null;
        if (rss != null) {
            helpers.add(start("so-fuzz-rss", rss));
        }

        HandshakeAttacks first = new HandshakeAttacks(oracle, counters, verdicts,
                TlsClientHello.samples(o.oracleHost, o.oraclePort));
        SessionAttacks sessions = new SessionAttacks(oracle, counters, verdicts, good, o.sessionFrames, o.frames);
        List<Thread> attackers = new ArrayList<>();
        long t0 = System.nanoTime();
        for (int i = 0; i < o.connections; i++) {
            attackers.add(start("so-fuzz-attacker-" + i, new Attacker(new Random(o.seed + i), first, sessions,
                    counters, o.frames)));
        }
        reportProgress(o, progress, attackers, counters, outcomes, rss, t0);
        double seconds = (System.nanoTime() - t0) / 1e9;
        stop.set(true);
        for (Thread t : helpers) {
            t.join(30_000);
        }
        for (OracleClient c : clients) {
            c.close();
        }
        if (rss != null) {
            rss.sample();
        }
        Boolean alive = o.serverPid > 0 ? ProcessHandle.of(o.serverPid).map(ProcessHandle::isAlive).orElse(false)
                : null;
        StringBuilder firstProblem = new StringBuilder();
        Map<String, Long> logProblems = o.oracleLog == null ? Map.of()
                : OracleLogScan.scan(o.oracleLog, firstProblem);
        return new FuzzReport(o, counters, outcomes, seconds, history.violations(), alive,
                freshClientServed(o), rss, logProblems, firstProblem.toString());
    }

    /** Prints a line every --progress seconds until every attacker is done. */
    private static void reportProgress(FuzzOptions o, PrintStream out, List<Thread> attackers, FuzzCounters counters,
                                       GoodOutcomes outcomes, RssSampler rss, long t0) throws InterruptedException {
        long every = (long) (o.progressSeconds * 1000);
        for (Thread t : attackers) {
            while (t.isAlive()) {
                t.join(every);
                if (t.isAlive() && out != null) {
                    double s = (System.nanoTime() - t0) / 1e9;
                    out.printf(Locale.ROOT, "so-fuzz: %.0f s: %,d frames (%,.0f/s), good commits %,d, wrong %d,"
                            + " breaches %d%s%n", s, counters.frames(), counters.frames() / s, outcomes.commits.sum(),
                            outcomes.wrongAnswers(), counters.misbehaviours(),
                            rss == null || rss.samples() == 0 ? "" : ", oracle RSS " + rss.lastKb() / 1024 + " MiB");
                }
            }
        }
    }

    /** After the attack a new client still gets a handshake, a start timestamp and a commit. */
    private static boolean freshClientServed(FuzzOptions o) {
        try (OracleClient c = OracleClient.connect(o.oracleHost, o.oraclePort, 10_000)) {
            long start = c.begin().get(10, java.util.concurrent.TimeUnit.SECONDS);
            long commit = c.commit(start, new long[] {Long.MIN_VALUE + Wire.VERSION}).get(10,
                    java.util.concurrent.TimeUnit.SECONDS);
            return commit > start;
        } catch (Exception e) {
            return false;
        }
    }

    private static Thread start(String name, Runnable r) {
        Thread t = new Thread(r, name);
        t.setDaemon(true);
        t.start();
        return t;
    }
}
