package io.sibyl.oracle.ha;

import org.apache.zookeeper.CreateMode;
import org.apache.zookeeper.KeeperException;
import org.apache.zookeeper.ZooDefs;
import org.apache.zookeeper.ZooKeeper;

/** Creates the persistent parents of a znode path. */
final class ZnodePaths {
    private ZnodePaths() {
    }

    /** Creates every missing ancestor of {@code path} (not {@code path} itself) as a persistent empty znode. */
    static void createParents(ZooKeeper zk, String path) throws KeeperException, InterruptedException {
        int i = 0;
        while ((i = path.indexOf('/', i + 1)) > 0) {
            String parent = path.substring(0, i);
            if (zk.exists(parent, false) != null) {
                continue;
            }
            try {
                zk.create(parent, new byte[0], ZooDefs.Ids.OPEN_ACL_UNSAFE, CreateMode.PERSISTENT);
            } catch (KeeperException.NodeExistsException e) {
                // created meanwhile
            }
        }
    }
}
