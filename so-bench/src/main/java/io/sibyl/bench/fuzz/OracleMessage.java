package io.sibyl.bench.fuzz;

import io.sibyl.protocol.Wire;

/**
 * One message the oracle sent: its type, request id and fields ({@code value} is the timestamp, abort reason, status
 * or watermark; {@code value2} a STATUS's commit timestamp); unused fields are 0 or null.
 */
record OracleMessage(byte type, long id, byte code, String text, long value, long value2) {
    /** An ERROR about the whole connection: the oracle closes it after sending this. */
    boolean isConnectionError() {
        return type == Wire.ERROR && id == 0;
    }

    @Override
    public String toString() {
        return type == Wire.ERROR ? "ERROR(id " + id + ", code " + code + ": " + text + ")"
                : "type " + type + "(id " + id + ", " + value + ", " + value2 + ")";
    }
}
