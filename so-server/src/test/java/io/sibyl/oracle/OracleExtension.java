package io.sibyl.oracle;

import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

/**
 * An in-memory oracle on a free port for the tests of a class: one for the whole class when registered with
 * {@code @RegisterExtension} on a static field, a fresh one for each test on an instance field.
 *
 * <pre>{@code
 * @RegisterExtension
 * static final OracleExtension oracle = OracleExtension.withSettings(c -> c.withCapacities(1 << 16, 1 << 14, 1 << 12));
 * ...
 * OracleClient.connect("127.0.0.1", oracle.port());
 * }</pre>
 */
public final class OracleExtension implements BeforeAllCallback, AfterAllCallback, BeforeEachCallback,
        AfterEachCallback {

    /** What a test class changes in the defaults; it runs when the oracle starts, after static {@code @TempDir}s. */
    @FunctionalInterface
    public interface Settings {
        OracleConfig apply(OracleConfig defaults) throws Exception;
    }

    private final Settings settings;
    private OracleServer server;
    /** Started by {@link #beforeAll}: the class shares it, and {@link #afterEach} must leave it running. */
    private boolean perClass;

    private OracleExtension(Settings settings) {
        this.settings = settings;
    }

    /** An oracle with {@code settings} applied to the defaults on port 0 (the production capacities otherwise). */
    public static OracleExtension withSettings(Settings settings) {
        return new OracleExtension(settings);
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        perClass = true;
        start();
    }

    @Override
    public void beforeEach(ExtensionContext context) throws Exception {
        if (!perClass) {
            start();
        }
    }

    @Override
    public void afterEach(ExtensionContext context) {
        if (!perClass) {
            stop();
        }
    }

    @Override
    public void afterAll(ExtensionContext context) {
        stop();
    }

    private void start() throws Exception {
        server = OracleServer.startInMemory(settings.apply(OracleConfig.defaults().withPort(0)));
    }

    /** The running oracle. */
    public OracleServer server() {
        if (server == null) {
            throw new IllegalStateException("the oracle is not running (stopped, or asked for outside a test)");
        }
        return server;
    }

    public int port() {
        return server().port();
    }

    /** {@code 127.0.0.1:port}, as a client's oracle address setting takes it. */
    public String address() {
        return "127.0.0.1:" + port();
    }

    /** Stops the oracle before the extension would, for a test about a dead oracle; stopping twice does nothing. */
    public void stop() {
        if (server != null) {
            server.close();
            server = null;
        }
    }
}
