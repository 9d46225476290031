package io.sibyl.distribution;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

/**
 * The binary distribution as an operator gets it: sibyl-VERSION-bin.tar.gz unpacked in an empty directory, its
 * bin/so-server started from its own lib/ (in-memory journal, named explicitly) and its bin/sibyl status answered.
 * Runs after 'package' (integration-test phase), on the tarball that phase made.
 */
@Timeout(value = 3, unit = TimeUnit.MINUTES)
class TarballTest {
    private static final Pattern READY = Pattern.compile("READY port=(\\d+)");
    @TempDir
    static Path empty;
    private static Path home;
    private static Process oracle;

    @BeforeAll
    static void unpack() throws Exception {
        Path tarball = Path.of(System.getProperty("sibyl.tarball"));
        assertTrue(Files.isRegularFile(tarball), "mvn package makes " + tarball);
        Process tar = new ProcessBuilder("tar", "xzf", tarball.toString()).directory(empty.toFile())
                .redirectErrorStream(true).start();
        assertEquals(0, tar.waitFor(), new String(tar.getInputStream().readAllBytes(), StandardCharsets.UTF_8));
        home = empty.resolve("sibyl-" + System.getProperty("sibyl.version"));
    }

    @AfterAll
    static void stopOracle() throws Exception {
        if (oracle != null) {
            oracle.destroy(); // SIGTERM: a clean stop
            if (!oracle.waitFor(20, TimeUnit.SECONDS)) {
                oracle.destroyForcibly();
            }
        }
    }

    @Test
    void theUnpackedTarballStartsAnOracleThatAnswersBinSibylStatus() throws Exception {
        Path secret = empty.resolve("admin.secret");
        Files.writeString(secret, "the-admin-secret-of-the-tarball-test-0123456789");
        ProcessBuilder so = new ProcessBuilder(home.resolve("bin/so-server").toString(), "--journal=memory",
                "--port=0", "--host=127.0.0.1", "--conflict.table.rows=65536", "--max.running.transactions=4096",
                "--admin.secret.file=" + secret).directory(home.toFile()).redirectErrorStream(true);
        so.environment().put("SO_SERVER_JAVA_OPTS", "-Xmx256m -XX:+UseSerialGC");
        oracle = so.start();
        int port = awaitReady(oracle);

        Result status = run(List.of("bin/sibyl", "status", "--oracle=127.0.0.1:" + port,
                "--admin-secret-file=" + secret));
        assertEquals(0, status.exit(), status.output());
        for (String figure : new String[] {"t.max", "low.watermark", "running.transactions", "aborted.transactions",
                "connections"}) {
            assertTrue(status.output().contains(figure), figure + " in " + status.output());
        }
        assertTrue(Files.isRegularFile(home.resolve("logs/so-server.log")),
                "the oracle logs to a rolling file in the unpacked directory");

        Result noSecret = run(List.of("bin/sibyl", "transactions", "--oracle=127.0.0.1:" + port));
        assertEquals(2, noSecret.exit(), noSecret.output());
        assertTrue(noSecret.output().contains("--admin-secret-file"), "says what to give: " + noSecret.output());
    }

    @Test
    void itHoldsTheLaunchScriptsOneSlf4jBindingTheRegionServerJarAndTheLicence() throws Exception {
        for (String script : new String[] {"bin/so-server", "bin/sibyl", "bin/sibyl-sweep"}) {
            assertTrue(Files.isExecutable(home.resolve(script)), script);
        }
        for (String file : new String[] {"LICENSE", "NOTICE", "README.md", "conf/so-server.properties",
                "conf/so-server-logback.xml", "conf/sibyl-cli-logback.xml",
                "region-server/sibyl-hbase-gc-coprocessor-" + System.getProperty("sibyl.version") + ".jar"}) {
            assertTrue(Files.isRegularFile(home.resolve(file)), file);
        }
        List<String> bindings = new ArrayList<>();
        try (Stream<Path> jars = Files.list(home.resolve("lib"))) {
            jars.map(p -> p.getFileName().toString())
                    .filter(n -> n.startsWith("logback-classic") || n.startsWith("slf4j-simple")
                            || n.startsWith("slf4j-reload4j") || n.startsWith("slf4j-log4j") || n.startsWith("log4j-slf4j"))
                    .forEach(bindings::add);
        }
        assertEquals(List.of("logback-classic-1.2.13.jar"), bindings, "one SLF4J binding in lib/");
        // Known-vulnerable versions Hadoop 2.10 brings and the parent POM replaces (docs/dependencies.md).
        for (String jar : new String[] {"commons-beanutils-1.11.0.jar", "commons-compress-1.26.2.jar"}) {
            assertTrue(Files.isRegularFile(home.resolve("lib").resolve(jar)), "lib/ holds the fixed " + jar);
        }
        assertTrue(Files.readString(home.resolve("conf/so-server.properties")).contains("journal=bookkeeper"),
                "the example settings are the production ones");

        long t0 = System.nanoTime();
        Result help = run(List.of("bin/so-server", "--help"));
        assertEquals(0, help.exit(), help.output());
        assertTrue(help.output().contains("journal.zk.connect"), help.output());
        long helpMillis = (System.nanoTime() - t0) / 1_000_000;
        // It took 9 s when the script pre-touched a 1 GB heap; a JVM start is well under this on a loaded machine.
        assertTrue(helpMillis < 20_000, "so-server --help took " + helpMillis + " ms");
        Result cliHelp = run(List.of("bin/sibyl", "--help"));
        assertEquals(0, cliHelp.exit(), cliHelp.output());
        assertTrue(cliHelp.output().contains("enable-table"), cliHelp.output());
    }

