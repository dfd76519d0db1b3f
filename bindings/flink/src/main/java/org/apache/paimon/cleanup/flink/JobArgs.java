package org.apache.paimon.cleanup.flink;

import java.util.LinkedHashMap;
import java.util.Map;

import org.apache.paimon.cleanup.PaimonCleanup;
import org.apache.paimon.cleanup.PaimonCleanupException;

/**
 * The command line of {@link RemoveOrphanFiles}: the arguments of the CLI's {@code
 * remove-orphan-files} that apply to a table-wide run, plus {@code --parallelism} and {@code
 * --native-library}.
 */
final class JobArgs {
    static final String USAGE = String.join("\n",
            "usage: flink run [flink options] -c org.apache.paimon.cleanup.flink.RemoveOrphanFiles \\",
            "         paimon-cleanup-flink.jar TABLE [options]",
            "       java -cp <flink jars>:paimon-cleanup-java.jar:paimon-cleanup-flink.jar \\",
            "         org.apache.paimon.cleanup.flink.RemoveOrphanFiles TABLE [options]   (local MiniCluster)",
            "",
            "Removes the orphan files of a Paimon table (every branch) as Flink batch jobs: the listing",
            "and manifest-reading units and the deletions run in parallel tasks; planning and the",
            "decision in the JVM that runs main (the client, or the job manager in application mode).",
            "",
            "  TABLE                     table root: a path, file://, s3://, gs://, az:// URI",
            "  -o, --option KEY=VALUE    table or storage option (repeatable); also every storage key",
            "                            of the Flink configuration (s3.*, fs.s3a.*, fs.gs.*, fs.azure.*,",
            "                            flink.hadoop.* without its prefix; -o wins)",
            "  --older-than TEXT         only files older than this may be deleted (default 1 d): a",
            "                            timestamp ('2024-01-01 12:00:00', local zone unless it ends",
            "                            with one: Z, +08:00) or a duration back from now ('1 d')",
            "  --older-than-ms MS        absolute cut-off (epoch milliseconds, not in the future)",
            "  --no-writers-running      allow a cut-off within the last hour, up to now",
            "  --external-roots-owned    list and clean the table's external data roots too",
            "  --dry-run                 compute and report, change nothing",
            "  --parallelism N           parallel tasks of each stage (default: the environment's",
            "                            parallelism)",
            "  --native-library FILE     libpaimon_cleanup_jni.so: loaded by main and shipped to the",
            "                            tasks through Flink's distributed cache",
            "  --json                    print the report as the CLI's --json document",
            "  -h, --help                this text");

    String table;
    final Map<String, String> options = new LinkedHashMap<>();
    String olderThan;
    Long olderThanMs;
    boolean noWritersRunning;
    boolean externalRootsOwned;
    boolean dryRun;
    int parallelism;
    String nativeLibrary;
    boolean json;
    boolean help;

    private JobArgs() {}

    static String value(String[] argv, int i, String flag) {
        if (i >= argv.length) {
            throw new IllegalArgumentException(flag + " needs a value");
        }
        return argv[i];
    }

    /** Adds {@code KEY=VALUE} to {@code options}. */
    static void option(Map<String, String> options, String kv) {
        int k = kv.indexOf('=');
        if (k <= 0) {
            throw new IllegalArgumentException("option '" + kv + "' is not KEY=VALUE");
        }
        options.put(kv.substring(0, k), kv.substring(k + 1));
    }

    /** A positive number of {@code flag}. */
    static int positive(String flag, String v) {
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

    /** A number of {@code key} that is 0 or more. */
    static int positiveOrZero(String key, String v) {
        return "0".equals(v.trim()) ? 0 : positive(key, v);
    }

    /**
     * The syntax of the command line; {@code --older-than}'s text is read later by {@link
     * #cutoffMs} (with the library's parser, once the native library is loaded).
     *
     * @param argv the job's arguments
     * @param nowMs the current time, for the "not in the future" check of {@code --older-than-ms}
     * @throws IllegalArgumentException for anything the CLI would refuse as well
     */
    static JobArgs parse(String[] argv, long nowMs) {
        JobArgs a = new JobArgs();
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
                case "--older-than":
                    a.olderThan = inline != null ? inline : value(argv, ++i, arg);
                    break;
                case "--older-than-ms": {
                    String v = inline != null ? inline : value(argv, ++i, arg);
                    try {
                        a.olderThanMs = Long.valueOf(Long.parseLong(v.trim()));
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
                case "--parallelism":
                    a.parallelism = positive(arg, inline != null ? inline : value(argv, ++i, arg));
                    break;
                case "--native-library":
                    a.nativeLibrary = inline != null ? inline : value(argv, ++i, arg);
                    break;
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
        if (a.olderThan != null && a.olderThanMs != null) {
            throw new IllegalArgumentException("--older-than and --older-than-ms exclude each other");
        }
        if (a.olderThanMs != null && a.olderThanMs.longValue() > nowMs) {
            throw new IllegalArgumentException("--older-than-ms " + a.olderThanMs
                    + " is in the future (now is " + nowMs + " ms)");
        }
        return a;
    }

    /**
     * The cut-off: {@code --older-than-ms}, or {@code --older-than}'s text read by the library's
     * parser (the CLI's: the same forms, the process's local time zone), or null for the
     * library's default ({@code 1 d}). Needs the native library.
     *
     * @throws IllegalArgumentException for a text the CLI refuses
     */
    Long cutoffMs(long nowMs) {
        if (olderThan == null) {
            return olderThanMs;
        }
        try {
            return Long.valueOf(PaimonCleanup.parseOlderThan(olderThan, nowMs));
        } catch (PaimonCleanupException e) {
            throw new IllegalArgumentException("--older-than '" + olderThan + "': " + e.getMessage());
        }
    }
}
