package io.sibyl.protocol;

/** A peer sent bytes that do not follow the Sibyl wire protocol; the message says what was wrong. */
public class ProtocolException extends RuntimeException {
    private static final long serialVersionUID = 1L;

    public ProtocolException(String message) {
        super(message);
    }
}
