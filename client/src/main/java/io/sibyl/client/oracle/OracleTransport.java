package io.sibyl.client.oracle;

/** Which threads write an oracle connection's requests and read its replies. */
public enum OracleTransport {
    /**
     * A Netty event loop writes and reads, completing the futures on its thread: for clients that mostly do not
     * wait for their replies, and for every TLS connection.
     */
    EVENT_LOOP,
    /**
     * The thread that makes a request writes it and the thread that waits for a reply reads it, on a blocking
     * socket, with a poller for what arrives while nobody waits: one thread wake-up less per round trip. Plaintext
     * only: a TLS connection uses {@link #EVENT_LOOP}.
     */
    WAITING_THREAD
}
