package io.sibyl.protocol;

import java.nio.charset.StandardCharsets;

/**
 * Where clients find the serving oracle: the content of the leader znode (default {@code /sibyl/oracle/leader}), an
 * ephemeral znode the leader writes once it serves. The epoch is the ledger registry epoch the leader took over
 * with, so a client can tell a newer leader from the one it lost.
 *
 * <p>Format (UTF-8 text, readable with {@code zkCli get}):
 * <pre>
 * sibyl-leader 1
 * epoch 7
 * address host:port
 * owner host/pid/random
 * </pre>
 */
public record LeaderRecord(long epoch, String host, int port, String owner) {
    private static final String MAGIC = "sibyl-leader 1";

    public LeaderRecord {
        if (host == null || host.isBlank() || port <= 0 || port > 65535) {
            throw new IllegalArgumentException("a leader needs a host and a port in 1..65535, got " + host + ":"
                    + port);
        }
        owner = owner == null ? "" : owner;
    }

    /** {@code host:port}. */
    public String address() {
        return host + ":" + port;
    }

    public byte[] encode() {
        return (MAGIC + "\nepoch " + epoch + "\naddress " + address() + "\nowner " + owner + "\n")
                .getBytes(StandardCharsets.UTF_8);
    }

    /**
     * Parses a leader znode's content.
     *
     * @throws IllegalArgumentException naming what is wrong, if it is not in this format
     */
    public static LeaderRecord decode(byte[] data) {
        if (data == null) { // what ZooKeeper returns for a znode created without data (zkCli: create /path)
            throw new IllegalArgumentException("the leader znode holds no data");
        }
        String[] lines = new String(data, StandardCharsets.UTF_8).split("\n");
        if (lines.length < 3 || !lines[0].equals(MAGIC) || !lines[1].startsWith("epoch ")
                || !lines[2].startsWith("address ")) {
            throw new IllegalArgumentException("the leader znode is not in the '" + MAGIC + "' format");
        }
        String address = lines[2].substring("address ".length()).trim();
        int colon = address.lastIndexOf(':');
        if (colon <= 0) {
            throw new IllegalArgumentException("the leader znode's address '" + address + "' is not host:port");
        }
        String owner = lines.length > 3 && lines[3].startsWith("owner ") ? lines[3].substring(6).trim() : "";
        try {
            return new LeaderRecord(Long.parseLong(lines[1].substring(6).trim()), address.substring(0, colon),
                    Integer.parseInt(address.substring(colon + 1)), owner);
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("the leader znode has a malformed epoch or port", e);
        }
    }
}
