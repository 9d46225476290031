package io.sibyl.bench;

import io.sibyl.oracle.OracleConfig;
import io.sibyl.oracle.OracleServer;

import java.util.Properties;

/** An in-process oracle on a free port with tables small enough for a test JVM. */
final class SmallOracle {
    private SmallOracle() {
    }

    static OracleServer start() throws Exception {
        Properties p = new Properties();
        p.setProperty("host", "127.0.0.1");
        p.setProperty("port", "0");
        p.setProperty("conflict.table.rows", "65536");
        p.setProperty("recent.commits.capacity", "65536");
        p.setProperty("max.running.transactions", "65536");
        return OracleServer.startInMemory(OracleConfig.fromProperties(p));
    }
}
