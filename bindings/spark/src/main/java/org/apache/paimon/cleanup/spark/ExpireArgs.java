package org.apache.paimon.cleanup.spark;

import java.io.Serializable;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.regex.Pattern;

import org.apache.paimon.cleanup.ExpireConfig;
import org.apache.paimon.cleanup.PaimonCleanup;
import org.apache.paimon.cleanup.PaimonCleanupException;

/**
 * The command line of {@link ExpireSnapshots}: the CLI's {@code expire-snapshots} arguments and
 * {@code --parallelism} and {@code --shards}.
 */
final class ExpireArgs implements Serializable {
    private static final long serialVersionUID = 1L;

    static final String USAGE = String.join("\n",
            "usage: spark-submit [spark options] --class org.apache.paimon.cleanup.spark.ExpireSnapshots \\",
            "         paimon-cleanup-spark.jar TABLE [options]",
            "",
            "Expires old snapshots of a Paimon table branch and deletes every file only they referenced,",
            "with the library's units on the executors (the same result as the CLI's expire-snapshots).",
            "",
            "  TABLE                     table root: a path, file://, s3://, gs://, az:// URI",
            "  --branch NAME             branch to expire (default main)",
            "  -o, --option KEY=VALUE    table or storage option (repeatable); also every",
            "                            spark.hadoop.* key of the Spark configuration, as RemoveOrphanFiles",
            "  --retain-min N            minimum number of snapshots kept (default: table option, 10)",
            "  --retain-max N            maximum number of snapshots kept",
            "  --time-retained DURATION  keep versions younger than this ('30 min', '1 h', '7d')",
            "  --older-than TEXT         versions older than this may expire (timestamp or duration)",
            "  --older-than-ms MS        absolute cut-off (epoch milliseconds, not in the future)",
            "  --max-deletes N           maximum snapshots expired in this run",
            "  --clean-empty-dirs        remove bucket and partition directories left empty",
            "  --refuse-if-tags-pin      refuse to run when a tag pins a snapshot that would expire",
            "  --dry-run                 compute and report, change nothing",
            "  --parallelism N           partitions of each stage (default: Spark's default parallelism)",
            "  --shards N                decide in N shards (1 to 65536): the candidate units' results",
            "                            are shuffled by shard and each shard task decides its own",
            "                            files, so the driver never holds every candidate (default:",
            "                            the driver decides, after a protect stage)",
            "  --report-dir DIR          with --shards: no path goes to the driver; each delete unit's",
            "                            task writes the paths it deleted to DIR/unit-<i>.txt (dry",
            "                            run: each shard task to DIR/shard-<k>.txt), the driver its",
            "                            own and a sample to DIR/driver-paths.txt, and the job",
            "                            prints the counts and the first 20 paths only (DIR: a",
            "                            directory every executor can write)",
            "  --json                    print the report as the CLI's --json document",
            "  -h, --help                this text");

    /** A Paimon duration: a number and a unit ({@code 0s}, {@code 30 min}, {@code 7d}). */
    private static final Pattern DURATION = Pattern.compile("\\s*[0-9]+\\s*[A-Za-z]+\\s*");

    String table;
    String branch;
    final Map<String, String> options = new LinkedHashMap<>();
    Long retainMin;
    Long retainMax;
    String timeRetained;
    String olderThan;
    Long olderThanMs;
    Long maxDeletes;
    boolean cleanEmptyDirs;
    boolean refuseIfTagsPin;
    boolean dryRun;
    int parallelism;
    /** Shards of the decision; 0: no shards (the driver decides). */
    int shards;
    boolean json;
    /** {@code --report-dir}: where the sharded run writes its path listing; null: printed. */
    String reportDir;
    boolean help;
    /** {@code --time-retained} in milliseconds, set by {@link #resolve}. */
    Long timeRetainedMs;
    /** The cut-off of {@code --older-than} or {@code --older-than-ms}, set by {@link #resolve}. */
    Long cutoffMs;

    private ExpireArgs() {}

    private static String value(String[] argv, int i, String flag) {
        if (i >= argv.length) {
            throw new IllegalArgumentException(flag + " needs a value");
        }
        return argv[i];
    }

    private static void option(Map<String, String> options, String kv) {
        int k = kv.indexOf('=');
        if (k <= 0) {
            throw new IllegalArgumentException("option '" + kv + "' is not KEY=VALUE");
        }
        options.put(kv.substring(0, k), kv.substring(k + 1));
    }

    private static int positive(String flag, String v) {
        int n;
        try {
            n = Integer.parseInt(v.trim());
        } catch (NumberFormatException e) {
            n = -1;
        }
        if (n < 1) {
            throw new IllegalArgumentException(flag + " '" + v + "' is not a positive number");
        }
        return n;
    }

    private static Long number(String flag, String v) {
        try {
            return Long.valueOf(Long.parseLong(v.trim()));
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException(flag + " '" + v + "' is not a number");
        }
    }

