package io.sibyl.client.oracle;

/** Answer of the local replica to "is this writer's version in that reader's snapshot?". */
public enum Visibility {
    VISIBLE,
    INVISIBLE,
    /** The replica cannot tell (the writer predates this connection); ask the oracle with a commit query. */
    ASK_ORACLE
}
