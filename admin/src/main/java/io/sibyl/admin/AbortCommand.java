package io.sibyl.admin;

import io.sibyl.protocol.Wire;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

import java.io.PrintWriter;
import java.util.concurrent.Callable;

/** {@code bin/sibyl abort <ts>}: aborts a running transaction of any client (admin role). */
@Command(name = "abort", mixinStandardHelpOptions = true,
        header = "Aborts a running transaction (admin).",
        description = {"Aborts the running transaction that started at TS (from bin/sibyl transactions), whatever"
                + " client began it: its commit will fail (ABORTED, already aborted). Its client still reads its"
                + " snapshot until it rolls back, so it goes on holding the low watermark until then or until its"
                + " connection closes. Needs the admin secret.",
                "Exit status: 0 aborted, 1 not running (committed, aborted or unknown) or the oracle refused."})
final class AbortCommand implements Callable<Integer> {
    @Mixin
    ClusterOptions cluster;
    @Spec
    CommandSpec spec;

    @Parameters(paramLabel = "TS", description = "the transaction's start timestamp")
    long startTs;

    @Override
    public Integer call() throws Exception {
        if (startTs <= 0) {
            throw new CliException("a start timestamp is a positive number, got " + startTs, CliException.USAGE);
        }
        PrintWriter out = spec.commandLine().getOut();
        try (AdminConnection c = cluster.adminConnection("abort")) {
            // Asked first, so that a mistyped timestamp is said to be one rather than "aborted".
            byte state = c.query(startTs);
            if (state != Wire.STATUS_RUNNING) {
                throw new CliException("transaction " + startTs + " is not running: it " + describe(state)
                        + "; nothing to abort (bin/sibyl transactions lists the running ones)");
            }
            c.abort(startTs);
            out.println("aborted transaction " + startTs);
        }
        return 0;
    }

    private static String describe(byte state) {
        return switch (state) {
            case Wire.STATUS_COMMITTED, Wire.STATUS_COMMITTED_LONG_AGO -> "committed";
            case Wire.STATUS_ABORTED -> "was aborted already";
            default -> "is unknown to the oracle (never started, or finished without writing)";
        };
    }
}
