/* What several benchmarks do around their measurements: read their
 * command line, note the machine's load (a busy machine explains a noisy
 * run), wait for other QEMUs to end, find the clean sample image, report an
 * image build's progress one line per stage and print a table's cells.
 * Statistics live in stats.h. */
#pragma once

#include "airlock.h"

#include <glib.h>

/* Parses the command line into @entries, as g_option_context_parse() does
 * with @parameter_string after the program's name in --help.  Returns
 * FALSE after saying why on stderr, prefixed with @name ("bench/boot"):
 * every benchmark reports a bad option alike, and exits with its usage
 * status. */
gboolean bench_parse_options (const char *name, const char *parameter_string,
                              const GOptionEntry *entries, int *argc, char ***argv);

/* The arches --arch @spec names ("amd64", "arm64", or "all" and NULL for
 * both, in that order) in @ret_arches and their count in *@ret_n.  Returns
 * FALSE after saying on stderr (prefixed with @name) that @spec is none of
 * these: one spelling of --arch for every benchmark that boots both. */
gboolean bench_parse_arches (const char *name, const char *spec,
                             AirlockArch ret_arches[AIRLOCK_N_ARCHES], guint *ret_n);

/* /proc/loadavg's 1, 5 and 15 minute load averages as "a b c", or
 * "unknown".  Free with g_free(). */
char *bench_load_average (void);

/* The QEMU processes running now that are not zombies.  Other QEMUs compete
 * for the CPUs and make the numbers noisy; a benchmark's own are all gone
 * between its runs, so any QEMU seen then is someone else's. */
guint bench_count_other_qemus (void);

/* Waits up to @max_s seconds for other QEMUs to end, saying so on stderr
 * prefixed with @name ("bench/boot") when there are any.  Returns how many
 * still run. */
guint bench_wait_for_other_qemus (const char *name, int max_s);

/* "oci:$AIRLOCK_SAMPLE_DIR/clean", the image a benchmark gates when not
 * given --image; or NULL after saying on stderr (prefixed with @name) that
 * one of the two is needed.  Free with g_free(). */
char *bench_clean_sample_reference (const char *name);

/* The progress_data of bench_stage_progress: @name prefixes each line
 * ("bench/boot"); @last_stage is the stage last printed (owned: declare
 * the log g_auto (BenchStageLog), or call bench_stage_log_clear()). */
typedef struct {
  const char *name;
  char *last_stage;
} BenchStageLog;

void bench_stage_log_clear (BenchStageLog *log);
G_DEFINE_AUTO_CLEANUP_CLEAR_FUNC (BenchStageLog, bench_stage_log_clear)

/* An AirlockProgressFunc for image and disk builds: prints each stage once,
 * on stderr ("bench/boot: STAGE").  One line per stage: the output goes to
 * logs more often than to a terminal.  @user_data is a BenchStageLog. */
void bench_stage_progress (const char *stage, guint64 done, guint64 total, gpointer user_data);

/* Prints one table cell on stdout: a space, then @value with two decimals
 * and @unit ("s", "x", "ms") right-aligned in @width characters, or "-" when
 * @value is negative (not measured).  The tables' columns line up whatever
 * their unit. */
void bench_print_cell (double value, int width, const char *unit);
