package io.sibyl.oracle.journal;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;

/** ZooKeeper digest credentials files ({@code journal.zk.auth.file}, {@code sibyl.oracle.zk.auth.file}) for tests. */
public final class DigestFiles {
    private DigestFiles() {
    }

    /** Writes {@code userAndPassword} ({@code user:password}) to {@code dir/name}, as an operator would. */
    public static Path write(Path dir, String name, String userAndPassword) throws IOException {
        Path f = dir.resolve(name);
        Files.writeString(f, userAndPassword + "\n");
        return f;
    }
}
