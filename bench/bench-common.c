/* Shared by the benchmarks (bench-common.h): boot, gate, clock, supervisor
 * and sinkhole each wrote their own copy of these. */
#include "bench-common.h"

#include <stdio.h>

char *
bench_load_average (void)
{
  g_autofree char *text = NULL;
  g_auto (GStrv) fields = NULL;

  if (!g_file_get_contents ("/proc/loadavg", &text, NULL, NULL))
    return g_strdup ("unknown");
  fields = g_strsplit (g_strstrip (text), " ", 4);
  if (g_strv_length (fields) < 3)
    return g_strdup ("unknown");
  return g_strdup_printf ("%s %s %s", fields[0], fields[1], fields[2]);
}

void
bench_stage_progress (const char *stage, guint64 done, guint64 total, gpointer user_data)
{
  BenchStageLog *log = user_data;

  if (g_strcmp0 (log->last_stage, stage) == 0)
    return;
  fprintf (stderr, "%s: %s\n", log->name, stage);
  g_free (log->last_stage);
  log->last_stage = g_strdup (stage);
}

void
bench_stage_log_clear (BenchStageLog *log)
{
  g_clear_pointer (&log->last_stage, g_free);
}
