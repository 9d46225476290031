package io.sibyl.oracle;

import java.io.IOException;
import java.io.Reader;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Map;
import java.util.Properties;
import java.util.concurrent.CountDownLatch;

/**
 * Runs the status oracle as a process: {@code so-server [--config FILE] [--key=value ...]}. Keys are those of
 * {@link OracleConfig#describe()}; flags override the file. Prints {@code READY port=N} once it accepts clients.
 */
public final class OracleServerMain {
    private OracleServerMain() {
    }

    public static void main(String[] args) throws Exception {
        if (args.length > 0 && (args[0].equals("--help") || args[0].equals("-h"))) {
            System.out.println("usage: so-server [--config FILE] [--key=value ...]; settings and defaults:");
            OracleConfig.defaults().describe().forEach((k, v) -> System.out.println("  " + k + " = " + v));
            return;
        }
        OracleConfig config;
        try {
            config = parse(args);
        } catch (IllegalArgumentException | IOException e) {
            System.err.println("so-server: " + e.getMessage());
            System.err.println("usage: so-server [--config FILE] [--key=value ...]; settings and defaults:");
            OracleConfig.defaults().describe().forEach((k, v) -> System.err.println("  " + k + " = " + v));
            System.exit(2);
            return;
        }
        System.out.println("so-server settings:");
        for (Map.Entry<String, String> e : config.describe().entrySet()) {
            System.out.println("  " + e.getKey() + " = " + e.getValue());
        }
        OracleServer server = OracleServer.startInMemory(config);
        CountDownLatch stopped = new CountDownLatch(1);
        Runtime.getRuntime().addShutdownHook(new Thread(() -> {
            server.close();
            stopped.countDown();
        }, "so-server-shutdown"));
        System.out.println("READY port=" + server.port());
        System.out.flush();
        stopped.await();
    }

    static OracleConfig parse(String[] args) throws IOException {
        Properties p = new Properties();
        for (int i = 0; i < args.length; i++) {
            String a = args[i];
            if (a.equals("--config")) {
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException("--config needs a file name");
                }
                try (Reader r = Files.newBufferedReader(Path.of(args[++i]))) {
                    Properties file = new Properties();
                    file.load(r);
                    file.forEach((k, v) -> p.putIfAbsent(k, v));
                }
            } else if (a.startsWith("--") && a.contains("=")) {
                p.setProperty(a.substring(2, a.indexOf('=')), a.substring(a.indexOf('=') + 1));
            } else {
                throw new IllegalArgumentException("unrecognised argument '" + a + "'");
            }
        }
        return OracleConfig.fromProperties(p);
    }
}
