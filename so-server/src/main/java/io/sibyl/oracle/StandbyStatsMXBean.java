package io.sibyl.oracle;

/**
 * A hot standby's figures over JMX, as {@code io.sibyl:type=StatusOracleStandby,port=PORT} (PORT: the client port it
 * will serve on once it leads); the same as its Prometheus endpoint ({@link StandbyMetrics}).
 */
public interface StandbyStatsMXBean {
    /** "standby" while it stands by (the bean goes when it takes over and the leader's bean appears). */
    String getRole();

    /** Milliseconds since it last held every journal entry the leader had made durable; -1 before the first time. */
    long getLagMillis();

    /** Journal entries replayed while standing by. */
    long getEntriesReplayed();

    /** 0 for the first standby in line (the one that takes over), 1 for the next, ...; -1 when unknown. */
    int getPositionInLine();
}
