/* Shared by the benchmarks (bench-common.h): boot, gate, clock, supervisor
 * and sinkhole each wrote their own copy of these. */
#include "bench-common.h"

#include <stdio.h>
#include <string.h>

gboolean
bench_parse_options (const char *name, const char *parameter_string, const GOptionEntry *entries,
                     int *argc, char ***argv)
{
  g_autoptr (GOptionContext) ctx = g_option_context_new (parameter_string);
  g_autoptr (GError) error = NULL;

  g_option_context_add_main_entries (ctx, entries, NULL);
  if (!g_option_context_parse (ctx, argc, argv, &error))
    {
      fprintf (stderr, "%s: %s\n", name, error->message);
      return FALSE;
    }
  return TRUE;
}

gboolean
bench_parse_arches (const char *name, const char *spec, AirlockArch ret_arches[AIRLOCK_N_ARCHES],
                    guint *ret_n)
{
  AirlockArch arch;

  if (!spec || g_str_equal (spec, "all"))
    {
      ret_arches[0] = AIRLOCK_ARCH_AMD64;
      ret_arches[1] = AIRLOCK_ARCH_ARM64;
      *ret_n = 2;
      return TRUE;
    }
  if (!airlock_arch_from_string (spec, &arch))
    {
      fprintf (stderr, "%s: unknown arch '%s' (expected amd64, arm64 or all)\n", name, spec);
      return FALSE;
    }
  ret_arches[0] = arch;
  *ret_n = 1;
  return TRUE;
}

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

guint
bench_count_other_qemus (void)
{
  g_autoptr (GDir) proc = g_dir_open ("/proc", 0, NULL);
  const char *entry;
  guint n = 0;

  while (proc && (entry = g_dir_read_name (proc)))
    {
      g_autofree char *stat_path = NULL;
      g_autofree char *stat = NULL;
      const char *close_paren;

      if (!g_ascii_isdigit (entry[0]))
        continue;
      stat_path = g_build_filename ("/proc", entry, "stat", NULL);
      if (!g_file_get_contents (stat_path, &stat, NULL, NULL)
          || !strstr (stat, "(qemu-system"))
        continue;
      /* A zombie waiting for its parent uses no CPU. */
      close_paren = strrchr (stat, ')');
      if (close_paren && close_paren[1] == ' ' && close_paren[2] != 'Z')
        n++;
    }
  return n;
}

guint
bench_wait_for_other_qemus (const char *name, int max_s)
{
  gint64 deadline = g_get_monotonic_time () + (gint64) max_s * G_USEC_PER_SEC;
  guint others = bench_count_other_qemus ();

  if (others > 0 && max_s > 0)
    fprintf (stderr, "%s: waiting up to %d s for %u other QEMU process(es) to end\n", name, max_s,
             others);
  while (others > 0 && g_get_monotonic_time () < deadline)
    {
      g_usleep (G_USEC_PER_SEC);
      others = bench_count_other_qemus ();
    }
  return others;
}

char *
bench_clean_sample_reference (const char *name)
{
  const char *dir = g_getenv ("AIRLOCK_SAMPLE_DIR");
  g_autofree char *path = NULL;

  if (!dir)
    {
      fprintf (stderr, "%s: give --image REF, or set AIRLOCK_SAMPLE_DIR (meson test "
               "--benchmark sets it to <build>/images/sample)\n", name);
      return NULL;
    }
  path = g_build_filename (dir, "clean", NULL);
  return g_strconcat ("oci:", path, NULL);
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

void
bench_print_cell (double value, int width, const char *unit)
{
  if (value < 0)
    printf (" %*s", width, "-");
  else
    printf (" %*.2f%s", width - (int) strlen (unit), value, unit);
}
