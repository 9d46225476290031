package io.sibyl.client.oracle;

/** The connection to the oracle is gone (or never came up); requests in flight have an unknown outcome. */
public class OracleUnavailableException extends OracleException {
    private static final long serialVersionUID = 1L;

    public OracleUnavailableException(String message) {
        super(0, message);
    }
}