    @Test
    void theDockerImageIsThisTarballUnpackedAndRunsItsSoServer() throws Exception {
        String version = System.getProperty("sibyl.version");
        List<String> lines = Files.readAllLines(Path.of("..", "docker", "Dockerfile"), StandardCharsets.UTF_8);
        assertTrue(lines.contains("ARG SIBYL_VERSION=" + version), "the Dockerfile's default version is this one");
        String tarball = Path.of(System.getProperty("sibyl.tarball")).getFileName().toString()
                .replace(version, "${SIBYL_VERSION}");
        assertTrue(lines.stream().anyMatch(l -> l.startsWith("RUN ") && l.contains("tar xzf distribution/target/"
                + tarball)), "the build stage unpacks the tarball 'mvn package' makes, " + tarball);
        // The oracle's stage is the last one: what it copies and runs must be the tarball's own layout.
        List<String> last = lines.subList(lastIndexStartingWith(lines, "FROM "), lines.size());
        String copy = last.stream().filter(l -> l.startsWith("COPY --from=build ")).findFirst().orElseThrow();
        assertEquals("COPY --from=build /dist/sibyl-${SIBYL_VERSION} /opt/sibyl", copy, "the unpacked directory");
        assertTrue(last.stream().noneMatch(l -> l.contains(".jar")), "no module jar of its own: " + last);
        String entry = last.stream().filter(l -> l.startsWith("ENTRYPOINT ")).findFirst().orElseThrow();
        Matcher m = Pattern.compile("\\[\"/opt/sibyl/([^\"]+)\"").matcher(entry);
        assertTrue(m.find(), entry);
        assertTrue(Files.isExecutable(home.resolve(m.group(1))), m.group(1) + " is in the tarball");
        assertTrue(last.stream().anyMatch(l -> l.startsWith("ENV SO_SERVER_JAVA_OPTS=")),
                "JVM flags through the tarball's own variable");
    }

    private static int lastIndexStartingWith(List<String> lines, String prefix) {
        for (int i = lines.size() - 1; i >= 0; i--) {
            if (lines.get(i).startsWith(prefix)) {
                return i;
            }
        }
        throw new AssertionError("no line starts with " + prefix);
    }

    private static int awaitReady(Process p) throws Exception {
        BufferedReader r = new BufferedReader(new InputStreamReader(p.getInputStream(), StandardCharsets.UTF_8));
        List<String> seen = new ArrayList<>();
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(90);
        String line;
        while (System.nanoTime() < deadline && (line = r.readLine()) != null) {
            seen.add(line);
            Matcher m = READY.matcher(line);
            if (m.find()) {
                Thread drain = new Thread(() -> {
                    try {
                        while (r.readLine() != null) {
                            // keep the pipe from filling up
                        }
                    } catch (IOException e) {
                        // the oracle stopped
                    }
                }, "so-server-output");
                drain.setDaemon(true);
                drain.start();
                return Integer.parseInt(m.group(1));
            }
        }
        fail("bin/so-server printed no READY line: " + String.join("\n", seen));
        return -1;
    }

    private record Result(int exit, String output) {
    }

    /** Runs a command of the unpacked directory, from that directory; stdout and stderr together. */
    private static Result run(List<String> command) throws Exception {
        File log = Files.createTempFile(empty, "run", ".log").toFile();
        Process p = new ProcessBuilder(command).directory(home.toFile()).redirectErrorStream(true)
                .redirectOutput(log).start();
        if (!p.waitFor(90, TimeUnit.SECONDS)) {
            p.destroyForcibly();
            fail(command + " did not finish within 90 s");
        }
        return new Result(p.exitValue(), Files.readString(log.toPath()));
    }
}
