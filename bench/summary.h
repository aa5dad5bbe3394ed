/* The rows of the one table scripts/bench prints once every benchmark has
 * run (issue 8: "one command runs them all and prints a table of ratios
 * against floors measured in the same run"). */
#pragma once

#include <glib.h>

typedef struct {
  const char *bench;       /* the benchmark: "boot" */
  const char *what;        /* what was measured: "boot-to-ready, amd64" */
  double value;            /* airlock's median, in @unit */
  const char *unit;        /* "s", "ms", "µs", "MB/s", "gates/min", "MiB", "x" */
  double floor;            /* the floor's median from the same run, in @unit; < 0: none */
  double ratio;            /* > 0: the ratio to show and judge (a paired estimate: the
                            * median of each round's ratio); 0: @value / @floor */
  const char *floor_what;  /* what the floor is: "bare QEMU, same kernel"; NULL: none */
  double target;           /* the target for the ratio (or the value, see @target_is_value); 0: none */
  gboolean target_is_value;  /* the target bounds @value, not @value / @floor */
  gboolean higher_is_better; /* the target is a lower bound (throughput), not an upper one */
} BenchSummaryRow;

/* Appends @row as one JSON line to the file $AIRLOCK_BENCH_SUMMARY names,
 * when that is set (scripts/bench sets it and prints the table at the
 * end); does nothing otherwise.  A row that cannot be written is reported
 * on stderr: the benchmark's own table already holds the number. */
void bench_summary_add (const BenchSummaryRow *row);