    /**
     * @param argv the job's arguments
     * @param nowMs the current time, for the "not in the future" check of {@code --older-than-ms}
     * @throws IllegalArgumentException for anything the CLI would refuse as well
     */
    static ExpireArgs parse(String[] argv, long nowMs) {
        ExpireArgs a = new ExpireArgs();
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
                case "--option":
                    option(a.options, inline != null ? inline : value(argv, ++i, arg));
                    break;
                case "--branch":
                    a.branch = inline != null ? inline : value(argv, ++i, arg);
                    break;
                case "--retain-min":
                    a.retainMin = number(arg, inline != null ? inline : value(argv, ++i, arg));
                    break;
                case "--retain-max":
                    a.retainMax = number(arg, inline != null ? inline : value(argv, ++i, arg));
                    break;
                case "--time-retained":
                    a.timeRetained = inline != null ? inline : value(argv, ++i, arg);
                    break;
                case "--older-than":
                    a.olderThan = inline != null ? inline : value(argv, ++i, arg);
                    break;
                case "--older-than-ms":
                    a.olderThanMs = number(arg, inline != null ? inline : value(argv, ++i, arg));
                    break;
                case "--max-deletes":
                    a.maxDeletes = number(arg, inline != null ? inline : value(argv, ++i, arg));
                    break;
                case "--clean-empty-dirs":
                    a.cleanEmptyDirs = true;
                    break;
                case "--refuse-if-tags-pin":
                    a.refuseIfTagsPin = true;
                    break;
                case "--dry-run":
                    a.dryRun = true;
                    break;
                case "--json":
                    a.json = true;
                    break;
                case "--parallelism":
                    a.parallelism = positive(arg, inline != null ? inline : value(argv, ++i, arg));
                    break;
                case "--report-dir":
                    a.reportDir = inline != null ? inline : value(argv, ++i, arg);
                    if (a.reportDir.isEmpty()) {
                        throw new IllegalArgumentException("--report-dir needs a directory");
                    }
                    break;
                case "--shards": {
                    String v = inline != null ? inline : value(argv, ++i, arg);
                    a.shards = positive(arg, v);
                    if (a.shards > 65536) {
                        throw new IllegalArgumentException(
                                "--shards '" + v + "' is not a number from 1 to 65536");
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
        if (a.reportDir != null && a.shards == 0) {
            throw new IllegalArgumentException("--report-dir needs --shards");
        }
        int cutoffs = (a.timeRetained != null ? 1 : 0) + (a.olderThan != null ? 1 : 0)
                + (a.olderThanMs != null ? 1 : 0);
        if (cutoffs > 1) {
            throw new IllegalArgumentException(
                    "--time-retained, --older-than and --older-than-ms exclude each other");
        }
        if (a.olderThanMs != null && a.olderThanMs.longValue() > nowMs) {
            throw new IllegalArgumentException("--older-than-ms " + a.olderThanMs
                    + " is in the future (now is " + nowMs + " ms)");
        }
        if (a.timeRetained != null && !DURATION.matcher(a.timeRetained).matches()) {
            throw new IllegalArgumentException("--time-retained '" + a.timeRetained
                    + "' is not a duration (a number and a unit: '30 min', '7d')");
        }
        return a;
    }

    /**
     * Reads {@code --time-retained} and {@code --older-than} with the library's parser (the
     * CLI's; needs the native library), in the JVM that runs main.
     *
     * @throws IllegalArgumentException for a text the CLI refuses
     */
    void resolve(long nowMs) {
        try {
            if (timeRetained != null) {
                // A duration counted back from now, as the parser reads it, is now minus it.
                timeRetainedMs = Long.valueOf(nowMs - PaimonCleanup.parseOlderThan(timeRetained, nowMs));
            } else if (olderThan != null) {
                cutoffMs = Long.valueOf(PaimonCleanup.parseOlderThan(olderThan, nowMs));
            } else {
                cutoffMs = olderThanMs;
            }
        } catch (PaimonCleanupException e) {
            throw new IllegalArgumentException(
                    (timeRetained != null ? "--time-retained '" + timeRetained : "--older-than '" + olderThan)
                            + "': " + e.getMessage());
        }
    }

    /** The expiry's settings, after {@link #resolve}. */
    ExpireConfig config() {
        ExpireConfig c = new ExpireConfig().dryRun(dryRun).refuseIfTagsPin(refuseIfTagsPin);
        if (retainMin != null) {
            c.retainMin(retainMin.longValue());
        }
        if (retainMax != null) {
            c.retainMax(retainMax.longValue());
        }
        if (maxDeletes != null) {
            c.maxExpires(maxDeletes.longValue());
        }
        if (cleanEmptyDirs) {
            c.cleanEmptyDirs(true);
        }
        if (timeRetainedMs != null) {
            c.timeRetainedMs(timeRetainedMs.longValue());
        } else if (cutoffMs != null) {
            c.olderThanMs(cutoffMs.longValue());
        }
        return c;
    }
}
