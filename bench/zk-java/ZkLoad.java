import java.io.File;
import java.util.HashMap;
import java.util.Map;

import org.apache.zookeeper.server.DataTree;
import org.apache.zookeeper.server.ZKDatabase;
import org.apache.zookeeper.server.persistence.FileSnap;
import org.apache.zookeeper.server.persistence.FileTxnSnapLog;

/**
 * ZooKeeper's own start-up load, for bench/bench_zookeeper.py (ZooKeeper 3.8.0, Debian's jar).
 *
 *   java -cp CLASSES:/usr/share/java/zookeeper.jar ZkLoad db DATADIR
 *       ZKDatabase.loadDataBase() over FileTxnSnapLog(DATADIR, DATADIR): what a server does at
 *       start (FileTxnSnapLog.restore: the newest valid snapshot, then every txn logged after it).
 *       DATADIR is the directory holding version-2/.
 *   java -cp ... ZkLoad snap SNAPDIR
 *       FileSnap(SNAPDIR).deserialize(DataTree, sessions): the snapshot alone (SnapStream,
 *       DataTree.deserialize, seal checks), no logs. SNAPDIR is the version-2/ directory.
 *
 * Prints one JSON line: mode, znodes, zxid, sessions, seconds (inside the JVM) and the live heap
 * after a full GC (bytes), so the caller can time the whole process and read its peak RSS.
 */
public final class ZkLoad {
    public static void main(String[] args) throws Exception {
        if (args.length != 2) {
            System.err.println("usage: ZkLoad db|snap DIR");
            System.exit(2);
        }
        long t0 = System.nanoTime();
        int nodes;
        long zxid;
        int sessions;
        Object keep;
        if (args[0].equals("db")) {
            File dir = new File(args[1]);
            FileTxnSnapLog snapLog = new FileTxnSnapLog(dir, dir);
            ZKDatabase db = new ZKDatabase(snapLog);
            zxid = db.loadDataBase();
            nodes = db.getNodeCount();
            sessions = db.getSessionWithTimeOuts().size();
            keep = db;
        } else if (args[0].equals("snap")) {
            DataTree tree = new DataTree();
            Map<Long, Integer> sess = new HashMap<>();
            zxid = new FileSnap(new File(args[1])).deserialize(tree, sess);
            nodes = tree.getNodeCount();
            sessions = sess.size();
            keep = tree;
        } else {
            System.err.println("unknown mode " + args[0]);
            System.exit(2);
            return;
        }
        double seconds = (System.nanoTime() - t0) / 1e9;
        System.gc();
        Runtime rt = Runtime.getRuntime();
        long live = rt.totalMemory() - rt.freeMemory();
        System.out.println("{\"mode\":\"" + args[0] + "\",\"znodes\":" + nodes + ",\"zxid\":" + zxid
                + ",\"sessions\":" + sessions + ",\"seconds\":" + seconds + ",\"live_heap_bytes\":" + live
                + ",\"kept\":" + (keep != null) + "}");
    }
}
