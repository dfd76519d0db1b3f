package org.apache.paimon.cleanup.spark;

import java.time.ZoneId;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The command line of {@link RemoveOrphanFiles}: the arguments of the CLI's {@code
 * remove-orphan-files} that apply to a table-wide run, plus {@code --parallelism}.
 */
final class JobArgs {
    static final String USAGE = String.join("\n",
            "usage: spark-submit [spark options] --class org.apache.paimon.cleanup.spark.RemoveOrphanFiles \\",
            "         paimon-cleanup-spark.jar TABLE [options]",
            "",
            "Removes the orphan files of a Paimon table (every branch) as a Spark job: the listing and",
            "manifest-reading units and the deletions run on the executors; the decision on the driver.",
            "",
            "  TABLE                     table root: a path, file://, s3://, gs://, az:// URI",
            "  -o, --option KEY=VALUE    table or storage option (repeatable); also every",
            "                            spark.hadoop.KEY of the Spark configuration (-o wins)",
            "  --older-than TEXT         only files older than this may be deleted (default 1 d): a",
            "                            timestamp ('2024-01-01 12:00:00', local zone unless it ends",
            "                            with one: Z, +08:00) or a duration back from now ('1 d')",
            "  --older-than-ms MS        absolute cut-off (epoch milliseconds, not in the future)",
            "  --no-writers-running      allow a cut-off within the last hour, up to now",
            "  --external-roots-owned    list and clean the table's external data roots too",
            "  --dry-run                 compute and report, change nothing",
            "  --parallelism N           Spark partitions of each stage (default: the context's",
            "                            default parallelism)",
            "  --shards N                shards of the decision (1 to 65536; default: the",
            "                            parallelism): the units' results are shuffled by shard",
            "                            and each shard task decides its own files",
            "  --json                    print the report as the CLI's --json document",
            "  -h, --help                this text");

    String table;
    final Map<String, String> options = new LinkedHashMap<>();
    Long olderThanMs;
    boolean noWritersRunning;
    boolean externalRootsOwned;
    boolean dryRun;
    int parallelism;

    /** Shards of the decision; 0: the parallelism. */
    int shards;
    boolean json;
    boolean help;

    private JobArgs() {}

    private static String value(String[] argv, int i, String flag) {
        if (i >= argv.length) {
            throw new IllegalArgumentException(flag + " needs a value");
        }
        return argv[i];
    }

    /**
     * @param argv the application arguments
     * @param nowMs the current time, for durations and the "not in the future" checks
     * @param zone the zone of a timestamp without one
     * @throws IllegalArgumentException for anything the CLI would refuse as well
     */
    static JobArgs parse(String[] argv, long nowMs, ZoneId zone) {
        JobArgs a = new JobArgs();
        String olderThan = null;
        Long olderThanMs = null;
        for (int i = 0; i < argv.length; i++) {
            String arg = argv[i];
            String inline = null;
            int eq = arg.indexOf('=');
            if (arg.startsWith("--") && eq > 0) {
                inline = arg.substring(eq + 1);
                arg = arg.substring(0, eq);
            }
            switch (arg) {
                case "-h":
                case "--help":
                    a.help = true;
                    break;
                case "-o":
                case "--option": {
                    String kv = inline != null ? inline : value(argv, ++i, arg);
                    int k = kv.indexOf('=');
                    if (k <= 0) {
                        throw new IllegalArgumentException("option '" + kv + "' is not KEY=VALUE");
                    }
                    a.options.put(kv.substring(0, k), kv.substring(k + 1));
                    break;
                }
                case "--older-than":
                    olderThan = inline != null ? inline : value(argv, ++i, arg);
                    break;
                case "--older-than-ms": {
                    String v = inline != null ? inline : value(argv, ++i, arg);
                    try {
                        olderThanMs = Long.valueOf(Long.parseLong(v.trim()));
                    } catch (NumberFormatException e) {
                        throw new IllegalArgumentException("--older-than-ms '" + v + "' is not a number");
                    }
                    break;
                }
                case "--no-writers-running":
                    a.noWritersRunning = true;
                    break;
                case "--external-roots-owned":
                    a.externalRootsOwned = true;
                    break;
                case "--dry-run":
                    a.dryRun = true;
                    break;
                case "--json":
                    a.json = true;
                    break;
                case "--parallelism": {
                    String v = inline != null ? inline : value(argv, ++i, arg);
                    try {
                        a.parallelism = Integer.parseInt(v.trim());
                    } catch (NumberFormatException e) {
                        a.parallelism = -1;
                    }
                    if (a.parallelism < 1) {
                        throw new IllegalArgumentException("--parallelism '" + v + "' is not a positive number");
                    }
                    break;
                }
                case "--shards": {
                    String v = inline != null ? inline : value(argv, ++i, arg);
                    try {
                        a.shards = Integer.parseInt(v.trim());
                    } catch (NumberFormatException e) {
                        a.shards = -1;
                    }
                    if (a.shards < 1 || a.shards > 65536) {
                        throw new IllegalArgumentException("--shards '" + v + "' is not a number from 1 to 65536");
                    }
                    break;
                }
                default:
                    if (arg.startsWith("-") && arg.length() > 1) {
                        throw new IllegalArgumentException("unknown argument '" + argv[i] + "'");
                    }
                    if (a.table != null) {
                        throw new IllegalArgumentException("more than one table: '" + a.table
                                + "' and '" + argv[i] + "'");
                    }
                    a.table = argv[i];
            }
        }
        if (a.help) {
            return a;
        }
        if (a.table == null) {
            throw new IllegalArgumentException("the table is missing");
        }
        if (olderThan != null && olderThanMs != null) {
            throw new IllegalArgumentException("--older-than and --older-than-ms exclude each other");
        }
        if (olderThan != null) {
            a.olderThanMs = Long.valueOf(OlderThan.parse(olderThan, nowMs, zone));
        } else if (olderThanMs != null) {
            if (olderThanMs.longValue() > nowMs) {
                throw new IllegalArgumentException("--older-than-ms " + olderThanMs
                        + " is in the future (now is " + nowMs + " ms)");
            }
            a.olderThanMs = olderThanMs;
        }
        return a;
    }
}
