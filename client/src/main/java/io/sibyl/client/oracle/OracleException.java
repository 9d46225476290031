package io.sibyl.client.oracle;

/** The oracle rejected a request (too large, unknown transaction, malformed...); the message says how to fix it. */
public class OracleException extends RuntimeException {
    private static final long serialVersionUID = 1L;
    private final int code;

    public OracleException(int code, String message) {
        super(message);
        this.code = code;
    }

    /** One of the {@code io.sibyl.protocol.Wire.ERR_*} codes, or 0 for a client-side failure. */
    public int code() {
        return code;
    }
}
